"""Phase diagrams: for each setting (norm, residual, gamma, lam, alpha) and layer 2..L, where recency,
earlier-token bias or mixed rows hold, as a function of the sequence length n <= n_max.

Per (setting, layer), from the exact limit (:func:`lnrecency.theory.boundary.boundary`, signs decided in
float64 or mpmath, never on a grid of n):
  * recency_holds_up_to: the largest n with recency (Definition 1) on every row <= n (n_max: all);
  * earlier_holds_up_to: the same for earlier-token bias (rows >= 3);
  * phase: "recency" (recency on every row up to n_max), "earlier" (earlier-token bias up to n_max),
    "recency, then mixed" (recency for n < N*, N* <= n_max), "mixed" (neither holds from row 3 on), or
    "undecided" (float64 cannot decide a sign and the mpmath prefix is beyond its limit).

Tasks are independent (one per setting) and run in this process or on Dask (:mod:`lnrecency.runtime.distributed`);
the table is in setting order whatever the number of workers, so the same grid gives the same bytes.
"""
from __future__ import annotations

import itertools
import json
from dataclasses import dataclass
from pathlib import Path

import matplotlib
import matplotlib.ticker
import numpy as np
from matplotlib.figure import Figure

from lnrecency.files.atomic import atomic_write_text, publish, staged_directory
from lnrecency.files.figure_record import ReportFigure
from lnrecency.files.table_record import Table
from lnrecency.model.config import ModelConfig
from lnrecency.runtime.arguments import check_int
from lnrecency.runtime.distributed import map_ordered
from lnrecency.theory.boundary import boundaries
from lnrecency.theory.region import region

__all__ = ["SweepGrid", "PhaseRow", "phase_rows", "sweep", "phase_table", "phase_figure", "write_sweep", "PHASES",
           "REPORT_GRID", "boundary_curves", "curve_point", "curves_figure", "estimate_seconds", "check_time"]

PHASES = ("recency", "recency, then mixed", "earlier", "mixed", "undecided")


@dataclass(frozen=True)
class SweepGrid:
    norm: str = "layernorm"
    residual: tuple = ((False, 1.0), (True, 1.0), (True, 8.0))  # (residual, gamma)
    lams: tuple = (0.3, 1.0, 3.0, 8.0)
    alphas: tuple = (0.0, 0.25, 0.5, 0.75)
    layers: int = 8
    n_max: int = 200

    def settings(self) -> list[ModelConfig]:
        return [ModelConfig(norm=self.norm, residual=r, gamma=g, lam=lam, alpha=a)
                for (r, g), lam, a in itertools.product(self.residual, self.lams, self.alphas)]

    def size(self) -> int:
        return len(self.residual) * len(self.lams) * len(self.alphas)


REPORT_GRID = SweepGrid()


@dataclass(frozen=True)
class PhaseRow:
    """One (setting, layer) of a phase diagram: the phase and the lengths n up to which each ordering holds
    (n_max: every row searched), the first failing n (None: none up to n_max) and where float64 and the
    mpmath prefix stopped deciding (None: decided everywhere)."""

    norm: str
    residual: bool
    gamma: float | None  # None without residual
    lam: float
    alpha: float
    layer: int
    phase: str
    recency_holds_up_to: int
    recency_first_failing_n: int | None
    earlier_holds_up_to: int
    earlier_first_failing_n: int | None
    undecided_from: int | None


def _holds_up_to(b, n_max: int) -> int:
    return n_max if b.holds else b.holds_up_to


def phase_rows(cfg: ModelConfig, layers: int, n_max: int) -> list[PhaseRow]:
    """One row per layer 2..layers for one setting (a pure function: a Dask task)."""

    both = boundaries(layers, n_max, orderings=("recency", "earlier"), config=cfg, first_layer=2)
    rec, ear = both["recency"], both["earlier"]
    out = []
    for r, e in zip(rec, ear):
        if r.holds:
            phase = "recency"
        elif e.holds:
            phase = "earlier"
        elif r.undecided_from is not None or e.undecided_from is not None:
            phase = "undecided"
        elif r.first_failing_n is not None and r.first_failing_n > 3:
            phase = "recency, then mixed"
        else:
            phase = "mixed"
        out.append(PhaseRow(norm=cfg.norm, residual=cfg.residual, gamma=cfg.gamma if cfg.residual else None,
                            lam=cfg.lam, alpha=cfg.alpha, layer=r.layer, phase=phase,
                            recency_holds_up_to=_holds_up_to(r, n_max), recency_first_failing_n=r.first_failing_n,
                            earlier_holds_up_to=_holds_up_to(e, n_max), earlier_first_failing_n=e.first_failing_n,
                            undecided_from=r.undecided_from or e.undecided_from))
    return out


#: a sweep is a batch job, but an answer still: refused above this estimate before any work (--max-seconds)
MAX_SECONDS = 300.0
#: starting (and closing) a local Dask cluster, and the curve regions' cost against a region's estimate (a
#: curve point sits at a boundary by design: its region has ends to bisect and dips to search), fitted by
#: benchmarks/bench_estimates.py --fit on this project's 2-core machine
SWEEP_COST = {"LOCAL_START": 2.49, "CURVE_FACTOR": 3.57}


def estimate_seconds(grid: SweepGrid, *, scheduler: str = "none", workers: int = 2, curves: tuple = (),
                     curve_points: int = 12) -> float:
    """Time of :func:`write_sweep`: one boundary search per setting (both orderings, layers 2..L;
    :func:`lnrecency.theory.boundary.estimate_seconds`), and one certified region per curve task
    (:func:`lnrecency.theory.region.estimate_seconds`), spread over ``workers`` processes (a remote
    scheduler: counted as ``workers``), plus the start of a local cluster."""
    from lnrecency.theory.boundary import estimate_seconds as boundary_seconds
    from lnrecency.theory.region import estimate_seconds as region_seconds
    from lnrecency.theory.region import scan_region

    parallel = 1 if scheduler == "none" else max(1, workers)
    tasks = grid.size()
    t = -(-tasks // parallel) * boundary_seconds(grid.layers, grid.n_max, 2, orderings=2)
    if curves:
        jobs = curve_tasks(grid, tuple(curves), curve_points)
        points = len(scan_region("alpha", 0.0, 0.999, CURVE_SCAN))
        t += (-(-len(jobs) // parallel) * SWEEP_COST["CURVE_FACTOR"]
              * max(region_seconds((layer,), grid.n_max, points) for layer in curves))
    return t + (SWEEP_COST["LOCAL_START"] if scheduler == "local" else 0.0)


def check_time(grid: SweepGrid, **kw) -> None:
    """Refuse (ValueError, before any work and before a cluster starts) a sweep estimated above MAX_SECONDS."""
    from lnrecency.runtime.timelimit import refusal, time_limit

    seconds = estimate_seconds(grid, **kw)
    if seconds > time_limit(MAX_SECONDS):
        raise refusal(f"the sweep of {grid.size()} settings to --layers {grid.layers}, --n-max {grid.n_max}",
                      seconds, time_limit(MAX_SECONDS), "use fewer settings, a smaller --n-max or fewer --layers")


def sweep(grid: SweepGrid, *, scheduler: str = "none", workers: int = 2, progress: bool | None = None) -> list:
    check_int("layers", grid.layers, minimum=2)
    check_int("n_max", grid.n_max, minimum=3)
    check_time(grid, scheduler=scheduler, workers=workers)
    tasks = [(cfg, grid.layers, grid.n_max) for cfg in grid.settings()]
    return [row for rows in map_ordered(phase_rows, tasks, scheduler=scheduler, workers=workers,
                                        progress=progress, desc="sweep") for row in rows]


def phase_table(rows: list, grid: SweepGrid):
    cols = ("norm", "residual", "gamma", "lam", "alpha", "layer", "phase", "recency_holds_up_to",
            "recency_first_failing_n", "earlier_holds_up_to", "earlier_first_failing_n", "undecided_from")
    return Table("phase_diagram", f"Phase diagram, layers 2..{grid.layers}, n <= {grid.n_max} (exact limit)",
                 "Per setting and layer: where recency, earlier-token bias or mixed rows hold in the sequence "
                 f"length n <= {grid.n_max} (Definition 1; first failing length = first failing row, decided "
                 "in float64 or mpmath, lnrecency boundary). holds_up_to = n_max means it holds on every row "
                 "searched.", cols, [[getattr(r, c) for c in cols] for r in rows])


#: the letters the phase figure writes beside a point, and what they mean
MARKS = {"E": "earlier-token bias", "M": "mixed", "?": "undecided"}


def phase_figure(rows: list, grid: SweepGrid):
    """The longest n with recency on every row against the layer, one line per setting (residual, gamma,
    lam, alpha) in which recency fails somewhere (log scale); the settings where it holds for every n <=
    n_max at every layer are counted on the dashed ceiling, not drawn one by one (a grid of uniform panels
    showed nothing). Earlier-token bias and mixed rows are marked on their line (E, M)."""

    layers = list(range(2, grid.layers + 1))
    series: dict = {}
    for r in rows:
        key = (r.residual, r.gamma, r.lam, r.alpha)
        series.setdefault(key, {})[r.layer] = r
    failing = {k: v for k, v in series.items() if any(v[L].recency_holds_up_to < grid.n_max for L in layers)}
    fig = Figure(figsize=(7.2, 4.4))
    ax = fig.subplots()
    colours = matplotlib.colormaps["viridis"](np.linspace(0.0, 0.85, max(len(failing), 1)))
    drawn = set()
    for col, ((res, g, lam, a), by_layer) in zip(colours, sorted(failing.items(), key=lambda kv: str(kv[0]))):
        ys = [max(by_layer[L].recency_holds_up_to, 1) for L in layers]
        label = (f"residual gamma={g:g}" if res else "no residual") + f", lam={lam:g}, alpha={a:g}"
        ax.plot(layers, ys, "o-", color=col, label=label, ms=4)
        for L, y in zip(layers, ys):
            mark = {"earlier": "E", "mixed": "M", "undecided": "?"}.get(by_layer[L].phase)
            if mark:
                drawn.add(mark)
                ax.annotate(mark, (L, y), textcoords="offset points", xytext=(4, 4), fontsize=9, color=col)
    held = len(series) - len(failing)
    ax.axhline(grid.n_max, color="0.4", ls="--", lw=1)
    ax.text(layers[0], grid.n_max * 1.08, f"n_max = {grid.n_max}: recency on every row at every layer in "
            f"{held} of {len(series)} settings", fontsize=9, color="0.3")
    ax.set_yscale("log")
    ax.set_ylim(1, grid.n_max * 1.6)
    ax.set_xticks(layers)
    ax.set_xlabel("layer")
    ax.set_ylabel("longest n with recency on every row")
    ax.set_title(f"Where recency stops ({grid.norm}, exact limit, n <= {grid.n_max})", fontsize=10)
    if failing:
        ax.legend(fontsize=9, loc="lower left")
    fig.tight_layout()
    return ReportFigure("phase_diagram", f"Where recency stops, {grid.norm}, layers 2..{grid.layers}",
                        f"Longest sequence length n with recency on every row, per layer, for the settings of the "
                        f"grid (residual and gamma x lam x alpha) in which it stops before n_max = {grid.n_max}; "
                        f"the others hold for every n <= n_max (dashed line). "
                        + (", ".join(f"{m}: {MARKS[m]}" for m in sorted(drawn)) + " rows at that layer. " if drawn
                           else "No layer shows earlier-token bias or mixed rows where recency stops. ")
                        + "Exact limit, lnrecency sweep; boundaries in alpha: lnrecency region.",
                        fig, tight=False)


# ------------------------------------------------------------------------------------------------------
# Boundaries as curves: alpha*(lam) and alpha*(gamma), each point certified (lnrecency.theory.region)
# ------------------------------------------------------------------------------------------------------
CURVE_SCAN = 61  # alpha scan points of each region (the dip search covers narrower features)
CURVE_TOL = 1e-6


def curve_point(cfg: ModelConfig, layer: int, n_max: int, over: str, value: float) -> dict:
    """The alpha-set of recency at ``layer`` (every n <= n_max) with ``over`` (lam or gamma) set to ``value``: one
    point of a boundary curve (a pure function: a Dask task)."""

    at = cfg.replace(**{over: float(value)})
    r = region(layer, n_max, "alpha", config=at, scan=CURVE_SCAN, tol=CURVE_TOL)
    return {"over": over, "value": float(value), "residual": at.residual,
            "gamma": float(at.gamma) if at.residual else None, "lam": float(at.lam), "layer": layer,
            "fails": [list(x) for x in r.fails], "ends": [e.to_json() for e in r.ends]}


def axis_point(cfg: ModelConfig, layer: int, n_max: int, over: str, lo: float, hi: float) -> dict:
    """Where a curve meets alpha = 0: the certified ends in ``over`` of recency at alpha = 0 (a Dask task)."""

    r = region(layer, n_max, over, config=cfg.replace(alpha=0.0), lo=lo, hi=hi, scan=CURVE_SCAN, tol=CURVE_TOL)
    return {"over": over, "axis": True, "residual": cfg.residual, "gamma": float(cfg.gamma) if cfg.residual else None,
            "lam": float(cfg.lam), "layer": layer, "ends": [e.to_json() for e in r.ends]}


def curve_tasks(grid: SweepGrid, layers: tuple, points: int) -> list:
    """Tasks of the (lam, alpha) curves for every residual setting of the grid, and of the (gamma, alpha) curves
    at lam = 1 (residual settings present): ``points`` geometric values over the grid's lam / gamma span."""
    lams = np.geomspace(min(grid.lams), max(grid.lams), points)
    tasks = [(curve_point, (ModelConfig(norm=grid.norm, residual=r, gamma=g), layer, grid.n_max, "lam", float(v)))
             for r, g in grid.residual for layer in layers for v in lams]
    tasks += [(axis_point, (ModelConfig(norm=grid.norm, residual=r, gamma=g), layer, grid.n_max, "lam",
                            float(lams[0]), float(lams[-1]))) for r, g in grid.residual for layer in layers]
    gammas = [g for r, g in grid.residual if r]
    if gammas:
        span = np.geomspace(min(min(gammas), 0.5), max(max(gammas), 8.0), points)
        base = ModelConfig(norm=grid.norm, residual=True, lam=1.0)
        tasks += [(curve_point, (base, layer, grid.n_max, "gamma", float(v))) for layer in layers for v in span]
        tasks += [(axis_point, (base, layer, grid.n_max, "gamma", float(span[0]), float(span[-1]))) for layer in layers]
    return tasks


def _run_task(fn, args):
    return fn(*args)


def boundary_curves(grid: SweepGrid, layers: tuple = (3,), points: int = 12, *, scheduler: str = "none",
                    workers: int = 2, progress: bool | None = None) -> list:
    """Every curve point of :func:`curve_tasks`, in task order (same bytes whatever the workers)."""

    for layer in layers:
        check_int("curve layer", layer, minimum=2, maximum=grid.layers)
    check_int("curve points", points, minimum=2, maximum=200)
    return list(map_ordered(_run_task, curve_tasks(grid, layers, points), scheduler=scheduler, workers=workers,
                            progress=progress, desc="curves"))


def curves_figure(points: list, grid: SweepGrid):
    """Panels: (lam, alpha) per residual setting and (gamma, alpha) at lam = 1; per layer, the alpha-ends of the
    certified regions joined over lam (gamma), the failing side shaded."""

    panels = [("lam", r, g) for r, g in grid.residual] + ([("gamma", True, None)] if any(r for r, _ in grid.residual)
                                                          else [])
    fig = Figure(figsize=(3.6 * len(panels), 3.3))
    axes = np.atleast_1d(fig.subplots(1, len(panels)))
    for ax, (over, res, g) in zip(axes, panels):
        sel = [p for p in points if p["over"] == over and p["residual"] == res
               and (over == "gamma" or p["gamma"] == (g if res else None))]
        axis = [p for p in sel if p.get("axis")]
        sel = [p for p in sel if not p.get("axis")]
        for layer in sorted({p["layer"] for p in sel}):
            pts = sorted(((p["value"], p) for p in sel if p["layer"] == layer), key=lambda t: t[0])
            xs = np.array([x for x, _ in pts])
            tops = np.array([max([b for a, b in p["fails"] if a <= 0.0] or [0.0]) for _, p in pts])
            line, = ax.plot(xs, tops, "o-", ms=3, lw=1.2, label=f"layer {layer}")
            ax.fill_between(xs, 0, tops, color=line.get_color(), alpha=0.15)
            for x, p in pts:  # failing sets not starting at alpha = 0 (if any): marked
                for a, b in p["fails"]:
                    if a > 0.0:
                        ax.plot([x, x], [a, b], "-", color=line.get_color(), lw=3)
        for p in axis:  # where recency at alpha = 0 starts (or stops) holding: certified ends on the axis
            for e in p["ends"]:
                ax.plot([e["value"]], [0.0], "x", ms=7, color="k")
                ax.annotate(f"{e['value']:.4g}", (e["value"], 0.0), textcoords="offset points", xytext=(2, 6),
                            fontsize=9)
        ax.set_xscale("log")
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.set_ylim(0, None)
        ax.set_xlabel(over)
        ax.set_ylabel("alpha")
        title = ("no residual" if not res else f"residual gamma={g:g}") if over == "lam" else "residual, lam = 1"
        ax.set_title(f"{title}: recency fails below", fontsize=9)
        ax.legend(fontsize=9)
    fig.tight_layout()
    return ReportFigure("boundary_curves", f"Where recency fails (n <= {grid.n_max}), {grid.norm}",
                        "Per layer, the set of alpha where recency fails at some n <= n_max (shaded, below the "
                        "curve), joined over lam (and over gamma at lam = 1); each point is a region with ends "
                        "certified by exact decisions (lnrecency region), x marks the certified end in lam (gamma) "
                        "of recency at alpha = 0; the joining lines between points are only a guide.", fig)


OUTPUT_NAMES = ("sweep.json", *(f"phase_diagram.{x}" for x in ("md", "csv", "json", "png", "pdf")))


def write_sweep(out: str | Path, grid: SweepGrid, *, scheduler: str = "local", workers: int = 2,
                progress: bool | None = None, curves: tuple = (), curve_points: int = 12) -> list[Path]:
    """Sweep and write phase_diagram.{md,csv,json,png,pdf} and sweep.json into ``out`` atomically; with
    ``curves`` (layers), also boundary_curves.{json,png,pdf} (:func:`boundary_curves`)."""

    final = Path(out)
    check_time(grid, scheduler=scheduler, workers=workers, curves=tuple(curves), curve_points=curve_points)
    with staged_directory(final, OUTPUT_NAMES) as stage:
        rows = sweep(grid, scheduler=scheduler, workers=workers, progress=progress)
        files = phase_table(rows, grid).write(stage, ("md", "csv", "json"))
        files += phase_figure(rows, grid).write(stage)
        if curves:
            pts = boundary_curves(grid, tuple(curves), curve_points, scheduler=scheduler, workers=workers,
                                  progress=progress)
            files.append(atomic_write_text(stage / "boundary_curves.json", json.dumps(pts, indent=1) + "\n"))
            files += curves_figure(pts, grid).write(stage)
        names = sorted([p.name for p in files] + ["sweep.json"])
        meta = {"grid": {"norm": grid.norm, "residual_gamma": [list(x) for x in grid.residual],
                         "lams": list(grid.lams), "alphas": list(grid.alphas), "layers": grid.layers,
                         "n_max": grid.n_max}, "files": names}
        atomic_write_text(stage / "sweep.json", json.dumps(meta, indent=1) + "\n")
        publish(stage, final)
    return [final / n for n in names]
