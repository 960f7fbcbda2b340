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
  stated with the result.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field

import mpmath
import numpy as np
from scipy.optimize import brentq

from lnrecency.model.config import ModelConfig
from lnrecency.runtime.arguments import check_choice, check_int

__all__ = ["MEASURES", "gap_and_slope", "AlphaDecision", "decide_alpha", "SIGN_RESOLUTION", "ALPHA_MAX"]

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


@functools.lru_cache(maxsize=4096)
def _row_jet(n: int, cfg: ModelConfig, alpha: float) -> tuple:
    """(S_{n,n-1}, S_{n,1}, S_{n,n}) at layer 2 and their alpha-derivatives (shared by the measures)."""
    from lnrecency.theory.width_jets import taylor_scores

    v = np.ones((n, n)) - np.eye(n)
    jet = taylor_scores(n, 2, cfg.replace(alpha=float(alpha)), v[None], token_map=False)
    row0, row1 = jet.c0[1, n - 1], jet.c1[0, 1, n - 1]
    return row0[n - 2], row0[0], row0[n - 1], row1[n - 2], row1[0], row1[n - 1]


def gap_and_slope(n: int, cfg: ModelConfig, measure: str, alpha: float) -> tuple[float, float]:
    """(Delta(alpha), Delta'(alpha)) of ``measure`` at layer 2, row n, from jets along 1 1^T - I."""
    a, b, c, da, db, dc = _row_jet(n, cfg.replace(alpha=0.0), float(alpha))
    if measure == "absolute":
        return float(a - b), float(da - db)
    if measure == "relative":
        sb = np.sign(b)
        return float((a - b) / abs(b)), float(((da - db) * abs(b) - (a - b) * sb * db) / b ** 2)
    return float((a - b) / (c - b)), float(((da - db) * (c - b) - (a - b) * (dc - db)) / (c - b) ** 2)


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

    vals = [gap_and_slope(n, cfg, measure, a) for a in SCAN]
    slopes = np.array([s for _, s in vals])
    excesses = np.array([g - g0 for g, _ in vals])
    maxima, roots = [], []
    first = [(0.0, s0)] + list(zip(SCAN, slopes))
    for (a0, f0), (a1, f1) in zip(first[:-1], first[1:]):
        if (f0 > 0) != (f1 > 0) and f0 != 0:
            root = brentq(slope, max(a0, 1e-12), a1, xtol=XTOL)
            roots.append(root)
            if f0 > 0:
                maxima.append(root)
    # the amplified set: Delta > Delta(0); near 0 its sign is the slope's
    inside = sign > 0
    start = 0.0 if inside else None
    intervals = []
    for (a0, e0), (a1, e1) in zip(zip(SCAN[:-1], excesses[:-1]), zip(SCAN[1:], excesses[1:])):
        if (e0 > 0) != (e1 > 0):
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
