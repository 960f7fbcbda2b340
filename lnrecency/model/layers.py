"""The layers of the model M(norm, residual, lam, gamma, alpha), each defined once (docs/model.md, "Model").

Every piece carries, side by side, its finite-width map on vectors (used by both Monte Carlo samplers)
and its d -> infinity map on Gram matrices (used by the limit recursion in every number system,
including the Taylor jets of the finite-width theory):

  normalisation N        vectors (..., n, D) -> N(h)          Gram G -> (Gh, g D^(-1/2))
                         none: h                               Gh = G (no D)
                         l2 / rmsnorm: h / |h|                 Gh = D^(-1/2) G D^(-1/2), D = diag G
                         (a gain g: g h / |h|, ScaleNorm)      Gh = g^2 D^(-1/2) G D^(-1/2)
                         layernorm: c / |c|, c = h - <u,h> u   same as l2; the centring removes one of
                                    (u = ones / sqrt(d))       the d directions (see ``removed``)
  attention              S = lam N N^T (j <= i), P = causal softmax(S), o = P N      O = P Gh P^T
  update                 h' = o  or  h + gamma o               G' = B G B^T  or  (I + gamma B) G (I + gamma B)^T,
                                                               B = P D^(-1/2)

Why one map serves both worlds: all operations are inner products, linear combinations and the
projection on u, so the scores of a draw are an exact function of the Gram matrix of the vectors the
normalisation sees. For LayerNorm with Gaussian embeddings that Gram matrix is the one of the centred
tokens P_u x_i (the residual stream stays centred up to P_u x: attention outputs are combinations of
centred vectors), which is Wishart with d - ``removed`` = d - 1 degrees of freedom instead of d. The
limit is the recursion started at the mean input Gram G0; a finite-width draw is the same recursion
started at its own Gram matrix (:mod:`lnrecency.theory.finite_width` uses this).

The Gram sampler (:mod:`lnrecency.numerics.samplers`) represents the vectors in reduced coordinates,
which is exact only if N commutes with every rotation fixing u: :func:`check_rotation_invariance`
tests that numerically for a normalisation before the sampler uses it.

A new normalisation of the same kind (centre or not, scale or not) is one new entry of
:data:`NORMALISATIONS`; another kind subclasses :class:`Normalisation` and overrides both maps.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import numpy as np
import sympy

from lnrecency.model.arithmetic import Arithmetic, Jet, JetArithmetic, arithmetic, as_fraction, causal_mask

__all__ = ["Normalisation", "NORMALISATIONS", "Update", "UPDATES", "Arithmetic", "arithmetic", "Jet", "JetArithmetic",
           "check_rotation_invariance", "causal_mask", "as_fraction"]


# --------------------------------------------------------------------------------------------------
# Normalisations
# --------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Normalisation:
    """N, applied before every attention layer.

    ``centres``: remove the component along u = ones / sqrt(d) (LayerNorm's mean subtraction);
    ``scales``: divide by the length (l2, rmsnorm, layernorm: rms(h) sqrt(d) = |h|);
    ``gain``: a fixed factor g after the scaling, N(h) = g h / |h| (ScaleNorm; 1 for the others);
    ``rotation_invariant``: N(Q h) = Q N(h) for every rotation Q fixing u (declared; the Gram
    sampler also tests it, :func:`check_rotation_invariance`).

    Consumers ask the layer rather than branching on its flags: :meth:`gram` (the limit, every number
    system, the jets), :meth:`vectors` (both samplers), :meth:`symbolic` (the closed forms) and
    :attr:`fixed_length` / :meth:`diagonal_score` (where S_ii is deterministic: the finite-width theory
    and the convergence fit).
    """

    name: str
    centres: bool
    scales: bool
    rotation_invariant: bool = True
    gain: float = 1  # a number (int, float, Fraction; sympy's in the exact paths), never text: it is sympified

    def __post_init__(self) -> None:
        import numbers

        if isinstance(self.gain, (bool, str, bytes)) or not isinstance(self.gain, (numbers.Number, sympy.Basic)):
            raise ValueError(f"gain must be a number; got {type(self.gain).__name__} {str(self.gain)[:40]!r}")

    @property
    def fixed_length(self) -> bool:
        """|N(h)| is the same for every h (= gain): S_ii = lam gain^2 exactly, at every width."""
        return self.scales

    def diagonal_score(self, lam: Any) -> Any:
        """S_ii = lam |N h_i|^2 where it is deterministic (:attr:`fixed_length`); None otherwise."""
        return lam * self.gain * self.gain if self.fixed_length else None

    def factor(self, length: Any) -> Any:
        """N h = factor h for a token of length ``length`` (sympy): g / length when scaling, else 1."""
        return sympy.sympify(self.gain) / length if self.scales else sympy.Integer(1)

    def symbolic(self, g_ij: Any, h_i: Any, h_j: Any) -> Any:
        """The normalised Gram entry <N h_i, N h_j> in sympy from G_ij and the lengths h_i = |h_i|, h_j
        (the closed forms): g^2 G_ij / (h_i h_j) when scaling, else G_ij."""
        return self.factor(h_i) * self.factor(h_j) * g_ij

    @property
    def removed(self) -> int:
        """Directions of R^d the normalisation discards (1 for LayerNorm): the Gram matrix it sees is
        Wishart with d - removed degrees of freedom."""
        return 1 if self.centres else 0

    def vectors(self, h: np.ndarray, u: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """Finite width: N(h) along the last axis; ``u`` is the unit vector the centring removes. ``out``: where a
        scaling normalisation writes (the same numbers; without scaling the result is h or its centred copy)."""
        if self.centres:
            h = h - (h @ u)[..., None] * u
        if not self.scales:
            return h
        return np.multiply((self.gain / np.sqrt(np.einsum("...d,...d->...", h, h)))[..., None], h, out=out)

    def gram(self, g, ar: Arithmetic):
        """d -> infinity: (Gh, g D^(-1/2)) from the state Gram G (None without scaling): the token i is
        multiplied by g / sqrt(G_ii), so Gh = g^2 D^(-1/2) G D^(-1/2).

        The centring does not appear: at d = infinity it removes a vanishing part of every vector; at
        finite d its effect is the law of the input Gram (``removed``)."""
        if not self.scales:
            return g, None
        inv = 1 / ar.sqrt(ar.diagonal(g))
        if self.gain != 1:
            inv = inv * ar.number(self.gain)
        return g * ar.outer(inv, inv), inv


#: every normalisation the model knows, by name (ModelConfig.norm takes these keys).
NORMALISATIONS: dict[str, Normalisation] = {
    "none": Normalisation("none", centres=False, scales=False),
    "l2": Normalisation("l2", centres=False, scales=True),
    "rmsnorm": Normalisation("rmsnorm", centres=False, scales=True),  # h / rms(h) / sqrt(d) = h / |h|
    "layernorm": Normalisation("layernorm", centres=True, scales=True),
}


# --------------------------------------------------------------------------------------------------
# Update rules
# --------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Update:
    """The next state: h' = o (``residual=False``) or h' = h + gamma o."""

    residual: bool

    def vectors(self, h: np.ndarray, o: np.ndarray, gamma: float, out: np.ndarray | None = None) -> np.ndarray:
        """Finite width: the next state; ``out`` (may be ``h``): where the residual sum is written."""
        if not self.residual:
            return o
        return np.add(h, o if gamma == 1 else gamma * o, out=out)

    def gram(self, g, b, gamma):
        """(O, G') from G and B = P D^(-1/2): O = B G B^T = P Gh P^T and
        G' = O, or G + gamma (B G + (B G)^T) + gamma^2 O (residual)."""
        m = b @ g
        o = m @ b.T
        if self.residual:
            return o, g + gamma * (m + m.T) + gamma * gamma * o
        return o, o


UPDATES = {False: Update(False), True: Update(True)}


# --------------------------------------------------------------------------------------------------
# The premise of the Gram sampler
# --------------------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=None)
def check_rotation_invariance(norm: Normalisation, *, d: int = 7, tol: float = 1e-10) -> None:
    """Raise ValueError unless N(h Q^T) = N(h) Q^T for random rotations Q fixing u = ones / sqrt(d).

    The reduced (Bartlett) coordinates of the Gram sampler are exact only for such N. Deterministic
    (fixed seed); ``tol`` is far above float64 rounding (~1e-15) and far below any real failure (O(1)).
    """
    if not norm.rotation_invariant:
        raise ValueError(f"normalisation {norm.name!r} is not declared rotation invariant: the Gram "
                         f"sampler cannot represent it; use method='direct'")
    rng = np.random.default_rng(12345)
    u = np.full(d, 1 / np.sqrt(d))
    basis = np.linalg.qr(np.column_stack([u, rng.standard_normal((d, d - 1))]))[0][:, 1:]  # u-perp
    h = rng.standard_normal((3, d))
    for _ in range(3):
        o = np.linalg.qr(rng.standard_normal((d - 1, d - 1)))[0]
        q = np.outer(u, u) + basis @ o @ basis.T
        err = np.max(np.abs(norm.vectors(h @ q.T, u) - norm.vectors(h, u) @ q.T))
        if not err < tol:
            raise ValueError(f"normalisation {norm.name!r} does not commute with rotations fixing u "
                             f"(error {err:.3g}): the Gram sampler would be silently wrong; use "
                             f"method='direct'")
