"""Where an ordering claim holds in sequence length: the first failing row of each layer, decided exactly.

Definition 1 (docs/model.md) per row i, from the adjacent differences D_j = S_{i,j+1} - S_{i,j} of the exact
d -> infinity limit (:func:`lnrecency.theory.limit.limit_scores`):
  * "recency": every D_j > 0, j = 1..i-1 (the last pair involves the diagonal); vacuous for row 1;
  * "earlier": every D_j < 0, j = 1..i-2 (keys strictly below the query); vacuous for rows 1, 2;
  * "flat":    every D_j = 0, j = 1..i-2; vacuous for rows 1, 2.

Prefix property: causal attention makes rows 1..i of every layer a function of tokens 1..i only, so the
scores of a sequence of length n are the leading n x n block of those of any longer sequence. The claim
therefore holds for length n exactly when it holds on rows 1..n, and the smallest failing length equals
the first failing row (``first_failing_n == first_failing_row``; tests/theory/test_boundary.py checks the prefix
property). One limit at n_max decides every length up to n_max.

Exact signs: a difference is decided in float64 when |D_j| > ``FLOAT_RESOLUTION`` * max_j |S_ij| (the
recursion's float64 error is orders below that); otherwise the prefix up to that row is recomputed in
mpmath at ``dps`` digits and D_j counts as 0 when |D_j| <= 10^-(dps - 10) max |S_ij|. A setting float64
cannot hold (overflow) is evaluated in mpmath throughout, within a stated cost limit: a row that would
need a longer mpmath prefix than ``MPMATH_MAX_N``, or one estimated above the mpmath time limit (checked before
it runs), is reported as ``undecided_from`` (the claim holds on
every row before it), never guessed.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import mpmath
import numpy as np

from lnrecency.model.config import ModelConfig, make_config
from lnrecency.runtime.arguments import check_choice, check_int

__all__ = ["ORDERINGS", "LayerBoundary", "boundary", "boundaries", "row_holds", "FLOAT_RESOLUTION", "MPMATH_MAX_N",
           "estimate_seconds", "check_time", "estimate_bytes", "check_memory"]

from lnrecency.choices import MPMATH_MAX_N, ORDERINGS  # noqa: E402 (defined there for the parser)

FLOAT_RESOLUTION = 1e-12


#: the row search's fixed cost per call, fitted by benchmarks/bench_estimates.py --fit on this project's 2-core
#: machine (n_max = 100..2000, 2-16 layers: estimate/real 0.8-1.7); the vectorised float64 pass over the rows
#: fitted below 1e-15 s per entry, inside the limit estimate's LOAD_MARGIN, so it has no term of its own
BOUNDARY_COST = {"FIXED": 5.2e-4}


def estimate_seconds(layers: int, n_max: int, first_layer: int = 1, orderings: int = 1) -> float:
    """Time of :func:`boundaries` when float64 decides every row: the float64 limit recursion
    (:func:`lnrecency.theory.limit.estimate_seconds`) plus the search's fixed cost (:data:`BOUNDARY_COST`, times
    the limit's LOAD_MARGIN); ``first_layer`` and ``orderings`` do not change it measurably. Rows that need an mpmath
    prefix are estimated and refused separately, before that
    prefix is computed (the limit's own check, at its MAX_SECONDS_PRECISE)."""
    from lnrecency.theory.limit import LOAD_MARGIN
    from lnrecency.theory.limit import estimate_seconds as limit_seconds

    c = BOUNDARY_COST
    return limit_seconds(n_max, layers) + LOAD_MARGIN * c["FIXED"]


def check_time(layers: int, n_max: int, first_layer: int = 1, orderings: int = 1) -> None:
    """Refuse (ValueError, before any work) a search estimated above the float64 limit's time limit
    (lnrecency.theory.limit.MAX_SECONDS, an interactive answer; ``--max-seconds`` raises it)."""
    from lnrecency.runtime.timelimit import refusal, time_limit
    from lnrecency.theory.limit import MAX_SECONDS

    seconds = estimate_seconds(layers, n_max, first_layer, orderings)
    if seconds > time_limit(MAX_SECONDS):
        raise refusal(f"the boundary search to --n-max {n_max} at --layer {layers}", seconds,
                      time_limit(MAX_SECONDS), "lower --n-max or --layer")


#: the boundary search's working memory, measured (peak RSS less the interpreter's ~160 MiB, n = 2000-3000,
#: 3-6 layers): about (4.5 layers + 1) float64 n x n arrays
BOUNDARY_ARRAYS = (4.5, 1.0)
#: a boundary search is refused above this memory (or above the free memory), before any allocation: the CLI
#: is an interactive answer; larger searches go through the library
MAX_BOUNDARY_BYTES = 2**30


def estimate_bytes(layers: int, n_max: int) -> int:
    """Working memory of :func:`boundaries` (float64 rows; an mpmath prefix stays below MPMATH_MAX_N rows)."""
    per_layer, fixed = BOUNDARY_ARRAYS
    return int((per_layer * layers + fixed) * 8 * n_max * n_max)


def check_memory(layers: int, n_max: int) -> None:
    """Refuse (MemoryError, before any allocation) a search estimated above :data:`MAX_BOUNDARY_BYTES` or the
    free memory."""
    from lnrecency.runtime.memory import available_memory

    need = estimate_bytes(layers, n_max)
    limit = min(MAX_BOUNDARY_BYTES, available_memory()) if need > 64 * 2**20 else MAX_BOUNDARY_BYTES
    if need > limit:
        raise MemoryError(f"the boundary search to --n-max {n_max} at layer {layers} needs about "
                          f"{need / 2**20:.0f} MiB, above the limit {limit / 2**20:.0f} MiB; lower --n-max or --layer")


def row_holds(ordering: str, signs: list[int]) -> bool:
    """Definition 1 on one row from the signs (+1, 0, -1) of D_1..D_{i-1}."""
    if ordering == "recency":
        return all(s > 0 for s in signs)
    off = signs[:-1]
    if ordering == "earlier":
        return all(s < 0 for s in off)
    return all(s == 0 for s in off)


@dataclass(frozen=True)
class LayerBoundary:
    """Result for one layer: the first row (= first sequence length) at which ``ordering`` fails."""

    layer: int
    ordering: str
    n_max: int
    first_failing_row: int | None
    differences: tuple = ()
    precision: str = "float64"
    undecided_from: int | None = None  # first row float64 cannot decide and mpmath is not run on

    @property
    def first_failing_n(self) -> int | None:
        return self.first_failing_row

    @property
    def holds_up_to(self) -> int | None:
        """The largest n with the claim holding on every row <= n; None when it holds up to n_max."""
        if self.undecided_from is not None:
            return self.undecided_from - 1
        return None if self.first_failing_row is None else self.first_failing_row - 1

    @property
    def holds(self) -> bool:
        """Holds on every row up to n_max (decided)."""
        return self.first_failing_row is None and self.undecided_from is None

    def to_json(self) -> dict:
        out: dict[str, Any] = {"layer": self.layer, "first_failing_n": self.first_failing_n,
                               "first_failing_row": self.first_failing_row, "holds_up_to": self.holds_up_to}
        if self.first_failing_row is not None:
            out["failing_row_differences"] = [float(x) for x in self.differences]
            out["precision"] = self.precision
        if self.undecided_from is not None:
            out["undecided_from"] = self.undecided_from
        return out


class _Undecided(Exception):
    """Row ``args[0]`` needs an mpmath prefix longer than MPMATH_MAX_N rows or above the mpmath time limit."""


class _Rows:
    """Row signs of one configuration: float64 limit at n_max, mpmath prefixes where float64 cannot decide."""

    def __init__(self, n_max: int, layers: int, cfg: ModelConfig, dps: int):
        from lnrecency.theory.limit import Float64Overflow, limit_scores

        self.n_max, self.layers, self.cfg, self.dps = n_max, layers, cfg, dps
        try:
            self.s = limit_scores(n_max, layers, config=cfg)
        except Float64Overflow:
            self.s = None
        self.hp = None  # mpmath scores of a prefix (layers, m, m)

    def _mpmath_prefix(self, i: int):
        if self.hp is None or len(self.hp[0]) < i:
            m = min(self.n_max, max(i, 2 * (0 if self.hp is None else len(self.hp[0]))))
            from lnrecency.runtime.timelimit import time_limit
            from lnrecency.theory.limit import MAX_SECONDS_PRECISE, estimate_seconds, limit_scores

            if m > MPMATH_MAX_N or estimate_seconds(m, self.layers, self.dps) > time_limit(MAX_SECONDS_PRECISE):
                raise _Undecided(i)  # reported where it starts, never guessed, and never a late refusal

            self.hp = limit_scores(m, self.layers, config=self.cfg, dps=self.dps)
        return self.hp

    def signs(self, layer: int, i: int) -> tuple[list[int], np.ndarray, str]:
        if self.s is not None:
            row = self.s[layer - 1, i - 1, :i]
            d = np.diff(row)
            if np.all(np.isfinite(row)) and np.all(np.abs(d) > FLOAT_RESOLUTION * float(np.max(np.abs(row)))):
                return [1 if x > 0 else -1 for x in d], d, "float64"
        hp = self._mpmath_prefix(i)
        with mpmath.workdps(self.dps):
            hrow = list(hp[layer - 1, i - 1, :i])
            scale = max(abs(x) for x in hrow)
            hd = [hrow[j + 1] - hrow[j] for j in range(i - 1)]
            tol = mpmath.mpf(10) ** (-(self.dps - 10)) * scale
            signs = [0 if abs(x) <= tol else (1 if x > 0 else -1) for x in hd]
            return signs, np.array([float(x) for x in hd]), f"mpmath dps={self.dps}"


def float64_prefix(s: np.ndarray, ordering: str) -> int:
    """Rows 2..r of one layer's float64 scores ``s`` (n x n) that float64 decides and on which ``ordering``
    holds, in one vectorised pass: the first row i >= 2 that is undecided in float64 or fails (n + 1 if none).
    The same per-row rule as :meth:`_Rows.signs` and :func:`row_holds`."""
    n = s.shape[0]
    if n < 2:
        return n + 1
    i = np.arange(1, n + 1)[:, None]
    c = np.arange(1, n)[None, :]
    inside = np.arange(1, n + 1)[None, :] <= i
    with np.errstate(invalid="ignore"):
        d = np.diff(np.where(inside, s, 0.0), axis=1)  # d[i-1, c-1] = S_{i,c+1} - S_{i,c}, used for c <= i-1
        scale = np.max(np.where(inside, np.abs(s), 0.0), axis=1)[:, None]
        finite = np.all(np.where(inside, np.isfinite(s), True), axis=1)
        step = c <= i - 1
        resolved = finite & np.all(np.where(step, np.abs(d) > FLOAT_RESOLUTION * scale, True), axis=1)
        if ordering == "recency":
            holds = np.all(np.where(step, d > 0, True), axis=1)
        else:  # the steps c <= i - 2 (keys strictly below the query); float64-decided steps are never 0
            off = c <= i - 2
            holds = np.all(np.where(off, d < 0, True), axis=1) if ordering == "earlier" else ~np.any(off, axis=1)
    bad = np.flatnonzero(~(resolved & holds)[1:])
    return int(bad[0]) + 2 if bad.size else n + 1


def _search(rows: "_Rows", layer: int, ordering: str, n_max: int) -> LayerBoundary:
    start = 2 if rows.s is None else float64_prefix(rows.s[layer - 1], ordering)
    for i in range(start, n_max + 1):
        try:
            signs, diffs, precision = rows.signs(layer, i)
        except _Undecided:
            return LayerBoundary(layer, ordering, n_max, None, undecided_from=i)
        if not row_holds(ordering, signs):
            return LayerBoundary(layer, ordering, n_max, i, tuple(diffs), precision)
    return LayerBoundary(layer, ordering, n_max, None)


def boundaries(layers: int, n_max: int, *, orderings: tuple = ORDERINGS, config: ModelConfig | None = None,
               dps: int = 40, first_layer: int = 1, **params: Any) -> dict[str, list[LayerBoundary]]:
    """:func:`boundary` for several orderings on one limit computation: {ordering: [per layer]}."""
    layers = check_int("layers", layers, minimum=1)
    n_max = check_int("n_max", n_max, minimum=2)
    first_layer = check_int("first_layer", first_layer, minimum=1, maximum=layers)
    for o in orderings:
        check_choice("ordering", o, ORDERINGS)
    check_int("dps", dps, minimum=20)
    check_time(layers, n_max, first_layer, len(orderings))
    rows = _Rows(n_max, layers, make_config(config, **params), dps)
    return {o: [_search(rows, layer, o, n_max) for layer in range(first_layer, layers + 1)] for o in orderings}


def boundary(layers: int, n_max: int, *, ordering: str = "recency", config: ModelConfig | None = None,
             dps: int = 40, first_layer: int = 1, **params: Any) -> list[LayerBoundary]:
    """For each layer first_layer..``layers``: the first row i <= n_max at which ``ordering`` fails
    (Definition 1, exact limit), or None when it holds on rows 1..n_max."""
    check_choice("ordering", ordering, ORDERINGS)
    return boundaries(layers, n_max, orderings=(ordering,), config=config, dps=dps, first_layer=first_layer,
                      **params)[ordering]
