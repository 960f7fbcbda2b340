"""The report's figures (matplotlib, PNG and PDF): each claim's are registered by its ID in its view module
(lnrecency.report.views); :data:`FIGURES` lists them all, in report order; :class:`Drawing` draws them.

Figures are ``matplotlib.figure.Figure`` objects (no pyplot state): saving renders them with the Agg (PNG) and
PDF canvases whatever the interactive backend is, and a notebook can ``display`` them. Builders take a
:class:`~lnrecency.report.data.ReportData` and return :class:`ReportFigure` records.

Drawing is most of a report's time. Two processes share it (:func:`start_helper`: each claims the next unit from
a shared counter), and a unit whose inputs were drawn before is copied from the figure cache
(:mod:`lnrecency.files.figure_cache`) instead of drawn: the same bytes either way.
"""
from __future__ import annotations

import hashlib
import json
import multiprocessing as mp
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Callable

from lnrecency.files.figure_cache import FigureCache
from lnrecency.files.figure_record import ReportFigure
from lnrecency.report.data import ReportData
from lnrecency.report.views.outputs import FigureOutput
from lnrecency.report.views.registry import VIEW_LIST
from lnrecency.runtime.child import worker_init

__all__ = ["ReportFigure", "FIGURES", "build_figures", "figure_names", "drawing_units", "Drawing",
           "start_helper", "claim_next", "forget_helper", "figure_cache", "evidence_digest", "PURE_UNITS"]

#: every figure output of the report, in order
FIGURES: list[FigureOutput] = [f for v in VIEW_LIST for f in v.figures]
#: per drawing unit of :data:`FIGURES`: whether its view is parameter-free (draws only what the report computes
#: from its settings, never a cached experiment)
PURE_UNITS: list[bool] = [".parameter_free." in v.module for v in VIEW_LIST for f in v.figures for _ in f.units()]


def drawing_units(outputs: list[FigureOutput] | None = None) -> list[tuple[str, Callable[[ReportData], list]]]:
    """:data:`FIGURES` (or ``outputs``) as units of drawing work, in order: an output drawn in ``parts`` (the score
    heatmaps) becomes one unit per part, so that two processes can share it."""
    return [unit for f in (FIGURES if outputs is None else outputs) for unit in f.units()]


def figure_names(settings) -> list[str]:
    """File stems of every figure :data:`FIGURES` draws for these report settings."""
    return [name for f in FIGURES for name in f.names(settings)]


def build_figures(data: ReportData) -> list[ReportFigure]:
    return [fig for f in FIGURES for fig in f.build(data)]


@dataclass
class Drawing:
    """The report's drawing units (:func:`drawing_units`) and how they are drawn: ``write`` (False: only computed,
    for the evidence), ``cache`` and ``inputs`` (what every unit draws from: the report's settings, or the digest
    of the evidence it renders; None: no cache); only a parameter-free unit (``pure``) is cached, since the others
    read the experiment cache or say which of its runs exist; ``names``: the figure names the report may write."""

    units: list
    write: bool = True
    cache: FigureCache | None = None
    inputs: str | None = None
    pure: tuple = ()  # per unit: whether it may be cached (PURE_UNITS for drawing_units())
    names: frozenset | None = None
    formats: tuple = ("png", "pdf")  # the files of each figure (ReportSettings.figure_formats)

    def draw(self, idx: int, data: ReportData, out: Path) -> list[tuple[ReportFigure, list[Path]]]:
        """Unit ``idx``'s figures written into ``out`` (copied from the cache when its inputs were drawn before,
        else drawn and kept there): [(figure without its matplotlib object, paths)]."""
        import matplotlib

        from lnrecency.experiments import run_cache

        cacheable = self.write and self.cache is not None and self.inputs is not None and (
            idx < len(self.pure) and self.pure[idx])
        key = self.cache.key(f"{idx}:{self.units[idx][0]}", self.inputs) if cacheable else None
        if key is not None:
            got = self.cache.get(key, out, self.names)
            if got is not None:
                return [(ReportFigure(f.name, f.title, f.caption, None, f.tight, f.not_run), paths)
                        for f, paths in got]
        before = len(run_cache.READS)  # every read, repeated ones too
        # titles at the top of their panels (axes.titley 1.0) instead of placed by measuring every tick label
        # above the panel (there are none: the same files, 5 % less drawing time); keep the caption, not the
        # matplotlib figure (tens of MB with colour bars)
        with matplotlib.rc_context({"axes.titley": 1.0}):
            drawn = [(replace(fig, figure=None), fig.write(out, self.formats) if self.write else [])
                     for fig in self.units[idx][1](data)]
        if key is not None and len(run_cache.READS) == before:  # it read no cached experiment
            self.cache.put(key, drawn)
        return drawn


def figure_cache(settings, inputs: str | None, frozen: bool, use: bool) -> dict:
    """The figure cache of a build (lnrecency.files.figure_cache), as :class:`Drawing`'s fields: in
    the cache root, keyed by the evidence's digest (``inputs``, a report --from: None when the evidence changed
    while it was read) or by the report's settings; none for a build that keeps its data (the evidence needs every
    number), or a hermetic one (--no-cache)."""
    from lnrecency.experiments import run_cache
    from lnrecency.files.figure_cache import FigureCache

    if not use or run_cache.cache_label() == run_cache.HERMETIC or (frozen and inputs is None):
        return {}
    if not frozen:
        inputs = json.dumps({"settings": asdict(settings)}, sort_keys=True, default=str)
    return {"cache": FigureCache(run_cache.cache_root(), settings.figure_formats), "inputs": inputs}


def evidence_digest(folder: str | Path) -> str | None:
    """SHA-256 of the evidence files a report --from reads (evidence.json, arrays.npz; never through a link), or
    None when they cannot be read so (the reader then refuses them by name)."""
    from lnrecency.files.readers import open_plain
    from lnrecency.files.store import MAX_ARRAY_BYTES, MAX_JSON_BYTES

    h = []
    try:
        for name, most in (("evidence.json", MAX_JSON_BYTES), ("arrays.npz", MAX_ARRAY_BYTES)):
            with open_plain(Path(folder) / name, name, most) as fh:
                digest = hashlib.sha256()
                for block in iter(lambda: fh.read(1 << 20), b""):
                    digest.update(block)
            h.append(digest.hexdigest())
    except (ValueError, OSError):
        return None
    return "evidence " + " ".join(h)


_HELPER: dict = {}  # what the forked figure helper inherits: drawing, data, counter


def claim_next(counter) -> int:
    """The next drawing unit's index from the counter shared by the two drawing processes."""
    with counter.get_lock():
        idx = counter.value
        counter.value += 1
    return idx


def _draw_claimed(out: str) -> list:
    """In the helper process: claim drawing units from the shared counter and draw them (data inherited by fork)
    until none is left; [(unit, [(figure without matplotlib object, paths)])]."""
    drawing, data, counter = _HELPER["drawing"], _HELPER["data"], _HELPER["counter"]
    drawn = []
    while (idx := claim_next(counter)) < len(drawing.units):
        drawn.append((idx, drawing.draw(idx, data, Path(out))))
    return drawn


def start_helper(drawing: Drawing, data: ReportData, out: Path):
    """A forked process drawing figures beside this one: both claim the next unit of drawing work from a shared
    counter (report order; the score heatmaps in four parts), so the work splits evenly whatever each unit
    costs; (pool, future, counter), or None without fork. Files and their order do not depend on who drew what
    (the helper computes the data of the units it claims with the same seeds)."""
    if "fork" not in mp.get_all_start_methods():
        return None
    # the canvases' modules (PDF's font subsetting among them: 0.2-0.3 s) imported before the fork, so that the helper
    # inherits them instead of importing its own copy at its first save
    import matplotlib.backends.backend_agg  # noqa: F401
    import matplotlib.backends.backend_pdf  # noqa: F401
    import PIL.PngImagePlugin  # noqa: F401

    ctx = mp.get_context("fork")
    counter = ctx.Value("i", 0)
    _HELPER.update(drawing=drawing, data=data, counter=counter)  # read by the forked child; nothing is pickled
    pool = ProcessPoolExecutor(max_workers=1, mp_context=ctx, initializer=worker_init)
    return pool, pool.submit(_draw_claimed, str(out)), counter


def forget_helper() -> None:
    """Drop what the forked helper inherited (it has its copy)."""
    _HELPER.clear()
