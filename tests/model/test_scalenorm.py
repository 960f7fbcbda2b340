"""A test-only normalisation with a gain, ScaleNorm N(h) = g h / |h| (g = 2): one definition (the entry
below) runs through the limit (every number system), both Monte Carlo samplers, the sympy closed forms and
the finite-width theory, because each of them asks the layer (lnrecency.model.layers.Normalisation: gram,
vectors, symbolic, factor, fixed_length / diagonal_score) instead of branching on its flags.

The reference is an identity derived by hand, not read off the code: with a gain g, the scores are
lam g^2 <x_i/|x_i|, x_j/|x_j|> and the attention output is g times l2's, so ScaleNorm(lam, gamma) is l2 with
lam' = lam g^2 and gamma' = gamma g (residual; without a residual the factor g of the state is removed by
the next normalisation). A normalisation that forgets its gain in one map fails these tests.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
import sympy

from lnrecency.model.config import ModelConfig
from lnrecency.model.layers import NORMALISATIONS, Normalisation
from lnrecency.numerics import simulate_scores
from lnrecency.theory import closed_forms as cf
from lnrecency.theory.finite_width import finite_difference_c, finite_width
from lnrecency.theory.limit import limit_scores

G = 2
SCALE = Normalisation("scalenorm", centres=False, scales=True, gain=G)


@dataclass(frozen=True)
class ForgetsGainInGram(Normalisation):
    """A wrong layer: its Gram map (the limit's) drops the gain its vector map applies."""

    def gram(self, g, ar):
        inv = 1 / ar.sqrt(ar.diagonal(g))
        return g * ar.outer(inv, inv), inv


@pytest.fixture
def register(monkeypatch):
    def add(layer):
        monkeypatch.setitem(NORMALISATIONS, layer.name, layer)
        cf._derive.cache_clear()
        cf._lambdified.cache_clear()
    yield add
    cf._derive.cache_clear()
    cf._lambdified.cache_clear()


SETTINGS = [dict(residual=False, lam=0.7, alpha=0.3), dict(residual=True, gamma=0.8, lam=0.5, alpha=0.6)]


def _pair(setting):
    """(ScaleNorm config, the l2 config it must equal)."""
    s = dict(setting)
    equal = dict(s, lam=s["lam"] * G * G, **({"gamma": s["gamma"] * G} if s["residual"] else {}))
    return ModelConfig(norm="scalenorm", **s), ModelConfig(norm="l2", **equal)


@pytest.mark.parametrize("setting", SETTINGS)
def test_limit_in_every_number_system(register, setting):
    register(SCALE)
    cfg, l2 = _pair(setting)
    ours = limit_scores(6, 3, config=cfg)
    # the same real numbers by two float64 paths (g applied to each token vs lam g^2): they differ by the
    # rounding of a few dozen operations on O(1) values, ~1e-15; 1e-13 is above that and far below any
    # real error (a gain forgotten changes scores by O(1))
    np.testing.assert_allclose(ours, limit_scores(6, 3, config=l2), rtol=1e-13, atol=1e-14)
    assert np.allclose(np.diagonal(ours, axis1=1, axis2=2), cfg.lam * G * G)  # S_ii = lam g^2
    mp = limit_scores(6, 3, config=cfg, dps=30)
    assert abs(float(mp[2, 5, 1]) - ours[2, 5, 1]) < 1e-13
    rational = {k: sympy.nsimplify(getattr(cfg, k)) for k in ("lam", "alpha", "gamma")}
    exact = limit_scores(3, 2, config=cfg.replace(**rational), exact=True)
    assert abs(float(exact[1, 2, 0]) - limit_scores(3, 2, config=cfg)[1, 2, 0]) < 1e-13


@pytest.mark.parametrize("method", ["direct", "gram"])
@pytest.mark.parametrize("setting", SETTINGS)
def test_both_samplers_draw_for_draw(register, setting, method):
    """The same seed gives the same draws, so the estimates equal l2's at lam g^2 up to rounding."""
    register(SCALE)
    cfg, l2 = _pair(setting)
    a = simulate_scores(5, 2, 32, 200, seed=3, method=method, config=cfg, progress=False)
    b = simulate_scores(5, 2, 32, 200, seed=3, method=method, config=l2, progress=False)
    # the same draws, so no sampling error: only float64 rounding of the per-draw scores (~1e-15) summed
    # over 200 draws; the SE, a difference of nearly equal second moments, loses a few more digits
    np.testing.assert_allclose(a.mean, b.mean, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(a.stderr, b.stderr, rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize("residual", [False, True])
def test_closed_forms(register, residual):
    register(SCALE)
    ours = cf.closed_forms(ModelConfig(norm="scalenorm", residual=residual))
    l2 = cf.closed_forms(ModelConfig(norm="l2", residual=residual))
    to_l2 = {cf.lam: cf.lam * G * G, cf.gamma: cf.gamma * G}
    for q in ("p_diag", "p_off", "score"):
        assert sympy.simplify(getattr(ours, q) - getattr(l2, q).subs(to_l2, simultaneous=True)) == 0, q
    assert sympy.simplify(ours.score_diag - G * G * cf.lam) == 0
    # ... and numerically equal to the limit recursion of the same layer
    cfg = ModelConfig(norm="scalenorm", residual=residual, gamma=0.8, lam=0.7, alpha=0.3)
    s = limit_scores(6, 2, config=cfg)
    got = cf.evaluate("score", 6, 2, config=cfg)
    assert abs(got - s[1, 5, 1]) < 1e-12


@pytest.mark.parametrize("setting", SETTINGS)
def test_finite_width(register, setting):
    register(SCALE)
    cfg, l2 = _pair(setting)
    fw, ref = finite_width(5, 3, config=cfg), finite_width(5, 3, config=l2)
    m = ~np.isnan(ref.c)
    # the jets of two float64 paths of the same function: rounding of their ~1e3 operations (~1e-13)
    np.testing.assert_allclose(fw.c[m], ref.c[m], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(fw.variance, ref.variance, rtol=1e-9, atol=1e-12, equal_nan=True)
    assert np.all(np.diagonal(fw.c, axis1=1, axis2=2) == 0)  # S_ii = lam g^2 at every width
    fd = finite_difference_c(4, 2, config=cfg)  # the jets against mpmath finite differences
    c = finite_width(4, 2, config=cfg).c
    k = ~np.isnan(fd)
    assert np.all(np.abs(c[k] - fd[k]) <= 1e-10 * np.maximum(1.0, np.abs(fd[k])))


def test_a_layer_that_forgets_its_gain_is_caught(register):
    """The same checks say no: the limit of a layer whose Gram map drops the gain no longer equals its
    own samplers' estimate (nor l2 at lam g^2)."""
    wrong = ForgetsGainInGram("forgetful", centres=False, scales=True, gain=G)
    register(SCALE)
    register(wrong)
    cfg, l2 = _pair(SETTINGS[0])
    cfg = cfg.replace(norm="forgetful")
    lim = limit_scores(5, 2, config=cfg)
    assert np.max(np.abs(lim - limit_scores(5, 2, config=l2))[~np.isnan(lim)]) > 0.1
    mc = simulate_scores(5, 2, 10 ** 12, 2000, seed=4, method="gram", config=cfg, progress=False)
    z = np.abs(mc.mean - lim)[1] / np.maximum(mc.stderr[1], 1e-300)
    assert np.nanmax(z[np.tril(np.ones((5, 5), bool), k=-1)]) > 100
