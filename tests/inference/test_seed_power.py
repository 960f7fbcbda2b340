"""The power a seed test reports is the power it has: checked against simulation, with the normal-shift shortcut
(t_{1-a/2} + t_POWER) se rejected by the same simulation; and a test with no spread, or too few seeds, decides
nothing.

Tolerance: each simulated power is a binomial proportion over REPS draws; the check is |simulated - stated| <= k SE
with k from the suite's false-alarm budget (two-sided, per-comparison rate 1e-6), no bias term (the stated power is
exact for normal values with the measured SE taken as the true one, which is how the simulation draws them).
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import t as student

from lnrecency.inference.stats import BUDGET, PER_COMPARISON, POWER, SeedTest, register

REPS = 40_000
N = 5  # training seeds: df = 4
ALPHA = 0.0025  # the pair's share at a family threshold (0.05 over 20 tests)


def _standard(n: int) -> tuple:
    """n values with sample mean 0 and sample SD exactly 1 (so the test's se is 1 / sqrt(n))."""
    v = np.linspace(-1.0, 1.0, n)
    return tuple((v - v.mean()) / v.std(ddof=1))


def _directional_rate(effect: float, rng) -> float:
    x = rng.normal(effect, 1.0, size=(REPS, N))
    tstat = x.mean(1) / (x.std(1, ddof=1) / math.sqrt(N))
    return float(np.mean(tstat > student.isf(ALPHA / 2, N - 1)))


def _tost_rate(margin: float, rng) -> float:
    x = rng.normal(0.0, 1.0, size=(REPS, N))
    se = x.std(1, ddof=1) / math.sqrt(N)
    crit = student.isf(ALPHA / 2, N - 1)
    return float(np.mean(((x.mean(1) + margin) / se > crit) & ((margin - x.mean(1)) / se > crit)))


def _k(name: str) -> float:
    return register(f"tests/seed power: {name}", 1, rate=PER_COMPARISON)


@pytest.mark.parametrize("rule", ["directional", "equivalence"])
def test_the_stated_power_is_the_simulated_power_and_the_shortcut_is_rejected(rule):
    rng = np.random.default_rng(20261125)
    kw = {} if rule == "directional" else {"rule": "equivalence", "side": "within", "margin": 1.0}
    test = SeedTest(_standard(N), **kw)
    effect = test.detectable(ALPHA)
    assert test.power(effect, ALPHA) == pytest.approx(POWER, abs=1e-9)
    rate = _directional_rate if rule == "directional" else _tost_rate
    sim = rate(effect, rng)
    se = math.sqrt(POWER * (1 - POWER) / REPS)
    k = _k(f"{rule} stated")
    assert abs(sim - POWER) <= k * se, (sim, POWER, k * se)
    # the shortcut the project stated before: the same simulation says no
    q = student.ppf(POWER if rule == "directional" else 0.5 + POWER / 2, N - 1)
    shortcut = (student.isf(ALPHA / 2, N - 1) + q) * test.se
    sim_short = rate(shortcut, rng)
    with BUDGET.expecting_rejection():  # a miss is this check's risk, not a false alarm
        assert POWER - sim_short > _k(f"{rule} shortcut") * se, (sim_short, POWER)


@pytest.mark.parametrize("values, other", [((1, 1, 1), None), ((1, 1), None), ((0.5, 0.5, 0.5, 0.5), None),
                                           ((1, 2, 3), (4, 5)), ((2.0, 2.0, 2.0), (2.0, 2.0, 2.0))])
def test_no_confirmation_from_zero_variance_or_fewer_than_three_values(values, other):
    t = SeedTest(values, other=other)
    assert not t.decidable
    assert math.isnan(t.p_confirm) and math.isnan(t.p_refute) and math.isnan(t.p_pair)


def test_the_neighbour_with_spread_and_three_values_decides():
    t = SeedTest((1.0, 1.1, 0.9))
    assert t.decidable and t.p_confirm < 0.01 and t.p_refute > 0.99
