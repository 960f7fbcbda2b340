"""Unit tests of the exact limit recursion theory.limit (float64, mpmath and sympy from one code path)."""
import math

import mpmath
import numpy as np
import pytest
import sympy

from lnrecency.model.config import ModelConfig
from lnrecency.theory.limit import limit_scores, limit_trajectory

E = math.e


def _vector_limit(n, layers, *, norm, residual, gamma, lam, alpha):
    """Independent implementation: realise G^(1) by explicit vectors (Cholesky rows) and run the layer
    on the vectors themselves, as a d = n network with the exact Gram (no Gram recursion involved)."""
    g1 = (1 - alpha) * np.eye(n) + alpha * np.ones((n, n))
    h = np.linalg.cholesky(g1)  # rows are vectors with Gram g1
    out = []
    for _ in range(layers):
        nh = h / np.linalg.norm(h, axis=1, keepdims=True) if norm != "none" else h
        s = lam * nh @ nh.T
        layer = np.full((n, n), np.nan)
        o = np.zeros_like(h)
        for i in range(n):
            w = np.exp(s[i, : i + 1] - s[i, : i + 1].max())
            w /= w.sum()
            layer[i, : i + 1] = s[i, : i + 1]
            o[i] = w @ nh[: i + 1]
        out.append(layer)
        h = h + gamma * o if residual else o
    return np.array(out)


CONFIGS = [
    dict(norm="layernorm", residual=False, gamma=1.0, lam=1.0, alpha=0.0),
    dict(norm="l2", residual=True, gamma=1.0, lam=1.0, alpha=0.2),
    dict(norm="none", residual=False, gamma=1.0, lam=2.5, alpha=0.5),
    dict(norm="none", residual=True, gamma=0.7, lam=0.3, alpha=0.9),
    dict(norm="rmsnorm", residual=True, gamma=8.0, lam=8.0, alpha=0.35),
]


@pytest.mark.parametrize("cfg", CONFIGS)
def test_shape_and_nan_layout(cfg):
    s = limit_scores(7, 3, **cfg)
    assert s.shape == (3, 7, 7) and s.dtype == np.float64
    upper = np.triu(np.ones((7, 7), bool), 1)
    assert np.isnan(s[:, upper]).all()
    assert np.isfinite(s[:, ~upper]).all()


@pytest.mark.parametrize("cfg", CONFIGS)
def test_matches_independent_vector_implementation(cfg):
    # Both are float64 evaluations of the same exact quantity; 1e-11 covers rounding over 4 layers.
    ours = limit_scores(12, 4, **cfg)
    ref = _vector_limit(12, 4, **cfg)
    np.testing.assert_allclose(ours, ref, rtol=1e-11, atol=1e-13)


def test_worked_example_of_spec():
    # docs/model.md, worked example: alpha = 0, lam = 1, no residual: S2_ij = g(i)/(h(i)h(j)), g(i) = 1/(e+i-1),
    # h(j)^2 = (e^2+j-1)/(e+j-1)^2; and P_ii = e/(e+i-1) at layer 1.
    n = 9
    tr = limit_trajectory(n, 2, norm="l2", residual=False)
    g = lambda i: 1 / (E + i - 1)
    h = lambda j: math.sqrt((E * E + j - 1) / (E + j - 1) ** 2)
    for i in range(1, n + 1):
        assert tr.weights[0, i - 1, i - 1] == pytest.approx(E / (E + i - 1), rel=1e-14)
        for j in range(1, i):
            assert tr.scores[1, i - 1, j - 1] == pytest.approx(g(i) / (h(i) * h(j)), rel=1e-13)
    # without normalisation the layer-2 score is g(i) itself (flat in j)
    s_none = limit_scores(n, 2, norm="none")
    for i in range(2, n + 1):
        np.testing.assert_allclose(s_none[1, i - 1, : i - 1], g(i), rtol=1e-13)


def test_normalisations_share_one_limit():
    a = limit_scores(10, 3, norm="l2", residual=True, alpha=0.3)
    for norm in ("rmsnorm", "layernorm"):
        np.testing.assert_array_equal(limit_scores(10, 3, norm=norm, residual=True, alpha=0.3), a)


@pytest.mark.parametrize("cfg", CONFIGS)
def test_mpmath_agrees_with_float(cfg):
    f = limit_scores(6, 3, **cfg)
    m = limit_scores(6, 3, dps=30, **cfg)
    assert m.dtype == object and isinstance(m[2][5][1], mpmath.mpf)
    assert mpmath.isnan(m[0][0][1])
    mf = np.array([[[float(x) for x in row] for row in layer] for layer in m])
    np.testing.assert_allclose(mf, f, rtol=1e-12, atol=1e-14)


def test_mpmath_precision_is_real():
    # dps = 50 against dps = 80 of the same recursion: agreement far beyond float64 (1e-45).
    cfg = dict(norm="layernorm", residual=True, gamma=1.5, lam=2.0, alpha=mpmath.mpf(1) / 3)
    a = limit_scores(5, 4, dps=50, **cfg)
    b = limit_scores(5, 4, dps=80, **cfg)
    for layer in range(4):
        for i in range(5):
            for j in range(i + 1):
                assert abs(a[layer][i][j] - b[layer][i][j]) <= mpmath.mpf("1e-45") * abs(b[layer][i][j])


def test_exact_sympy_path_matches_float():
    tr = limit_trajectory(4, 2, exact=True, norm="l2", residual=True, alpha=sympy.Rational(1, 5))
    x = tr.scores[1][3][1]
    assert isinstance(x, sympy.Basic)
    f = limit_scores(4, 2, norm="l2", residual=True, alpha=0.2)
    assert float(sympy.N(x, 30)) == pytest.approx(f[1, 3, 1], rel=1e-13)
    # the exact layer-1 weight
    assert sympy.simplify(tr.weights[0][2][0] - sympy.exp(sympy.Rational(1, 5))
                          / (sympy.E + 2 * sympy.exp(sympy.Rational(1, 5)))) == 0


def test_large_inverse_temperature_does_not_overflow():
    s = limit_scores(16, 3, lam=1e4, alpha=0.2, residual=True)
    for layer in s:
        assert np.isfinite(layer[np.tril_indices(16)]).all()


def test_trajectory_quantities_are_consistent():
    tr = limit_trajectory(8, 3, norm="layernorm", residual=True, gamma=0.5, alpha=0.1)
    assert tr.scores.shape == tr.weights.shape == tr.grams.shape == (3, 8, 8)
    np.testing.assert_allclose(tr.weights.sum(axis=2), 1.0, rtol=1e-14)
    assert np.all(np.triu(tr.weights[0], 1) == 0)
    # output norms are |o_i| = sqrt(O_ii); layer l+1 starts from layer l's next state
    np.testing.assert_allclose(tr.output_norms[1] ** 2, np.diagonal(tr.output_grams[1]), rtol=1e-14)
    np.testing.assert_array_equal(tr.layers[0].next_gram, tr.layers[1].gram)
    # seed 002: first layer, alpha = 0, |o_i|^2 = sum_k P_ik^2
    t0 = limit_trajectory(8, 1, norm="l2")
    np.testing.assert_allclose(t0.output_norms[0] ** 2, (t0.weights[0] ** 2).sum(axis=1), rtol=1e-14)


def test_config_and_keywords():
    cfg = ModelConfig(norm="l2", residual=True, alpha=0.2)
    np.testing.assert_array_equal(limit_scores(5, 2, config=cfg),
                                  limit_scores(5, 2, norm="l2", residual=True, alpha=0.2))
    with pytest.raises(ValueError, match="either as config= or as keywords"):
        limit_scores(5, 2, config=cfg, alpha=0.3)


@pytest.mark.parametrize("kwargs, match", [
    (dict(n=0, layers=2), "n must be an integer >= 1"),
    (dict(n=2.5, layers=2), "n must be an integer"),
    (dict(n=4, layers=0), "layers must be an integer >= 1"),
    (dict(n=4, layers=True), "layers must be an integer"),
    (dict(n=4, layers=2, alpha=1.0), r"alpha must be in \[0, 1\)"),
    (dict(n=4, layers=2, lam=0.0), "lam must be in"),
    (dict(n=4, layers=2, gamma=-1.0), "gamma must be in"),
    (dict(n=4, layers=2, norm="batch"), "norm must be one of"),
    (dict(n=4, layers=2, dps=1), "dps must be an integer in \\[2, 10000\\]"),
    (dict(n=4, layers=2, dps=20.5), "dps must be an integer"),
])
def test_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        limit_scores(**kwargs)


def test_exact_and_dps_are_exclusive():
    with pytest.raises(ValueError, match="dps must be None when exact=True"):
        limit_trajectory(3, 1, exact=True, dps=30)
