"""Decisions in alpha that a grid cannot make: the sign of the layer-2 gap's derivative at alpha = 0, the
maximiser of the gap, and the set of alpha where anisotropy amplifies the gap (Delta(alpha) > Delta(0)).

The gap of row n at layer 2 (C5's measures, lnrecency/claims/parameter_free/c5_amplification.py):
  absolute Delta = S_{n,n-1} - S_{n,1};  relative Delta / |S_{n,1}|;  spread Delta / (S_{n,n} - S_{n,1}).
alpha enters only through G0(alpha) = (1 - alpha) I + alpha 1 1^T, linear in alpha, so
d/dalpha S(G0(alpha)) is the directional derivative of the score map along V = 1 1^T - I: the first
Taylor coefficient of the shared layer definitions run on jets (:func:`taylor_scores`, the same code as
the finite-width theory), exact up to float64 rounding; the quotient rule gives the other measures.

* sign at 0: decided in float64 when |Delta'(0)| > ``SIGN_RESOLUTION`` * (1 + |Delta(0)|); otherwise by
  mpmath (central difference of the mpmath limit at 40 digits around alpha = 0, where G0(alpha) is still a
  Gram matrix for alpha > -1/(n-1)); tests cross-check the jet derivative against mpmath differences.
* roots (the maximiser: Delta' = 0; the ends of the amplified set: Delta(alpha) = Delta(0)): brackets from
  sign changes on a scan of ``SCAN`` points (geometric near 0, where the features are), each root by
  Brent's method to 1e-13 in alpha. Two roots closer than the scan spacing would be missed; the scan is
  stated with the result. A change of sign between two values both within ``SIGN_RESOLUTION`` * (1 + |Delta|)
  of 0 is rounding, not a root (a gap that does not depend on alpha, as without normalisation with the residual).
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field

import mpmath
import numpy as np
from scipy.optimize import brentq

from lnrecency.model.config import ModelConfig
from lnrecency.runtime.arguments import check_choice, check_int

__all__ = ["MEASURES", "gap_and_slope", "scan_gaps", "AlphaDecision", "decide_alpha", "SIGN_RESOLUTION", "ALPHA_MAX"]

MEASURES = ("absolute", "relative", "spread")
SIGN_RESOLUTION = 1e-9
ALPHA_MAX = 0.999
SCAN = np.unique(np.concatenate([np.geomspace(1e-7, 0.05, 200), np.linspace(0.05, ALPHA_MAX, 200)]))
XTOL = 1e-13


def _measure(measure: str, a, b, c):
    """(value) of the measure from S_{n,n-1} = a, S_{n,1} = b, S_{n,n} = c."""
    if measure == "absolute":
        return a - b
    if measure == "relative":
        return (a - b) / abs(b)
    return (a - b) / (c - b)


#: Gram entries per batch of the scan (a batch of alphas about this size runs fastest: 10x the speed of one alpha at
#: a time for n = 16, 1.7x for n = 64; the whole scan at once at n = 64 is 10x slower, out of cache)
BATCH_ENTRIES = 40_000


def _first_order(n: int, cfg: ModelConfig, alphas: np.ndarray) -> tuple:
    """(S_{n,n-1}, S_{n,1}, S_{n,n}) at layer 2 and their alpha-derivatives, arrays over ``alphas``: the recursion
    on a batch of Gram matrices G0(alpha), as first-order jets along V = 1 1^T - I (the second-order part has a
    leading axis of length 0, so it is never computed: :class:`lnrecency.model.layers.Jet`)."""
    from lnrecency.model.layers import Jet, JetArithmetic
    from lnrecency.theory.limit import iterate_limit

    g0 = np.empty((alphas.size, n, n))
    g0[:] = alphas[:, None, None]
    g0[:, np.arange(n), np.arange(n)] = 1.0
    v = np.broadcast_to(np.ones((n, n)) - np.eye(n), (1, alphas.size, n, n))
    lays = list(iterate_limit(n, 2, cfg.replace(alpha=0.0), JetArithmetic(), last_output=False,
                              gram=Jet(g0, v, np.zeros((0, alphas.size, n, n)))))
    row0, row1 = lays[1].scores.c0[:, n - 1], lays[1].scores.c1[0, :, n - 1]
    return row0[:, n - 2], row0[:, 0], row0[:, n - 1], row1[:, n - 2], row1[:, 0], row1[:, n - 1]


def _check_memory(n: int) -> None:
    """Refuse (MemoryError, before any allocation) a scan whose smallest batch does not fit: one alpha's first-order
    jets, the value and its derivative (two n x n arrays) for each of the recursion's about 10 arrays of 2 layers
    (theory.limit.check_memory's count), float64."""
    from lnrecency.runtime.memory import available_memory
    from lnrecency.theory.limit import ALWAYS_AVAILABLE

    need = 2 * (2 + 8) * n * n * 8
    if need > ALWAYS_AVAILABLE and need > available_memory():
        raise MemoryError(f"the alpha scan at n={n} needs about {need / 2**20:.0f} MiB, more than the available "
                          f"{available_memory() / 2**20:.0f} MiB; use a smaller n")


@functools.lru_cache(maxsize=4096)
def _row_jet(n: int, cfg: ModelConfig, alpha: float) -> tuple:
    """:func:`_first_order` at one alpha, as floats (shared by the measures)."""
    return tuple(float(x[0]) for x in _first_order(n, cfg, np.array([float(alpha)])))


@functools.lru_cache(maxsize=64)
def _scan_jets(n: int, cfg: ModelConfig) -> tuple:
    """:func:`_first_order` at every alpha of :data:`SCAN`, in batches of about :data:`BATCH_ENTRIES` entries."""
    step = max(1, BATCH_ENTRIES // (n * n))
    parts = [_first_order(n, cfg, SCAN[lo:lo + step]) for lo in range(0, SCAN.size, step)]
    return tuple(np.concatenate(col) for col in zip(*parts))


def _gap_slope(measure: str, a, b, c, da, db, dc) -> tuple:
    """(Delta, Delta') of ``measure`` from the row's three scores and their alpha-derivatives (arrays or floats)."""
    if measure == "absolute":
        return a - b, da - db
    if measure == "relative":
        return (a - b) / abs(b), ((da - db) * abs(b) - (a - b) * np.sign(b) * db) / b ** 2
    return (a - b) / (c - b), ((da - db) * (c - b) - (a - b) * (dc - db)) / (c - b) ** 2


def scan_gaps(n: int, cfg: ModelConfig, measure: str) -> tuple[np.ndarray, np.ndarray]:
    """(Delta, Delta') of ``measure`` at every alpha of :data:`SCAN` (:func:`gap_and_slope`, batched). ``n``: an
    integer >= 3 whose jets fit in memory (MemoryError before allocating otherwise); ``measure``: one of
    :data:`MEASURES`; ValueError naming the argument for anything else."""
    n = check_int("n", n, minimum=3)
    check_choice("measure", measure, MEASURES)
    _check_memory(n)
    return _gap_slope(measure, *_scan_jets(n, cfg.replace(alpha=0.0)))


def gap_and_slope(n: int, cfg: ModelConfig, measure: str, alpha: float) -> tuple[float, float]:
    """(Delta(alpha), Delta'(alpha)) of ``measure`` at layer 2, row n, from jets along 1 1^T - I."""
    gap, slope = _gap_slope(measure, *_row_jet(n, cfg.replace(alpha=0.0), float(alpha)))
    return float(gap), float(slope)


def _mpmath_slope_at_zero(n: int, cfg: ModelConfig, measure: str, dps: int = 40) -> mpmath.mpf:
    """Central difference of the mpmath limit at alpha = 0 (step 10^-(dps/3)); error ~ step^2."""
    from lnrecency.model.layers import arithmetic
    from lnrecency.theory.limit import iterate_limit

    with mpmath.workdps(dps):
        h = mpmath.mpf(10) ** (-(dps // 3))

        def f(t):
            g = np.array([[mpmath.mpf(1) if i == j else t for j in range(n)] for i in range(n)], dtype=object)
            lays = list(iterate_limit(n, 2, cfg, arithmetic(dps), last_output=False, gram=g))
            row = lays[1].scores[n - 1]
            return _measure(measure, row[n - 2], row[0], row[n - 1])

        return (f(h) - f(-h)) / (2 * h)


@dataclass(frozen=True)
class AlphaDecision:
    """What alpha does to the gap, decided by signs and roots (no grid verdicts)."""

    n: int
    config: ModelConfig
    measure: str
    gap_at_zero: float
    slope_at_zero: float
    slope_sign: int
    slope_precision: str
    maximisers: tuple = ()           # interior roots of Delta' with Delta' changing + to -
    slope_roots: tuple = ()          # every interior root of Delta' found
    amplified: tuple = ()            # intervals (lo, hi) in [0, ALPHA_MAX] with Delta(alpha) > Delta(0)
    max_gap: float = float("nan")
    scan: str = field(default=f"{SCAN.size} points, geometric on [1e-7, 0.05], linear on [0.05, {ALPHA_MAX}]")

    @property
    def amplifies_near_zero(self) -> bool:
        return self.slope_sign > 0

    @property
    def increasing(self) -> bool:
        """Delta' > 0 at 0 and no root of Delta' on (0, ALPHA_MAX): Delta increases on [0, ALPHA_MAX]."""
        return self.slope_sign > 0 and not self.slope_roots

    def interval_text(self) -> str:
        if not self.amplified:
            return "nowhere on (0, %g]" % ALPHA_MAX
        return " and ".join(f"({a:.6g}, {b:.6g}{']' if b == ALPHA_MAX else ')'}" for a, b in self.amplified)

    def to_json(self) -> dict:
        return {"n": self.n, "measure": self.measure, "gap_at_zero": self.gap_at_zero,
                "slope_at_zero": self.slope_at_zero, "slope_sign": self.slope_sign,
                "slope_precision": self.slope_precision,
                "maximisers": [float(x) for x in self.maximisers],
                "slope_roots": [float(x) for x in self.slope_roots],
                "amplified_intervals": [[float(a), float(b)] for a, b in self.amplified],
                "max_gap": self.max_gap, "roots": f"Brent, xtol {XTOL:g}; brackets from a scan of {self.scan}"}


def decide_alpha(n: int, cfg: ModelConfig, measure: str = "absolute") -> AlphaDecision:
    """Sign of Delta'(0), maximisers of Delta on (0, ALPHA_MAX), and the set where Delta(alpha) > Delta(0)."""
    n = check_int("n", n, minimum=3)
    check_choice("measure", measure, MEASURES)
    _check_memory(n)
    g0, s0 = gap_and_slope(n, cfg, measure, 0.0)
    if abs(s0) > SIGN_RESOLUTION * (1 + abs(g0)):
        sign, precision = (1 if s0 > 0 else -1), "float64 jet"
    else:
        hp = _mpmath_slope_at_zero(n, cfg, measure)
        tol = mpmath.mpf(10) ** -20
        sign = 0 if abs(hp) <= tol else (1 if hp > 0 else -1)
        s0, precision = float(hp), "mpmath dps=40 (central difference)"

    def slope(a):
        return gap_and_slope(n, cfg, measure, a)[1]

    def excess(a):
        return gap_and_slope(n, cfg, measure, a)[0] - g0

    gaps, slopes = scan_gaps(n, cfg, measure)
    excesses = gaps - g0
    maxima, roots = [], []
    # a change of sign between two values both within rounding of 0 (a gap constant in alpha: no normalisation
    # with the residual) is noise, not a root; so is a bracket whose ends, evaluated again, agree in sign
    tiny = SIGN_RESOLUTION * (1 + np.abs(np.concatenate([[g0], gaps])))
    first = [(0.0, s0)] + list(zip(SCAN, slopes))
    for k, ((a0, f0), (a1, f1)) in enumerate(zip(first[:-1], first[1:])):
        if (f0 > 0) != (f1 > 0) and f0 != 0 and max(abs(f0) - tiny[k], abs(f1) - tiny[k + 1]) > 0:
            lo = max(a0, 1e-12)
            if (slope(lo) > 0) == (f1 > 0):
                continue
            root = brentq(slope, lo, a1, xtol=XTOL)
            roots.append(root)
            if f0 > 0:
                maxima.append(root)
    # the amplified set: Delta > Delta(0); near 0 its sign is the slope's
    inside = sign > 0
    start = 0.0 if inside else None
    intervals = []
    for (a0, e0), (a1, e1) in zip(zip(SCAN[:-1], excesses[:-1]), zip(SCAN[1:], excesses[1:])):
        if (e0 > 0) != (e1 > 0) and max(abs(e0), abs(e1)) > tiny[0]:
            root = brentq(excess, a0, a1, xtol=XTOL)
            if e1 > 0:
                start = root
            elif start is not None:
                intervals.append((start, root))
                start = None
    if start is not None:
        intervals.append((start, ALPHA_MAX))
    best = max([g0] + [gap_and_slope(n, cfg, measure, a)[0] for a in maxima])
    return AlphaDecision(n, cfg, measure, g0, float(s0), sign, precision, tuple(maxima), tuple(roots),
                         tuple(intervals), float(best))
