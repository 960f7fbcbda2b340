"""The number systems every layer's Gram map runs in, side by side: float64 (numpy), mpmath (any precision), sympy
(exact), and Taylor jets (a value with its first and second derivatives in the directions of a fluctuation,
which the finite-width theory reads c and v from). :func:`arithmetic` picks one; :func:`causal_mask` is shared."""
from __future__ import annotations

import functools
import numbers
from fractions import Fraction
from typing import Any

import mpmath
import numpy as np
import sympy


# --------------------------------------------------------------------------------------------------
# Number systems: the elementwise arithmetic the Gram maps are written in.
# --------------------------------------------------------------------------------------------------
class Arithmetic:
    """float64 (numpy). Arrays are numpy arrays; subclasses use object arrays or jets."""

    name = "float64"
    dtype: Any = np.float64

    def number(self, value: Any) -> Any:
        return float(value)

    def exp(self, x):
        return np.exp(x)

    def sqrt(self, x):
        return np.sqrt(x)

    @property
    def nan(self) -> Any:
        return np.nan

    def diagonal(self, g):
        """diag(G) as a vector (a copy)."""
        return np.diagonal(g, axis1=-2, axis2=-1).copy()

    def outer(self, a, b):
        """a_i b_j over the last axes."""
        return a[..., :, None] * b[..., None, :]

    #: a row whose masked exponentials all fall below this under the full-row shift is recomputed
    UNDERFLOW = 1e-200

    def causal_softmax(self, s, mask, *, diagonal_is_max: bool = False, out=None):
        """Row softmax over j <= i (``mask``), each row shifted so that no exponential overflows.

        The shift is the row's largest entry over all j, a bound of the masked maximum (one reduction instead
        of a masked copy and its reduction, and no exp of -inf: 1.4x faster on the Monte Carlo's (32, 50, 50)
        batches); a row whose masked part sits so far below its unmasked part that its exponentials underflow
        (sum below UNDERFLOW: a gap of about 460 in the scores) is recomputed with its masked maximum.
        ``diagonal_is_max``: the caller knows S_ii >= S_ij (tokens of equal length and lam > 0, so
        Cauchy-Schwarz), and the diagonal is the shift (no reduction at all: 1.6x faster again); every row
        then holds exp(0) = 1 and cannot underflow; a non-finite result falls back to the general shift.
        ``out``: an array shaped like ``s`` (not ``s``) the weights are written into (the same numbers)."""
        if diagonal_is_max:
            w = np.subtract(s, np.diagonal(s, axis1=-2, axis2=-1)[..., None], out=out)
            with np.errstate(over="ignore"):  # an overflow means the premise failed: caught below
                np.exp(w, out=w)
            np.multiply(w, mask, out=w)
            z = w @ np.ones((w.shape[-1], 1))
            if np.all(np.isfinite(z)):
                w /= z
                return w
        w = np.subtract(s, s.max(axis=-1, keepdims=True), out=out)
        np.exp(w, out=w)
        np.multiply(w, mask, out=w)
        z = w @ np.ones((w.shape[-1], 1))  # the row sums (a product: 4x faster than a reduction on short rows)
        low = z[..., 0] < self.UNDERFLOW
        if np.any(low):
            rows = np.where(mask, s, -np.inf)[low]
            rows -= rows.max(axis=-1, keepdims=True)
            np.exp(rows, out=rows)
            w[low] = rows
            z[low] = rows.sum(axis=-1, keepdims=True)
        w /= z
        return w

    def masked_scores(self, s, mask):
        """S on j <= i, NaN above the diagonal."""
        return np.where(mask, s, self.nan)


class _ObjectArithmetic(Arithmetic):
    """Object arrays of a scalar type; subclasses set the elementwise ``_exp`` and ``_sqrt``."""

    dtype = object

    def exp(self, x):
        return self._exp(x)

    def sqrt(self, x):
        return self._sqrt(x)

    def diagonal(self, g):
        return np.diagonal(g).copy()

    def outer(self, a, b):
        return np.multiply.outer(a, b)

    def causal_softmax(self, s, mask):
        w = np.full(s.shape, self.number(0), dtype=object)
        w[mask] = self.exp(s[mask])
        return w / w.sum(axis=1, keepdims=True)

    def masked_scores(self, s, mask):
        return np.where(mask, s, self.nan).astype(object)


class _MpmathArithmetic(_ObjectArithmetic):
    name = "mpmath"
    _exp = np.frompyfunc(mpmath.exp, 1, 1)
    _sqrt = np.frompyfunc(mpmath.sqrt, 1, 1)

    def number(self, value: Any) -> Any:
        if isinstance(value, (mpmath.mpf, float, int, np.integer, np.floating)):
            return mpmath.mpf(value)  # floats at their exact binary value
        q = as_fraction(value)
        return mpmath.mpf(q.numerator) / q.denominator

    @property
    def nan(self):
        return mpmath.mpf("nan")


class _SympyArithmetic(_ObjectArithmetic):
    name = "sympy"
    _exp = np.frompyfunc(sympy.exp, 1, 1)
    _sqrt = np.frompyfunc(sympy.sqrt, 1, 1)

    def number(self, value: Any) -> Any:
        if isinstance(value, sympy.Basic):
            return value
        q = as_fraction(value)  # floats by their decimal repr: 0.2 -> 1/5
        return sympy.Rational(q.numerator, q.denominator)

    @property
    def nan(self):
        return sympy.nan


# --------------------------------------------------------------------------------------------------
# Second-order Taylor jets, batched over directions
# --------------------------------------------------------------------------------------------------
class Jet:
    """a(t) = c0 + c1 t + c2 t^2 + O(t^3) for a batch of K directions.

    ``c0`` has the value's shape; ``c1`` and ``c2`` have shape (K,) + that shape. Arithmetic follows
    the Taylor rules: (ab)_1 = a0 b1 + a1 b0, (ab)_2 = a0 b2 + a1 b1 + a2 b0; f(a)_1 = f'(a0) a1,
    f(a)_2 = f'(a0) a2 + f''(a0) a1^2 / 2. First order only: ``c2`` with a leading axis of length 0 (every
    second-order term then broadcasts to an empty array, and c0, c1 are the same numbers).
    """

    __array_priority__ = 1000

    def __init__(self, c0, c1, c2):
        self.c0, self.c1, self.c2 = c0, c1, c2

    # -- linear operations
    def __add__(self, o):
        if isinstance(o, Jet):
            return Jet(self.c0 + o.c0, self.c1 + o.c1, self.c2 + o.c2)
        return Jet(self.c0 + o, self.c1, self.c2)

    __radd__ = __add__

    def __neg__(self):
        return Jet(-self.c0, -self.c1, -self.c2)

    def __sub__(self, o):
        return self + (-o)

    def __rsub__(self, o):
        return (-self) + o

    def __mul__(self, o):
        if isinstance(o, Jet):
            return Jet(self.c0 * o.c0, self.c0 * o.c1 + self.c1 * o.c0,
                       self.c0 * o.c2 + self.c1 * o.c1 + self.c2 * o.c0)
        return Jet(self.c0 * o, self.c1 * o, self.c2 * o)

    __rmul__ = __mul__

    def __matmul__(self, o):
        return Jet(self.c0 @ o.c0, self.c0 @ o.c1 + self.c1 @ o.c0,
                   self.c0 @ o.c2 + self.c1 @ o.c1 + self.c2 @ o.c0)

    def __truediv__(self, o):
        return self * (o.reciprocal() if isinstance(o, Jet) else 1.0 / o)

    def __rtruediv__(self, o):
        return self.reciprocal() * o

    def __getitem__(self, idx):
        idx = idx if isinstance(idx, tuple) else (idx,)
        return Jet(self.c0[idx], self.c1[(slice(None),) + idx], self.c2[(slice(None),) + idx])

    @property
    def T(self):
        return Jet(self.c0.swapaxes(-1, -2), self.c1.swapaxes(-1, -2), self.c2.swapaxes(-1, -2))

    def sum(self, axis: int, keepdims: bool = False):
        if axis >= 0:
            raise ValueError("Jet.sum takes a negative axis (the leading axis of c1, c2 is the batch)")
        return Jet(self.c0.sum(axis=axis, keepdims=keepdims), self.c1.sum(axis=axis, keepdims=keepdims),
                   self.c2.sum(axis=axis, keepdims=keepdims))

    # -- elementwise functions
    def _apply(self, f0, f1, f2):
        """f(a) from f(a0), f'(a0), f''(a0)."""
        return Jet(f0, f1 * self.c1, f1 * self.c2 + 0.5 * f2 * self.c1 * self.c1)

    def reciprocal(self):
        r = 1.0 / self.c0
        return self._apply(r, -r * r, 2.0 * r * r * r)

    def sqrt(self):
        s = np.sqrt(self.c0)
        return self._apply(s, 0.5 / s, -0.25 / (s * self.c0))

    def exp(self):
        e = np.exp(self.c0)
        return self._apply(e, e, e)

    def where(self, mask, fill):
        """Value ``fill`` (with zero derivatives) where ``mask`` is False."""
        return Jet(np.where(mask, self.c0, fill), np.where(mask, self.c1, 0.0), np.where(mask, self.c2, 0.0))


class JetArithmetic(Arithmetic):
    """Second-order Taylor jets (:class:`Jet`, float64 coefficients): the fourth number system, in which
    the limit recursion yields the finite-width theory's first and second derivatives
    (:mod:`lnrecency.theory.finite_width`)."""

    name = "jet"

    def exp(self, x):
        return x.exp()

    def sqrt(self, x):
        return x.sqrt()

    def diagonal(self, g):
        return Jet(np.diagonal(g.c0, axis1=-2, axis2=-1).copy(), np.diagonal(g.c1, axis1=-2, axis2=-1).copy(),
                   np.diagonal(g.c2, axis1=-2, axis2=-1).copy())

    def causal_softmax(self, s, mask):
        top = np.where(mask, s.c0, -np.inf).max(axis=-1, keepdims=True)  # a constant shift
        e = (s - top).where(mask, -np.inf).exp()
        return e * e.sum(axis=-1, keepdims=True).reciprocal()

    def masked_scores(self, s, mask):
        return s.where(mask, np.nan)


def as_fraction(value: Any) -> Fraction:
    """Exact rational of a configuration number: floats by their decimal repr (0.2 -> 1/5)."""
    if isinstance(value, Fraction):
        return value
    if isinstance(value, numbers.Integral):
        return Fraction(int(value))
    if hasattr(value, "p") and hasattr(value, "q"):  # sympy Rational
        return Fraction(int(value.p), int(value.q))
    return Fraction(repr(float(value)))


def arithmetic(dps: Any = None, exact: bool = False) -> Arithmetic:
    """float64 (default), mpmath (``dps`` digits; the caller sets the working precision) or sympy."""
    if exact:
        if dps is not None:
            raise ValueError(f"dps must be None when exact=True (sympy is exact); got dps={dps!r}")
        return _SympyArithmetic()
    return Arithmetic() if dps is None else _MpmathArithmetic()


@functools.lru_cache(maxsize=64)
def causal_mask(n: int) -> np.ndarray:
    """Boolean lower triangle (j <= i), read-only."""
    m = np.tril(np.ones((n, n), dtype=bool))
    m.flags.writeable = False
    return m
