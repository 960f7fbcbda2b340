"""The sympy closed forms (theory.closed_forms) against the exact limit recursion (theory.limit).

Three comparisons, one function each, used unchanged by the power tests (mutated closed forms):
- exact: sympy recursion (exact=True), n <= 8, difference brought to a rational function in positive
  generators (theory.formula.generator_form) and cancelled: must be 0. The score contains square roots:
  its square is compared exactly and its sign in float.
- float64, n = 200, rtol 1e-12. Justification: every Gram entry of the recursion is a sum of at most
  2n^2 products of nonnegative numbers (alpha >= 0, P >= 0), softmax sums n positive terms; the relative
  rounding error of such sums is at most about (2n + 10) u = 410 * 1.1e-16 = 4.5e-14 for n = 200; the
  lambdified closed form has a few dozen operations with cancellation factor <= ~20 (e.g. h2 at j = 1:
  |terms| / result <= 13), i.e. <= ~1e-14. 1e-12 is 20x above the sum of both bounds, and a mutant
  changes values by >= 1e-4 relative (checked by the power tests).
- mpmath, dps = 50: same argument with u = 1e-50 gives <= ~1e-46; tolerance 1e-45.
"""
from __future__ import annotations

import mpmath
import numpy as np
import pytest
import sympy
from sympy import Rational as R

from lnrecency.model.config import ModelConfig
from lnrecency.theory import closed_forms as cf
from lnrecency.theory.closed_forms import alpha, gamma, i, j, lam
from lnrecency.theory.formula import is_identically_zero
from lnrecency.theory.limit import limit_trajectory

E_, F_ = sympy.exp(lam), sympy.exp(lam * alpha)


def Z(q):
    return E_ + (q - 1) * F_


# The lead's hand derivation (issue brief), typed in: an independent check of the sympy derivation.
HAND = {
    False: {"g": (1 - alpha) * F_ / Z(i) + alpha,
            "h2": (1 - alpha) * (E_ ** 2 + (j - 1) * F_ ** 2) / Z(j) ** 2 + alpha},
    True: {"g": alpha * (1 + gamma) ** 2 + (gamma + gamma ** 2) * (1 - alpha) * F_ / Z(i),
           "h2": 1 + 2 * gamma * (alpha + (1 - alpha) * E_ / Z(j))
           + gamma ** 2 * (alpha + (1 - alpha) * (E_ ** 2 + (j - 1) * F_ ** 2) / Z(j) ** 2)},
}


def _pairs(quantity, n):
    if quantity == "p_diag":
        return [(q, q) for q in range(1, n + 1)]
    if quantity == "h2":
        return [(n, q) for q in range(1, n + 1)]
    return [(a, b) for a in range(2, n + 1) for b in range(1, a)]


def exact_mismatches(expr, quantity, traj, params, *, first=False):
    """(i, j) where the closed form ``expr`` differs from the exact recursion (empty: equal);
    ``first``: stop at the first one."""
    subs = {alpha: params["alpha"], lam: params["lam"], gamma: params["gamma"]}
    bad = []
    for qi, qj in _pairs(quantity, traj.n):
        value = sympy.sympify(expr).subs(subs).subs({i: qi, j: qj})
        ref = cf.limit_value(traj, quantity, qi, qj if quantity != "p_diag" else qi)
        if quantity == "score":
            same = is_identically_zero(value ** 2 - ref ** 2) and \
                np.sign(float(value)) == np.sign(float(ref))
        else:
            same = is_identically_zero(value - ref)
        if not same:
            bad.append((qi, qj))
            if first:
                break
    return bad


def numeric_mismatches(expr, quantity, traj, params, *, rtol, module):
    """(i, j) where |closed - recursion| > rtol |recursion| in float64 or mpmath (``module``)."""
    f = sympy.lambdify((i, j, alpha, lam, gamma), expr, modules=module)
    conv = (lambda x: float(x)) if module == "numpy" else (lambda x: mpmath.mpf(x.p) / x.q)
    par = [conv(params[k]) for k in ("alpha", "lam", "gamma")]
    bad = []
    for qi, qj in _pairs(quantity, traj.n):
        ref = cf.limit_value(traj, quantity, qi, qj if quantity != "p_diag" else qi)
        value = f(qi, qj, *par)
        if not abs(value - ref) <= rtol * abs(ref):
            bad.append((qi, qj))
    return bad


PARAMS = [dict(alpha=R(1, 3), lam=R(3, 2), gamma=R(2, 5)), dict(alpha=R(0), lam=R(1), gamma=R(1)),
          dict(alpha=R(7, 10), lam=R(5, 2), gamma=R(3))]
QUANT = ("p_diag", "p_off", "g", "h2")


@pytest.mark.parametrize("residual", [False, True])
def test_derivation_matches_hand_formulas(residual):
    c = cf.closed_forms(ModelConfig(norm="layernorm", residual=residual))
    for q in ("g", "h2"):
        assert is_identically_zero(getattr(c, q) - HAND[residual][q]), q
    assert not c.g.has(j)
    assert is_identically_zero(c.h ** 2 - c.h2)


@pytest.mark.parametrize("residual", [False, True])
@pytest.mark.parametrize("params", PARAMS)
def test_layer1_and_gram_exact(residual, params):
    traj = limit_trajectory(8, 1, exact=True, norm="l2", residual=residual, **params)
    c = cf.closed_forms(ModelConfig(norm="l2", residual=residual))
    for q in QUANT:
        assert exact_mismatches(getattr(c, q), q, traj, params) == [], q


@pytest.mark.parametrize("residual, norm, params", [
    # residual l2 (5 s of sympy) in the thorough profile; by default its layer-2 score is checked against the
    # recursion at 1e-45 (mpmath, test_mpmath_dps50) and 1e-12 (float64, n = 200), its layer 1 exactly
    (False, "l2", PARAMS[0]), pytest.param(True, "l2", PARAMS[0], marks=pytest.mark.thorough),
    (False, "none", PARAMS[2]), (True, "none", PARAMS[1])])
def test_layer2_score_exact(residual, norm, params):
    traj = limit_trajectory(5, 2, exact=True, norm=norm, residual=residual, **params)
    c = cf.closed_forms(ModelConfig(norm=norm, residual=residual))
    assert exact_mismatches(c.score, "score", traj, params) == []
    assert exact_mismatches(c.score_diag, "score_diag", traj, params) == []


@pytest.mark.parametrize("norm", ["none", "l2", "rmsnorm", "layernorm"])
@pytest.mark.parametrize("residual", [False, True])
def test_float64_n200(norm, residual):
    params = PARAMS[0] if residual else PARAMS[2]
    traj = limit_trajectory(200, 2, norm=norm, residual=residual, **{k: float(v) for k, v in params.items()})
    c = cf.closed_forms(ModelConfig(norm=norm, residual=residual))
    for q in QUANT + ("score", "score_diag"):
        assert numeric_mismatches(getattr(c, q), q, traj, params, rtol=1e-12, module="numpy") == [], q


@pytest.mark.parametrize("residual", [False, True])
def test_mpmath_dps50(residual):
    params = PARAMS[0]
    traj = limit_trajectory(24, 2, norm="l2", residual=residual, dps=50, **params)
    c = cf.closed_forms(ModelConfig(norm="l2", residual=residual))
    with mpmath.workdps(50):
        for q in QUANT + ("score",):
            assert numeric_mismatches(getattr(c, q), q, traj, params, rtol=mpmath.mpf("1e-45"),
                                      module="mpmath") == [], q


def test_evaluate_helpers():
    v = cf.evaluate("score", np.array([3.0, 5.0]), np.array([1.0, 2.0]), norm="l2", residual=True)
    ref = limit_trajectory(5, 2, norm="l2", residual=True).scores[1]
    assert np.allclose(v, [ref[2, 0], ref[4, 1]], rtol=1e-13, atol=0)
    m = cf.evaluate("h2", 4, 3, dps=40, residual=True, alpha=0.25)
    assert abs(m - limit_trajectory(4, 1, residual=True, alpha=0.25, dps=40).layers[0].next_gram[2, 2]) \
        < mpmath.mpf("1e-38")
    with pytest.raises(ValueError, match="quantity"):
        cf.evaluate("nope", 2, 1)
    with pytest.raises(ValueError, match="alpha"):
        cf.evaluate("g", 2, 1, alpha=1.0)


# ---- power: mutated closed forms are rejected by the same comparison functions ----
def _mutants(residual):
    g, h2 = HAND[residual]["g"], HAND[residual]["h2"]
    if not residual:
        g_m = {"changed constant": (1 - alpha) * F_ / (E_ + (i - 2) * F_) + alpha,
               "dropped term": (1 - alpha) * F_ / Z(i),
               "wrong exponent": (1 - alpha) * F_ ** 2 / Z(i) + alpha,
               "swapped sign": (1 - alpha) * F_ / Z(i) - alpha}
        h2_m = {"changed constant": (1 - alpha) * (E_ ** 2 + (j - 1) * F_ ** 2) / Z(j) ** 2 + 2 * alpha,
                "dropped term": (1 - alpha) * E_ ** 2 / Z(j) ** 2 + alpha,
                "wrong exponent": (1 - alpha) * (E_ ** 2 + (j - 1) * F_) / Z(j) ** 2 + alpha,
                "swapped sign": (1 - alpha) * (E_ ** 2 - (j - 1) * F_ ** 2) / Z(j) ** 2 + alpha}
    else:
        g_m = {"changed constant": alpha * (2 + gamma) ** 2 + (gamma + gamma ** 2) * (1 - alpha) * F_ / Z(i),
               "dropped term": alpha * (1 + gamma) ** 2 + gamma * (1 - alpha) * F_ / Z(i),
               "wrong exponent": alpha * (1 + gamma) + (gamma + gamma ** 2) * (1 - alpha) * F_ / Z(i),
               "swapped sign": alpha * (1 - gamma) ** 2 + (gamma + gamma ** 2) * (1 - alpha) * F_ / Z(i)}
        h2_m = {"changed constant": h2 + 1,
                "dropped term": h2 - gamma ** 2 * alpha,
                "wrong exponent": h2.subs(gamma ** 2, gamma ** 3),
                "swapped sign": h2 - 4 * gamma * (alpha + (1 - alpha) * E_ / Z(j))}
    sc = lam * g / sympy.sqrt(h2.subs(j, i) * h2)
    sc_m = {"changed constant": 2 * sc, "dropped term": lam * g / sympy.sqrt(h2.subs(j, i)),
            "wrong exponent": lam * g / (h2.subs(j, i) * h2),
            "swapped sign": lam * g / sympy.sqrt(h2.subs(j, i) * h2) * (-1)}
    return {"g": g_m, "h2": h2_m, "score": sc_m}


@pytest.mark.parametrize("residual", [False, True])
def test_power_mutants_rejected(residual):
    params = PARAMS[0]
    exact = limit_trajectory(4, 2, exact=True, norm="l2", residual=residual, **params)
    flt = limit_trajectory(200, 2, norm="l2", residual=residual, **{k: float(v) for k, v in params.items()})
    for quantity, mutants in _mutants(residual).items():
        for kind, expr in mutants.items():
            assert exact_mismatches(expr, quantity, exact, params, first=True) != [], (quantity, kind)
            assert numeric_mismatches(expr, quantity, flt, params, rtol=1e-12, module="numpy") != [], \
                (quantity, kind)
