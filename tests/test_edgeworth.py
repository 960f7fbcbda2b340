"""The beyond-first-order term of the finite-width theory (lnrecency.theory.finite_width, "Beyond first
order"): the leading third cumulant t = lim d^2 kappa_3(S_ij - S_ik) against the Monte Carlo k-statistic, and
the one-term Edgeworth probability built on it.

Tolerance: the k-statistic of each of B = 40 batches; their mean and its SE (Student t with 39 degrees of
freedom at the two-sided PER_COMPARISON rate, registered). The width bias is O(1/d) relative: we compare
the two-width extrapolation a = (4 y(1024) - y(256)) / 3 (y = d^2 k3), whose remainder is O(1/d^2), and
allow |y(1024) - y(256)| / 3 for it (the whole O(1/d) term at d = 1024, a bound on the O(1/d^2) remainder
while the series is in its asymptotic regime, which the two widths agreeing within it shows).
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from lnrecency.config import ModelConfig
from lnrecency.numerics import sample_instances
from lnrecency.stats import PER_COMPARISON, register
from lnrecency.theory.finite_width import finite_width, third_cumulant

BATCHES = 40
SAMPLES = 200_000
CASES = [  # (config, (layer, i, j, k)): the LayerNorm setting and an RMSNorm one
    (ModelConfig(norm="layernorm", residual=False, alpha=0.6, lam=1.5), (2, 7, 6, 5)),
    (ModelConfig(norm="rmsnorm", residual=False, alpha=0.2, lam=2.0), (3, 6, 5, 1)),
]


def _k3(cfg, key, d, seed):
    """(mean, SE) over batches of d^2 k_3 of S_ij - S_ik at width d."""
    layer, i, j, k = key
    inst = sample_instances(7, layer, d, SAMPLES, seed=seed, method="gram", config=cfg)
    x = (inst.scores[:, layer - 1, i - 1, j - 1] - inst.scores[:, layer - 1, i - 1, k - 1]) * d
    per = np.array([stats.kstat(b, 3) for b in x.reshape(BATCHES, -1)]) / d
    return per.mean(), per.std(ddof=1) / math.sqrt(BATCHES)


@pytest.fixture(scope="module")
def measured():
    out = []
    for q, (cfg, key) in enumerate(CASES):
        fw = finite_width(7, key[0], config=cfg)
        (y1, s1), (y4, s4) = _k3(cfg, key, 256, 11 + q), _k3(cfg, key, 1024, 21 + q)
        a, se = (4 * y4 - y1) / 3, math.hypot(4 * s4, s1) / 3
        out.append((fw, key, a, se, abs(y4 - y1) / 3))
    return out


def _agrees(t, a, se, bias, k):
    return abs(a - t) <= k * se + bias


def test_third_cumulant_matches_the_monte_carlo(measured):
    k = register("tests/edgeworth: third cumulant", len(CASES), rate=PER_COMPARISON)
    k = float(stats.t.ppf(1 - stats.norm.sf(k), BATCHES - 1))  # the same rate for the t statistic
    for fw, key, a, se, bias in measured:
        t = fw.third_cumulant([key])[0]
        assert _agrees(t, a, se, bias, k), (key, t, a, se, bias)


def test_third_cumulant_check_rejects_wrong_coefficients(measured):
    """The same comparison, at a stricter k, rejects t with the factor 3 of 3 Cum(L, L, Q) dropped
    (8 tr + 8 F2) and t without that term (8 tr: the Wishart sum alone), in both cases."""
    k = float(stats.t.ppf(1 - PER_COMPARISON / 2, BATCHES - 1))
    for fw, key, a, se, bias in measured:
        tr3, f2 = third_cumulant(fw, [fw._idx(*key)], parts=True)
        assert not _agrees(8 * tr3[0] + 8 * f2[0], a, se, bias, k)
        assert not _agrees(8 * tr3[0], a, se, bias, k)


def test_edgeworth_probability_on_a_symmetric_and_a_known_case():
    """Exact statements the expansion must keep: P(S_ij > S_ik) + P(S_ik > S_ij) = 1 (t changes sign with
    the difference); at layer 1 every pair below the diagonal is exchangeable (P = 1/2 exactly)."""
    cfg, key = CASES[0]
    fw = finite_width(7, 2, config=cfg)
    p = fw.prob_greater_edgeworth([key, (key[0], key[1], key[3], key[2])], 64)
    assert p.sum() == pytest.approx(1.0, abs=1e-12)
    assert fw.prob_greater_edgeworth([(1, 6, 4, 2)], 16)[0] == pytest.approx(0.5, abs=1e-12)


def test_edgeworth_refuses_what_it_does_not_cover():
    fw = finite_width(4, 1, config=ModelConfig(norm="l2", alpha=0.2, embedding="normalized"))
    with pytest.raises(ValueError, match="embedding"):
        fw.prob_greater_edgeworth([(1, 4, 3, 1)], 64)
