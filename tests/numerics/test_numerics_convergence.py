"""Convergence of E_d[S] to the limit (fit_rate) and the smallest d for an ordering."""

import numpy as np
import pytest

from lnrecency.inference.stats import PER_COMPARISON, k_for, register
from lnrecency.model.config import ModelConfig
from lnrecency.numerics import convergence_in_d, smallest_d_for_ordering
from lnrecency.numerics.convergence import ConvergenceResult

RATE = PER_COMPARISON  # two-sided false-alarm rate per assertion, registered in the suite's budget
K_SE = k_for(RATE, sided=2)  # 4.9


def _synthetic(power, noise_rel=0.02, seed=0):
    """Biases c_e / d^power with Gaussian noise of known SE (relative noise_rel at the smallest d)."""
    rng = np.random.default_rng(seed)
    ds = (16, 32, 64, 128, 256)
    c = np.tril(rng.uniform(0.5, 2.0, size=(1, 4, 4)), -1)
    c[c == 0] = np.nan
    exact = np.stack([c / d ** power for d in ds])
    se = np.abs(exact[0]) * noise_rel * np.ones_like(exact)
    bias = exact + se * rng.standard_normal(exact.shape)
    return ConvergenceResult(ds, bias, se, np.zeros((1, 4, 4)), 1000, ModelConfig(norm="l2"), "gram")


@pytest.mark.parametrize("power", [1.0, 2.0])
def test_fit_rate_recovers_a_known_power_and_rejects_a_wrong_one(power):
    register(f"tests/fit_rate synthetic power={power}", 1, rate=RATE)
    fit = _synthetic(power).fit_rate()
    assert fit.entries == 6 and fit.points >= 12
    assert abs(fit.slope + power) <= K_SE * fit.stderr
    wrong = 2.0 if power == 1.0 else 1.0
    assert abs(fit.slope + wrong) > K_SE * fit.stderr


def test_fit_rate_needs_resolved_bias():
    r = _synthetic(1.0)
    r = ConvergenceResult(r.ds, r.bias * 0.0, r.stderr, r.limit, 1000, r.config, "gram")
    with pytest.raises(ValueError, match="min_z"):
        r.fit_rate()
    with pytest.raises(ValueError, match="min_z"):
        _synthetic(1.0).fit_rate(min_z=0)


def test_simulated_bias_is_order_one_over_d():
    """Layernorm, n = 5, 2 layers, d = 64..1024 (gram): slope -1.

    Tolerance K_SE * SE (Birge-inflated) + 0.05: the next order of the expansion, b = c1/d + c2/d^2,
    shifts the local slope by about -c2/(c1 d); |c2/c1| <= 3 at d >= 64 gives <= 0.047. The same
    check rejects the slopes -0.5 and -2 (a wrong rate)."""
    register("tests/simulated bias slope", 1, rate=RATE)
    r = convergence_in_d(5, 2, [64, 128, 256, 512, 1024], 40000, seed=3, norm="layernorm")
    assert r.bias.shape == r.stderr.shape == (5, 2, 5, 5)
    assert np.isnan(r.bias[:, :, 0, 1]).all()
    fit = r.fit_rate()
    tol = K_SE * fit.stderr + 0.05
    assert abs(fit.slope + 1.0) <= tol, fit
    assert abs(fit.slope + 0.5) > tol and abs(fit.slope + 2.0) > tol


def test_smallest_d_for_ordering_finds_recency_and_reports_evidence():
    # Layer-2 recency S_43 > S_42 under l2 (docs/model.md, claim T1); the reverse ordering never holds.
    # confidence 1 - RATE per width (one-sided), registered: 3 widths x 2 searches
    register("tests/smallest_d_for_ordering", 6, rate=RATE, sided=1)
    res = smallest_d_for_ordering(2, 4, 3, 2, ds=[64, 8, 16], samples=4000, seed=1, norm="l2",
                                  confidence=1 - RATE)
    assert [e.d for e in res.evidence] == [8, 16, 64]
    assert res.d is not None and res.d == min(e.d for e in res.evidence if e.holds)
    first = next(e for e in res.evidence if e.d == res.d)
    assert first.zscore > k_for(RATE, sided=1) and first.difference.mean > 0
    rev = smallest_d_for_ordering(2, 4, 2, 3, ds=[8, 16, 64], samples=4000, seed=1, norm="l2",
                                  confidence=1 - RATE)
    assert rev.d is None and not any(e.holds for e in rev.evidence)
    assert all(0.0 <= e.prob_greater.estimate <= 1.0 for e in rev.evidence)


@pytest.mark.parametrize("kwargs, words", [
    (dict(ds=[]), ["ds"]),
    (dict(ds=[8, 8]), ["ds", "repeat"]),
    (dict(ds=[1]), ["ds[]", ">= 2"]),
    (dict(j=2, k=2), ["differ"]),
    (dict(j=5), ["j", "5"]),
    (dict(confidence=1.0), ["confidence"]),
    (dict(samples=1), ["samples"]),
])
def test_ordering_bad_input(kwargs, words):
    args = dict(layer=2, i=4, j=3, k=2, ds=[8], samples=10, seed=0)
    args.update(kwargs)
    with pytest.raises(ValueError) as info:
        smallest_d_for_ordering(**args)
    for w in words:
        assert w in str(info.value)
