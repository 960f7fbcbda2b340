"""Where an ordering holds in a model parameter (alpha, lam or gamma), for every sequence length n <= N: the set
as intervals whose ends are found by root finding and certified by exact decisions on both sides.

The predicate: H(p) = "the ordering (Definition 1, recency or earlier) holds at layer L on every row
i <= N of the exact limit at parameter value p" (lnrecency.theory.boundary: float64 signs, mpmath where
float64 cannot decide; by the prefix property, rows <= N = every length n <= N). H is decided exactly at
any single p; the set {p : H(p)} is what a grid of p cannot give. Here:

1. margin m(p) = min over rows i <= N and the adjacent differences D_ij the ordering constrains of
   sign * D_ij / max_j |S_ij| (sign +1 for recency, -1 for earlier): H(p) <=> m(p) > 0 up to the boundary
   module's exact decisions. m is continuous in p (a minimum of continuous functions of p);
2. brackets: m on ``SCAN`` points of the range (geometric near its ends for alpha, geometric throughout
   for lam and gamma); a sign change of H between neighbours is a bracket; in a cell where H keeps its
   value, a bounded minimisation of m (scipy, ``maxiter`` evaluations) looks for a dip below 0 whenever
   the cell's smaller end margin is below ``DIP`` times the largest margin change across the cell or its
   neighbours (a local slope x width): a dip splits the cell into two brackets;
3. each bracket is bisected on the exact predicate H until it is at most ``tol`` wide (default 1e-7; at
   most 1e-6 is accepted). An end is reported as the bracket [lo, hi] with H decided exactly at both
   points; the interval lists use the bracket midpoints.

What is not certified, stated with the result: two ends inside one scan cell with no dip of m detected
(both in the same cell, with m positive at both ends and at the cell's minimiser) would be missed.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.optimize import minimize_scalar

from lnrecency.model.config import ModelConfig, make_config
from lnrecency.runtime.arguments import check_choice, check_int, check_real

__all__ = ["PARAMETERS", "Region", "RegionEnd", "region", "regions", "margin", "margins", "DEFAULT_RANGES", "SCAN",
           "TOL", "estimate_seconds"]

PARAMETERS = ("alpha", "lam", "gamma")
DEFAULT_RANGES = {"alpha": (0.0, 0.999), "lam": (0.05, 8.0), "gamma": (0.05, 16.0)}
SCAN = 241
TOL = 1e-7
DIP = 4.0
#: a certification, like the mpmath limit: refused above this estimate, before any work (--max-seconds raises it)
MAX_SECONDS = 300.0
#: the time model: seconds = points x FACTOR x (one float64 limit at the deepest layer + one boundary decision)
#: (a fixed cost per point fitted to 0); FACTOR absorbs the dip searches and the bisection of each end (their count
# depends on the
#: result: benchmarks/bench_estimates.py gives the spread), fitted there with --fit on this 2-core machine
REGION_COST = {"FACTOR": 0.492}


def estimate_seconds(layers: tuple, n_max: int, points: int) -> float:
    """Time of :func:`regions` over ``points`` scan points (:data:`REGION_COST`, with
    :func:`lnrecency.theory.limit.estimate_seconds` and :func:`lnrecency.theory.boundary.estimate_seconds`)."""
    from lnrecency.theory.boundary import estimate_seconds as boundary_seconds
    from lnrecency.theory.limit import estimate_seconds as limit_seconds

    c = REGION_COST
    per_point = limit_seconds(n_max, max(layers)) + boundary_seconds(max(layers), n_max, min(layers))
    return points * c["FACTOR"] * per_point


@dataclass(frozen=True)
class RegionEnd:
    """One end: H changes between ``lo`` and ``hi`` (both decided exactly); ``holds_below``: H(lo)."""

    lo: float
    hi: float
    holds_below: bool
    first_failing_row: int | None  # on the failing side

    @property
    def value(self) -> float:
        return 0.5 * (self.lo + self.hi)

    def to_json(self) -> dict:
        return {"value": self.value, "bracket": [self.lo, self.hi], "holds_below": self.holds_below,
                "first_failing_row": self.first_failing_row}


@dataclass(frozen=True)
class Region:
    layer: int
    parameter: str
    ordering: str
    n_max: int
    lo: float
    hi: float
    holds: tuple  # ((a, b), ...)
    fails: tuple
    ends: tuple = ()
    scan_points: int = SCAN
    tol: float = TOL
    undecided: tuple = field(default=())  # points where the boundary search could not decide

    @property
    def everywhere(self) -> bool:
        return not self.fails and not self.undecided

    def to_json(self) -> dict:
        return {"layer": self.layer, "holds": [list(x) for x in self.holds], "fails": [list(x) for x in self.fails],
                "ends": [e.to_json() for e in self.ends], "undecided_at": list(self.undecided)}


def _config_at(cfg: ModelConfig, parameter: str, value: float) -> ModelConfig:
    return cfg.replace(**{parameter: float(value)})


def margins(cfg: ModelConfig, layers: tuple, n_max: int, ordering: str) -> dict[int, float]:
    """m(p) of the module docstring at the configuration ``cfg`` for each of ``layers``, from one float64 limit
    computation (-inf where not finite)."""
    from lnrecency.theory.limit import Float64Overflow, limit_scores

    try:
        s = limit_scores(n_max, max(layers), config=cfg)
    except Float64Overflow:
        return {layer: -math.inf for layer in layers}
    rows = np.arange(1, n_max + 1)[:, None]  # row i, 1-based
    cols = np.arange(1, n_max)[None, :]  # D[i-1, c-1] = S_{i,c+1} - S_{i,c}
    # recency constrains every step c <= i - 1 of row i >= 2; earlier-token bias the steps c <= i - 2, i >= 3
    valid = cols <= rows - (1 if ordering == "recency" else 2)
    inside = np.arange(1, n_max + 1)[None, :] <= rows  # keys j <= i
    sign = 1.0 if ordering == "recency" else -1.0
    out = {}
    for layer in layers:
        sl = s[layer - 1]
        with np.errstate(invalid="ignore"):
            scale = np.max(np.where(inside, np.abs(sl), 0.0), axis=1)
            scale = np.where(scale > 0, scale, 1.0)[:, None]
            rel = np.where(valid, sign * np.diff(sl, axis=1) / scale, np.inf)
        worst = float(np.min(rel))
        out[layer] = worst if math.isfinite(worst) else -math.inf
    return out


def margin(cfg: ModelConfig, layer: int, n_max: int, ordering: str) -> float:
    """m(p) of the module docstring at the configuration ``cfg`` (float64 limit; -inf if not finite)."""
    return margins(cfg, (layer,), n_max, ordering)[layer]


class _Predicate:
    """H(p) per layer, decided exactly (lnrecency.theory.boundary), memoised: ``pred(p, layers)`` ->
    {layer: (holds or None when undecided, first failing row or undecided-from row)}; the layers asked for
    together share one limit computation."""

    def __init__(self, cfg, parameter, n_max, ordering):
        self.args = (cfg, parameter, n_max, ordering)
        self.memo: dict[tuple[float, int], tuple[bool | None, int | None]] = {}

    def __call__(self, p: float, layers: tuple) -> dict[int, tuple[bool | None, int | None]]:
        missing = [L for L in layers if (p, L) not in self.memo]
        if missing:
            from lnrecency.theory.boundary import boundary

            cfg, parameter, n_max, ordering = self.args
            for b in boundary(max(missing), n_max, ordering=ordering, config=_config_at(cfg, parameter, p),
                              first_layer=min(missing)):
                self.memo[(p, b.layer)] = ((None, b.undecided_from) if b.undecided_from is not None
                                           else (b.holds, b.first_failing_row))
        return {L: self.memo[(p, L)] for L in layers}


def scan_region(parameter: str, lo: float, hi: float, points: int) -> np.ndarray:
    if parameter == "alpha":
        # dense near both ends (the features of alpha are at 0 and near 1), linear in between
        near0 = lo + np.geomspace(1e-6, 0.05, points // 3) * (hi - lo)
        near1 = hi - np.geomspace(1e-6, 0.05, points // 3) * (hi - lo)
        mid = np.linspace(lo, hi, points - 2 * (points // 3))
        return np.unique(np.clip(np.concatenate([[lo, hi], near0, near1, mid]), lo, hi))
    if lo <= 0:
        raise ValueError(f"{parameter} must be > 0; got --from {lo:g}")
    return np.unique(np.concatenate([[lo, hi], np.geomspace(lo, hi, points)]))


def region(layer: int, n_max: int, parameter: str, *, lo: float | None = None, hi: float | None = None,
           ordering: str = "recency", config: ModelConfig | None = None, tol: float = TOL, scan: int = SCAN,
           **params: Any) -> Region:
    """The set of ``parameter`` values in [lo, hi] where ``ordering`` holds at ``layer`` for every n <= n_max
    (module docstring): intervals with certified ends."""
    return regions((layer,), n_max, parameter, lo=lo, hi=hi, ordering=ordering, config=config, tol=tol, scan=scan,
                   **params)[0]


def regions(layers, n_max: int, parameter: str, *, lo: float | None = None, hi: float | None = None,
            ordering: str = "recency", config: ModelConfig | None = None, tol: float = TOL, scan: int = SCAN,
            progress: bool | None = False, **params: Any) -> list[Region]:
    """:func:`region` for each of ``layers`` (ascending, distinct), the layers sharing each scan point's limit
    computation; the same result per layer as :func:`region` alone. ``progress``: None shows it (a bar on a
    terminal, a line every 10 s otherwise; lnrecency.runtime.progress), False (default) nothing."""
    layers = tuple(check_int("layer", L, minimum=1, maximum=64) for L in layers)
    if not layers or list(layers) != sorted(set(layers)):
        raise ValueError(f"layers must be distinct and ascending; got {list(layers)}")
    n_max = check_int("n_max", n_max, minimum=3)
    check_choice("parameter", parameter, PARAMETERS)
    check_choice("ordering", ordering, ("recency", "earlier"))
    check_real("tol", tol, low=0.0, high=1e-6, low_open=True, high_open=False)
    scan = check_int("scan", scan, minimum=8, maximum=20000)
    cfg = make_config(config, **params)
    if parameter == "gamma" and not cfg.residual:
        raise ValueError("gamma is the residual weight: --vary gamma needs --residual")
    dlo, dhi = DEFAULT_RANGES[parameter]
    lo = dlo if lo is None else float(lo)
    hi = dhi if hi is None else float(hi)
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise ValueError(f"--from must be below --to (finite); got {lo!r} and {hi!r}")
    _config_at(cfg, parameter, lo), _config_at(cfg, parameter, hi)  # both ends valid (alpha < 1, lam > 0, ...)
    xs = scan_region(parameter, lo, hi, scan)
    from lnrecency.runtime.timelimit import refusal, time_limit
    from lnrecency.theory.limit import check_memory

    check_memory(n_max, max(layers))
    seconds = estimate_seconds(layers, n_max, len(xs))
    if seconds > time_limit(MAX_SECONDS):
        raise refusal(f"region at --layer {max(layers)}, --n-max {n_max} ({len(xs)} scan points)", seconds,
                      time_limit(MAX_SECONDS), "lower --n-max or --layer")
    from lnrecency.runtime.progress import Progress

    pred = _Predicate(cfg, parameter, n_max, ordering)
    bar = Progress(2 * len(xs) + len(layers), "region", "steps", enabled=progress)
    ms, hs = [], []
    try:
        for p in xs:  # the scan: limit margins and exact decisions at each point
            ms.append(margins(_config_at(cfg, parameter, p), layers, n_max, ordering))
            bar.update(1, f"{parameter} = {float(p):.4g}")
        for p in xs:
            hs.append(pred(float(p), layers))
            bar.update(1, f"decide {parameter} = {float(p):.4g}")
        out = _regions_of(layers, parameter, ordering, n_max, lo, hi, tol, xs, ms, hs, pred, cfg, bar)
    finally:
        bar.close()
    return out


def _regions_of(layers, parameter, ordering, n_max, lo, hi, tol, xs, ms, hs, pred, cfg, bar) -> list:
    out = []
    for layer in layers:
        H = lambda p, L=layer: pred(p, (L,))[L]  # noqa: E731
        m = lambda p, L=layer: margins(_config_at(cfg, parameter, p), (L,), n_max, ordering)[L]  # noqa: E731
        out.append(_layer_region(layer, parameter, ordering, n_max, lo, hi, tol, xs,
                                 np.array([x[layer] for x in ms]), [h[layer][0] for h in hs], H, m))
        bar.update(1, f"layer {layer} bracketed")
    return out


def _layer_region(layer, parameter, ordering, n_max, lo, hi, tol, xs, ms, hs, H, m) -> Region:
    """One layer's region from its scan (margins ``ms``, decisions ``hs`` at ``xs``): brackets, dips, bisection."""
    brackets = []
    for q in range(len(xs) - 1):
        a, b = float(xs[q]), float(xs[q + 1])
        if hs[q] is None or hs[q + 1] is None:
            continue
        if hs[q] != hs[q + 1]:
            brackets.append((a, b))
            continue
        low_end = min(ms[q], ms[q + 1])
        # a dip below 0 inside a cell of slope <= the local one needs an end margin below slope x width: the
        # local variation is the largest margin change of this cell and its neighbours
        local = max(abs(ms[r + 1] - ms[r]) for r in range(max(q - 1, 0), min(q + 2, len(xs) - 1)))
        if hs[q] and math.isfinite(low_end) and low_end < DIP * local:
            res = minimize_scalar(m, bounds=(a, b), method="bounded", options={"xatol": tol, "maxiter": 60})
            x = float(res.x)
            if a < x < b and H(x)[0] is False:  # a dip: H fails inside the cell
                brackets += [(a, x), (x, b)]
    ends = []
    for a, b in brackets:
        ha = H(a)[0]
        while b - a > tol:
            mid = 0.5 * (a + b)
            hm = H(mid)[0]
            if hm is None:
                break
            if hm == ha:
                a = mid
            else:
                b = mid
        ra, rb = H(a), H(b)
        ends.append(RegionEnd(a, b, bool(ra[0]), ra[1] if not ra[0] else rb[1]))
    ends.sort(key=lambda e: e.lo)
    # intervals from the ends: the value of H between consecutive ends is that of the left end's side
    cuts = [lo] + [e.value for e in ends] + [hi]
    states = [bool(H(lo)[0])] + [not e.holds_below for e in ends]
    holds, fails = [], []
    for q, state in enumerate(states):
        seg = (cuts[q], cuts[q + 1])
        (holds if state else fails).append(seg)
    undecided = tuple(float(p) for p, h in zip(xs, hs) if h is None)
    return Region(layer, parameter, ordering, n_max, lo, hi, tuple(_merge(holds)), tuple(_merge(fails)),
                  tuple(ends), len(xs), tol, undecided)


def _merge(segments: list) -> list:
    out: list = []
    for a, b in segments:
        if out and abs(out[-1][1] - a) <= 0:
            out[-1] = (out[-1][0], b)
        else:
            out.append((a, b))
    return out
