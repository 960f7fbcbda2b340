"""sympy closed forms of layer 1 and the layer-2 Gram entries (docs/model.md, "Worked example", "The d -> infinity
limit").

Everything is DERIVED here from the limit recursion, symbolically in the query index i and key index j:

    layer 1:  G = (1 - alpha) I + alpha 1 1^T (unit diagonal: a normalisation multiplies each token by
              its factor f = gain (1 for every built-in one), asked of the layer, lnrecency.model.layers),
              S_ik = lam f^2 G_ik,  P_ik = exp(S_ik) / sum_{m<=i} exp(S_im)       (softmax, summed by sympy)
    A = f P (no residual) or I + gamma f P (residual)
    layer 2:  G'_ij = sum_k sum_m A_ik A_jm G_km
                    = alpha (sum_k A_ik)(sum_m A_jm) + (1 - alpha) sum_k A_ik A_jk,
              every sum split into the ranges k < j, k = j, j < k < i, k = i and evaluated by
              ``sympy.summation``.
    g(i) = G'_ij (j < i; checked independent of j),  h2(j) = G'_jj,  h = sqrt(h2),
    S^(2)_ij = lam <N h_i, N h_j> = lam g(i) / (h(i) h(j)) (l2 / rmsnorm / layernorm: one limit; times
    gain^2 with a gain) or lam g(i) (norm "none"), S^(2)_ii = lam gain^2 (normalised) or lam h2(i) (none).

With E = e^lam, F = e^(lam alpha), Z_i = E + (i-1) F this gives (an independent hand derivation, which the sympy result
matches):
no residual g = (1-alpha) F/Z_i + alpha, h2 = (1-alpha)(E^2 + (j-1)F^2)/Z_j^2 + alpha; residual
g = alpha (1+gamma)^2 + (gamma + gamma^2)(1-alpha) F/Z_i,
h2 = 1 + 2 gamma (alpha + (1-alpha) E/Z_j) + gamma^2 (alpha + (1-alpha)(E^2 + (j-1)F^2)/Z_j^2).
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, fields
from typing import Any

import mpmath
import numpy as np
import sympy

from lnrecency.model.config import ModelConfig, as_fraction, make_config
from lnrecency.model.layers import NORMALISATIONS
from lnrecency.runtime.arguments import check_choice, check_int

__all__ = ["i", "j", "k", "alpha", "lam", "gamma", "ClosedForms", "closed_forms", "QUANTITIES",
           "evaluate", "numeric", "limit_value"]

i, j = sympy.symbols("i j", positive=True, integer=True)
k = sympy.Symbol("k", positive=True, integer=True)  # summation index
alpha = sympy.Symbol("alpha", nonnegative=True)
lam, gamma = sympy.symbols("lam gamma", positive=True)

QUANTITIES = ("p_diag", "p_off", "g", "h2", "h", "score", "score_diag")


@dataclass(frozen=True)
class ClosedForms:
    """Closed forms of one setting; p_diag, p_off, g in i; h2, h in j; score in (i, j), j < i."""

    residual: bool
    norm: str
    p_diag: sympy.Expr      # P^(1)_ii
    p_off: sympy.Expr       # P^(1)_ik, k < i
    g: sympy.Expr           # <x_i^(1), x_j^(1)>, j < i
    h2: sympy.Expr          # |x_j^(1)|^2
    h: sympy.Expr           # |x_j^(1)|
    score: sympy.Expr       # S^(2)_ij, j < i
    score_diag: sympy.Expr  # S^(2)_ii

    def as_dict(self) -> dict[str, sympy.Expr]:
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name in QUANTITIES}


def _row_sum(pieces: list[tuple[Any, Any, sympy.Expr]]) -> sympy.Expr:
    """sum over k of a row given as pieces (lo, hi, value) meaning value for lo <= k <= hi."""
    return sympy.Add(*[sympy.summation(v, (k, lo, hi)) for lo, hi, v in pieces])


def _layer1_weights(layer) -> tuple[sympy.Expr, sympy.Expr]:
    """(P_ii, P_ik for k < i) from the softmax of S_ik = lam <N x_i, N x_k>, the unit-length tokens' Gram
    G_ik = alpha + (1 - alpha) delta_ik normalised by the layer (lnrecency.model.layers: g^2 G_ik with a gain)."""
    one = sympy.Integer(1)
    s_diag = lam * layer.symbolic(one, one, one)  # = lam (gain 1)
    s_off = lam * layer.symbolic(alpha, one, one)
    z = _row_sum([(1, i - 1, sympy.exp(s_off)), (i, i, sympy.exp(s_diag))])
    return sympy.exp(s_diag) / z, sympy.exp(s_off) / z


def _row(q: sympy.Symbol, diag: sympy.Expr, off: sympy.Expr) -> dict[str, sympy.Expr]:
    return {"off": off.subs(i, q), "diag": diag.subs(i, q)}


def closed_forms(config: ModelConfig) -> ClosedForms:
    """The closed forms of the model family of ``config``: its normalisation and whether it has a residual.
    They are symbolic in i, j, alpha, lam and gamma, so ``config``'s values of these do not enter (any
    config of the family gives the same forms; derived once per family and cached). ``norm`` only changes
    the score."""
    if not isinstance(config, ModelConfig):
        raise TypeError(f"config must be a lnrecency ModelConfig; got {type(config).__name__}")
    return _derive(config.residual, config.norm)


@functools.lru_cache(maxsize=None)
def _derive(residual: bool, norm: str) -> ClosedForms:
    check_choice("norm", norm, tuple(NORMALISATIONS))
    layer = NORMALISATIONS[norm]  # the normalisation's own maps (lnrecency.model.layers), not its flags
    p_diag, p_off = _layer1_weights(layer)
    # o = P N x and N x = factor x for the unit-length tokens: A = factor P, or I + gamma factor P
    scale = (gamma if residual else sympy.Integer(1)) * layer.factor(sympy.Integer(1))
    a_diag = (1 if residual else 0) + scale * p_diag  # A_ii
    a_off = scale * p_off                                # A_ik, k < i
    ri, rj = _row(i, a_diag, a_off), _row(j, a_diag, a_off)
    # sum_k A_ik (row sums), for rows i and j
    sum_i = _row_sum([(1, i - 1, ri["off"]), (i, i, ri["diag"])])
    sum_j = _row_sum([(1, j - 1, rj["off"]), (j, j, rj["diag"])])
    # sum_k A_ik A_jk for j < i: k < j, k = j (A_jk = 0 for k > j)
    cross = _row_sum([(1, j - 1, ri["off"] * rj["off"]), (j, j, ri["off"] * rj["diag"])])
    # sum_k A_jk^2
    square_j = _row_sum([(1, j - 1, rj["off"] ** 2), (j, j, rj["diag"] ** 2)])
    g = sympy.factor(sympy.cancel(alpha * sum_i * sum_j + (1 - alpha) * cross))
    if g.has(j):
        raise ArithmeticError(f"layer-2 Gram entry should not depend on j; derived {g}")
    h2 = sympy.factor(sympy.cancel(alpha * sum_j ** 2 + (1 - alpha) * square_j))
    num, den = sympy.fraction(h2)
    # den = Z_j^2 with Z_j = E + (j-1)F > 0, so h = sqrt(num) / Z_j
    h = sympy.sqrt(num) / den.base if den.is_Pow and den.exp == 2 else sympy.sqrt(h2)
    score = lam * layer.symbolic(g, h.subs(j, i), h)
    score_diag = layer.diagonal_score(lam)
    if score_diag is None:
        score_diag = lam * h2.subs(j, i)
    return ClosedForms(residual, norm, p_diag, p_off, g, h2, h, score, sympy.sympify(score_diag))


@functools.lru_cache(maxsize=None)
def _lambdified(residual: bool, norm: str, quantity: str, module: str):
    expr = getattr(_derive(residual, norm), quantity)
    return sympy.lambdify((i, j, alpha, lam, gamma), expr, modules=module)


def evaluate(quantity: str, qi: Any, qj: Any = 1, *, config=None, dps: int | None = None,
             **params: Any) -> Any:
    """Numeric value of a closed form at query qi, key qj (float64 via numpy, or mpmath at ``dps``).

    ``qi``/``qj`` may be numpy arrays (float64 path). Model parameters come from ``config``/keywords.
    """
    check_choice("quantity", quantity, QUANTITIES)
    cfg = make_config(config, **params)
    _check_indices(quantity, qi, qj)
    if dps is not None:
        dps = check_int("dps", dps, minimum=1, maximum=100_000)
    if dps is None:
        f = _lambdified(cfg.residual, cfg.norm, quantity, "numpy")
        return f(qi, qj, float(cfg.alpha), float(cfg.lam), float(cfg.gamma))
    f = _lambdified(cfg.residual, cfg.norm, quantity, "mpmath")
    with mpmath.workdps(dps):
        num = [_mp(x) for x in (qi, qj, cfg.alpha, cfg.lam, cfg.gamma)]
        return +f(*num)


# the key index qj: ignored by the diagonal quantities (p_diag, score_diag); any key for h2 / h
_OFF_DIAGONAL = ("p_off", "g", "score")  # their closed forms are those of a key strictly before the query


def _check_indices(quantity: str, qi: Any, qj: Any) -> None:
    """Query and key positions are integers >= 1 (numpy arrays elementwise), with the key at or before the
    query where the quantity needs one (causal mask: S_ij is defined for j <= i)."""
    def ints(name: str, x: Any) -> np.ndarray:
        a = np.asarray(x)
        if a.dtype == object:  # sympy / mpmath integers
            try:
                a = np.asarray(np.vectorize(float, otypes=[float])(a))
            except (TypeError, ValueError):
                pass
        if a.dtype == object or a.dtype.kind not in "iuf" or a.size == 0:
            raise ValueError(f"{name} must be a position 1, 2, ... (or an array of them); got {x!r}")
        if not np.all(np.isfinite(a)) or np.any(a != np.floor(a)) or np.any(a < 1):
            raise ValueError(f"{name} must be positions 1, 2, ... (integers >= 1); got {x!r}")
        return a

    i_, j_ = ints("qi", qi), ints("qj", qj)
    if quantity in _OFF_DIAGONAL and np.any(j_ >= i_):
        raise ValueError(f"{quantity} needs qj < qi (a key before its query; the diagonal is "
                         f"{'p_diag' if quantity == 'p_off' else 'score_diag' if quantity == 'score' else 'h2'}); "
                         f"got qi={qi!r}, qj={qj!r}")


def _mp(x: Any) -> mpmath.mpf:
    if isinstance(x, (mpmath.mpf, int, float)):
        return mpmath.mpf(x)
    q = as_fraction(x)
    return mpmath.mpf(q.numerator) / q.denominator


def numeric(quantity: str, config: ModelConfig, module: str = "numpy"):
    """The lambdified closed form f(i, j, alpha, lam, gamma) of ``config``'s family (its norm and residual;
    its alpha, lam and gamma are the function's arguments, not read here), "numpy" or "mpmath" module."""
    check_choice("quantity", quantity, QUANTITIES)
    check_choice("module", module, ("numpy", "mpmath"))
    if not isinstance(config, ModelConfig):
        raise TypeError(f"config must be a lnrecency ModelConfig; got {type(config).__name__}")
    return _lambdified(config.residual, config.norm, quantity, module)


def limit_value(trajectory, quantity: str, qi: int, qj: int = 1) -> Any:
    """The same quantity read off a :class:`theory.limit.LimitTrajectory` (1-indexed qi, qj; j < i).

    p_diag = P^(1)_ii, p_off = P^(1)_ij, g = G^(2)_ij, h2 = G^(2)_jj, score = S^(2)_ij,
    score_diag = S^(2)_ii (score and score_diag need two layers); h is not stored (sqrt of h2).
    """
    check_choice("quantity", quantity, tuple(q for q in QUANTITIES if q != "h"))
    one = trajectory.layers[0]
    a, b = qi - 1, qj - 1
    if quantity == "p_diag":
        return one.weights[a, a]
    if quantity == "p_off":
        return one.weights[a, b]
    if quantity == "g":
        return one.next_gram[a, b]
    if quantity == "h2":
        return one.next_gram[b, b]
    layer2 = trajectory.layers[1]
    return layer2.scores[a, b] if quantity == "score" else layer2.scores[a, a]
