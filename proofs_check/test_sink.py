"""The attention sink in the parameter-free model (lnrecency.theory.sink, lnrecency.numerics.sink; issue 50).

* the limit with a logit bonus b on key 1 equals an independent Gram recursion written here, and the closed form of
  layer 2 (alpha = 0, no residual) to rounding; a closed form with one wrong exponent is rejected;
* the sign of the layer-2 slope over keys >= 2: sympy's derivative equals the stated numerator over a positive
  denominator; normalised, the numerator is j + e^{2b} + 2 e^{2 lam} - e^lam - 2 > 0 (j >= 2); without
  normalisation it is e^b - e^{2b} <= 0. So the statement "without normalisation, a sink gives recency" is refuted
  (its slope is shown negative at b > 0), and "normalised, the sink gives recency" confirmed at every b >= 0;
* the Monte Carlo at finite d agrees with the limit plus its O(1/d) correction measured at another width (k from
  the suite's budget; the stated bias bound is the second-order term, taken no larger than the first), and the same
  machinery rejects the limit of a wrong sink (bonus on the wrong key).
"""
from __future__ import annotations

import math

import numpy as np
import pytest
import sympy

from lnrecency.inference.budget import register
from lnrecency.numerics.sink import simulate_sink
from lnrecency.theory.sink import closed_form_layer2, sign_of_slope, sink_limit


def _independent(n: int, b: float, norm: str, lam: float, sink_key: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(layer-2 scores, layer-1 sink shares) of the alpha = 0, no-residual stack with a bonus b on ``sink_key``,
    written again from docs/model.md."""
    g = np.eye(n)
    scores, shares = [], []
    for _ in range(2):
        inv = 1 / np.sqrt(np.diag(g)) if norm != "none" else np.ones(n)
        s = lam * g * inv[:, None] * inv[None, :]
        p = np.zeros((n, n))
        for i in range(n):
            row = s[i, : i + 1].copy()
            if sink_key <= i:
                row[sink_key] += b
            e = np.exp(row - row.max())
            p[i, : i + 1] = e / e.sum()
        scores.append(np.where(np.tril(np.ones((n, n), dtype=bool)), s, np.nan))
        shares.append(p[:, 0])
        b_mat = p * inv[None, :]
        g = b_mat @ g @ b_mat.T
    return scores[1], shares[0]


@pytest.mark.parametrize("norm", ["layernorm", "none"])
@pytest.mark.parametrize("b", [0.0, 0.7, 3.0])
@pytest.mark.parametrize("lam", [0.5, 2.0])
def test_the_limit_equals_an_independent_recursion_and_the_closed_form(norm, b, lam):
    n = 10
    lim = sink_limit(n, 2, b=b, norm=norm, lam=lam)
    scores, shares = _independent(n, b, norm, lam)
    low = np.tril(np.ones((n, n), dtype=bool))
    assert np.allclose(lim.scores[1][low], scores[low], rtol=1e-12, atol=1e-14)
    assert np.allclose(lim.shares[0], shares, rtol=1e-12, atol=1e-15)
    f, share = closed_form_layer2(norm != "none", lam=sympy.nsimplify(lam), b=sympy.nsimplify(b))
    i, j = sympy.symbols("i j", positive=True)
    for ii in range(3, n + 1):
        assert math.isclose(float(share.subs(i, ii)), lim.shares[0, ii - 1], rel_tol=1e-12)
        for jj in range(2, ii):
            assert math.isclose(float(f.subs({i: ii, j: jj})), lim.scores[1, ii - 1, jj - 1], rel_tol=1e-12)


def test_a_closed_form_with_a_wrong_exponent_is_rejected():
    """e^b in place of e^{2b} in the output Gram's numerator (the sink's weight counted once, not squared)."""
    n, b, lam = 10, 1.5, 1.0
    lim = sink_limit(n, 2, b=b, norm="layernorm", lam=lam)
    e, big = math.exp(b), math.exp(lam)

    def wrong(i, j):
        z = lambda k: e + (k - 2) + big  # noqa: E731
        o = lambda k: (e ** 2 + (k - 2) + big ** 2) / z(k) ** 2  # noqa: E731
        return lam * (e + (j - 2) + big) / (z(i) * z(j)) / math.sqrt(o(i) * o(j))

    worst = max(abs(wrong(i, j) - lim.scores[1, i - 1, j - 1]) for i in range(3, n + 1) for j in range(2, i))
    assert worst > 1e-2


@pytest.mark.parametrize("normalised", [True, False])
def test_the_sign_of_the_layer2_slope_is_proved(normalised):
    r = sign_of_slope(normalised)
    assert r["check"] is True  # sympy's d log f / dj equals the stated numerator over a positive denominator
    j, lam, b = (sympy.Symbol("j", positive=True), sympy.Symbol("lam", positive=True),
                 sympy.Symbol("b", nonnegative=True))
    num = r["numerator"]
    if normalised:
        # j + e^{2b} + 2 x^2 - x - 2 with x = e^lam: (j - 2) >= 0, e^{2b} >= 1, and 2 x^2 - x + 1 > 0 (no real root)
        x = sympy.Symbol("x", positive=True)
        rest = sympy.expand(num.subs(sympy.exp(lam), x) - (j - 2) - sympy.exp(2 * b))
        assert sympy.expand(rest - (2 * x**2 - x)) == 0 and sympy.discriminant(2 * x**2 - x + 1, x) < 0
    else:
        assert sympy.simplify(num - sympy.exp(b) * (1 - sympy.exp(b))) == 0  # <= 0 for b >= 0, 0 at b = 0
    # and on the limit itself: normalised slopes > 0 at every b, unnormalised < 0 for b > 0 (flat at b = 0)
    for bb in (0.0, 0.5, 2.0, 5.0):
        slope = sink_limit(16, 2, b=bb, norm="layernorm" if normalised else "none").slope(2)
        if normalised:
            assert slope > 0
        elif bb == 0:
            assert abs(slope) < 1e-15
        else:
            assert slope < 0


@pytest.mark.parametrize("norm", ["layernorm", "none"])
def test_the_monte_carlo_agrees_with_the_limit_plus_its_first_order_correction(norm):
    n, b, d0, d = 12, 1.0, 128, 1024
    lim = sink_limit(n, 2, b=b, norm=norm)
    k = register(f"sink: Monte Carlo slope vs limit + c/d [{norm}]", 1, sided=2)
    near = simulate_sink(n, 2, d0, 40_000, b=b, seed=21, norm=norm)
    far = simulate_sink(n, 2, d, 40_000, b=b, seed=22, norm=norm)
    c = d0 * (near.slopes[1] - lim.slope(2))  # the O(1/d) coefficient, measured at d0
    se = math.hypot(far.slopes_se[1], d0 * near.slopes_se[1] / d)
    # stated bias: the second-order remainder R/d^2 with |R| <= |c| d0 (it is |c| d0 / d0^2 at d0: taken no larger
    # than the first-order term there), and the error of c from it, both at d
    bias = 2 * abs(c) * d0 / d**2
    gap = far.slopes[1] - (lim.slope(2) + c / d)
    assert abs(gap) <= k * se + bias, (gap, k * se + bias)
    # the same machinery says no: the limit of a sink on the last key instead of the first
    wrong, _ = _independent(n, b, norm, 1.0, sink_key=n - 1)
    from lnrecency.inference.recency_slope import layer_slope

    gap_wrong = far.slopes[1] - (layer_slope(wrong, skip=1) + c / d)
    assert abs(gap_wrong) > k * se + bias


# ---- the read-out of the first token (issue 67, item 4) ---------------------------------------------------------

def _coordinate_by_vectors(n: int, b: float, lam: float, gamma: float, normalised: bool) -> np.ndarray:
    """c_j with explicit vectors (independent of the Gram recursion): orthonormal tokens e_k in R^n (alpha = 0, where
    the limit's layer-1 normalised states are the tokens), layer-1 scores lam e_i . e_j with the bonus b on key 1,
    h_j = e_j + gamma sum_k P_jk e_k, then h_j's coordinate along e_1 after dividing by |h_j| (or not)."""
    e = np.eye(n)
    s = lam * e @ e.T
    s[:, 0] += b
    s[np.triu_indices(n, 1)] = -np.inf
    p = np.exp(s - s.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    h = e + gamma * p @ e
    if normalised:
        h = h / np.linalg.norm(h, axis=1, keepdims=True)
    c = h[:, 0].copy()
    c[0] = np.nan
    return c


@pytest.mark.parametrize("norm, b, gamma", [("l2", 2.078, 1.0), ("layernorm", 0.5, 1.0), ("none", 1.0, 1.0),
                                            ("l2", 1.0, 0.5)])
def test_the_first_tokens_coordinate_equals_explicit_vectors(norm, b, gamma):
    from lnrecency.theory.sink import bos_coordinate

    c = bos_coordinate(12, b=b, norm=norm, residual=True, gamma=gamma)
    want = _coordinate_by_vectors(12, b, 1.0, gamma, normalised=norm != "none")
    assert np.allclose(c[1:], want[1:], rtol=1e-12, atol=1e-14)
    wrong = _coordinate_by_vectors(12, b, 1.0, gamma, normalised=norm == "none")  # the scale divided out or not
    assert not np.allclose(c[1:], wrong[1:], rtol=1e-6)


def test_the_read_out_slope_is_the_sink_slope_plus_the_gain_times_the_coordinates_slope():
    from lnrecency.inference.recency_slope import layer_slope
    from lnrecency.theory.sink import bos_coordinate, readout_slope, sink_limit

    base = sink_limit(64, 2, b=2.078, norm="layernorm", residual=True).slope(2)
    assert base == pytest.approx(-0.0011, abs=5e-5)  # the parameter-free prediction in the models' own setting
    per_key = layer_slope(np.tile(bos_coordinate(64, b=2.078, norm="layernorm", residual=True), (64, 1)), skip=1)
    assert per_key < 0  # the coordinate decays with the key, as the share does
    for gain in (0.0, -12.5, 3.0):
        assert readout_slope(64, b=2.078, gain=gain, norm="layernorm", residual=True) == pytest.approx(
            base + gain * per_key, rel=1e-12, abs=1e-15)
    with pytest.raises(ValueError, match="alpha = 0"):
        bos_coordinate(8, b=1.0, norm="layernorm", alpha=0.5)
