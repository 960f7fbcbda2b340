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


# -- the equivalence power's integral (lnrecency.inference.seed_tests.equivalence_power) ----------------------
def _reference(lam: float, crit: float, df: float) -> float:
    """Adaptive quadrature of the same expectation, on the integrand's own support [0, top] only (written here)."""
    from scipy.integrate import quad
    from scipy.stats import chi2, norm

    top = min(df * (lam / crit) ** 2, chi2.isf(1e-12, df))
    f = lambda v: max(0.0, 2 * norm.cdf(lam - crit * math.sqrt(v / df)) - 1) * chi2.pdf(v, df)  # noqa: E731
    return quad(f, 0.0, top, limit=1000, epsabs=1e-15, epsrel=1e-13)[0]


#: agreement bound: the 256-point rule against adaptive quadrature, measured at 1.3e-14 over this grid; 1e-11 leaves
#: room for scipy's own tolerance (epsrel 1e-13) and platform rounding, and is 10^4 below any power we report
AGREE = 1e-11
GRID = [(lam, crit, df) for lam in (0.5, 1, 3, 8, 30) for crit in (1.5, 4.0, 12) for df in (1.05, 1.3, 2, 5, 30, 100)]


def test_the_equivalence_power_integral_agrees_with_adaptive_quadrature():
    from lnrecency.inference.seed_tests import equivalence_power

    reference = {c: _reference(*c) for c in GRID}  # once per point (scalar scipy in quad: the slow part)
    worst = max(abs(equivalence_power(*c) - reference[c]) for c in GRID)
    assert worst <= AGREE, worst
    # the narrow-support case that whole-range quadrature (the former code) returned as 0: positive, and right
    assert equivalence_power(0.5, 2.4, 2.0) == pytest.approx(_reference(0.5, 2.4, 2.0), abs=AGREE) and \
        equivalence_power(0.5, 2.4, 2.0) > 1e-3
    # the same comparison says no to a wrong integrand (V / df read as V)
    wrong = [abs(equivalence_power(lam, crit * math.sqrt(df), df) - reference[(lam, crit, df)])
             for lam, crit, df in GRID if df != 1]
    assert max(wrong) > 1e3 * AGREE
    assert equivalence_power(0.0, 2.0, 4.0) == 0.0 and math.isnan(equivalence_power(math.nan, 2.0, 4.0))


def test_the_detectable_effect_is_computed_once_per_test_and_level():
    from lnrecency.inference import seed_tests

    test = SeedTest(_standard(7), rule="equivalence", side="within", margin=0.1)
    seed_tests.detectable_effect.cache_clear()
    first = test.detectable(ALPHA)
    assert test.detectable(ALPHA) == first and seed_tests.detectable_effect.cache_info().hits == 1
    assert test.power(first, ALPHA) == pytest.approx(POWER, abs=1e-9)
