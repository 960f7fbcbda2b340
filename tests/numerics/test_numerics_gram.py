"""The d-independent Bartlett (gram) sampler equals the direct sampler in distribution at small d.

Two-sample Kolmogorov-Smirnov tests (scipy.stats.ks_2samp) on per-instance statistics drawn with fixed,
different seeds, so every test is deterministic. Level PER_COMPARISON = 1e-6 per statistic (scipy's
asymptotic KS p-value: registered on the "normal" (asymptotic) basis); 2 configurations x 3 widths
x 4 statistics = 24 KS tests, registered in the suite's false-alarm budget (lnrecency.inference.stats.BUDGET): the
chance that a correct sampler fails this file is <= 2.4e-5 (Bonferroni).
Power: the same tests, at the same level, reject two deliberately wrong samplers at d = 8 (their
smallest p-values are about 2e-14 and 4e-14 with these seeds and 20000 samples per side).
"""
import pytest
from scipy import stats

import lnrecency.numerics.simulate as simulate
from lnrecency.inference.stats import PER_COMPARISON, register
from lnrecency.numerics import sample_instances
from lnrecency.numerics.samplers import Representation

LEVEL = PER_COMPARISON
SAMPLES = 20000
CONFIGS = {
    "layernorm": dict(norm="layernorm"),
    "layernorm-res-aniso": dict(norm="layernorm", residual=True, gamma=2.0, lam=3.0, alpha=0.3,
                                embedding="normalized"),
}


def _statistics(inst):
    s, o = inst.scores, inst.output_sq_norm
    return {
        "S2_43": s[:, 1, 3, 2],
        "S2_42-S2_41": s[:, 1, 3, 1] - s[:, 1, 3, 0],  # a paired difference
        "|o1_4|^2": o[:, 0, 3],
        "|o2_4|^2": o[:, 1, 3],
    }


def _pvalues(d, params, *, gram_seed, gram_params=None):
    direct = sample_instances(4, 2, d, SAMPLES, seed=(1, d), method="direct", **params)
    gram = sample_instances(4, 2, d, SAMPLES, seed=(gram_seed, d), method="gram",
                            **(gram_params or params))
    a, b = _statistics(direct), _statistics(gram)
    return {k: stats.ks_2samp(a[k], b[k]).pvalue for k in a}


@pytest.mark.parametrize("d", [8, 16, 32])
@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_gram_equals_direct_in_distribution(name, d):
    assert Representation(4, d, "gram").bartlett  # d - 1 >= n + 1: the Bartlett form is used
    register(f"tests/gram-vs-direct KS {name} d={d}", 4, rate=LEVEL)
    p = _pvalues(d, CONFIGS[name], gram_seed=2)
    assert min(p.values()) > LEVEL, p


class _WrongDof(Representation):
    """Deliberately wrong: Bartlett diagonal chi2(d - k + 1) instead of chi2(d - k) (d - 1 -> d dof)."""

    def __init__(self, n, d, method):
        super().__init__(n, d, method)
        if self.bartlett:
            self._df = self._df + 1.0


def test_power_wrong_chi2_dof_is_rejected(monkeypatch):
    monkeypatch.setattr(simulate, "Representation", _WrongDof)
    p = _pvalues(8, CONFIGS["layernorm"], gram_seed=3)
    assert min(p.values()) < LEVEL, p


def test_power_l2_instead_of_layernorm_centring_is_rejected():
    p = _pvalues(8, CONFIGS["layernorm"], gram_seed=4, gram_params=dict(norm="l2"))
    assert min(p.values()) < LEVEL, p


def test_small_d_uses_direct_coordinates():
    """d - 1 < n + 1: the Wishart is singular; gram then draws the d direct coordinates (same law)."""
    rep = Representation(10, 8, "gram")
    assert not rep.bartlett and rep.dim == 8
    r = simulate.simulate_scores(10, 2, 8, 50, seed=0, method="gram")
    assert r.method == "gram" and r.representation == "direct"
    big = Representation(10, 10**6, "gram")
    assert big.bartlett and big.dim == 12
