"""A rendered figure: a matplotlib Figure with its file stem, title and caption, written atomically.

Kept below the experiments and the report (it imports matplotlib only when it draws), so that every layer that
makes figures (reproduce, sweep, the report) uses the one record and the one colour bar without importing the
report.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from lnrecency.files.atomic import atomic_save

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["ReportFigure", "colour_bar", "figure_problems", "MIN_POINTS"]

# PDF/PNG metadata without dates: the same seed gives the same bytes.
DPI = 110  # of the PNGs (and of anything rasterized in a PDF)
_META = {"pdf": {"CreationDate": None, "ModDate": None}, "png": {}}


#: the smallest text a figure may hold, in points (ticks, legends, annotations)
MIN_POINTS = 9


def figure_problems(fig: Figure, *, laid_out: bool = False) -> list[str]:
    """What a reader would trip on: text below :data:`MIN_POINTS`, and a legend entry for points (a marker, no
    line) that its panels do not draw. A legend of one panel speaks for that panel; a figure-level legend for
    every panel with data, unless its label names the panel ("left panel"). ``laid_out``: the caller has just laid
    the figure out (drawn it, or measured its tight bounding box), so its ticks and their labels exist: no second
    layout here."""
    from matplotlib.lines import Line2D
    from matplotlib.text import Text

    problems = []
    if not laid_out:
        fig.draw_without_rendering()  # ticks and their labels exist once laid out
    for text in fig.findobj(Text):
        if text.get_visible() and text.get_text().strip() and text.get_fontsize() < MIN_POINTS - 1e-9:
            problems.append(f"text {text.get_text()[:40]!r} at {text.get_fontsize():g} pt (at least {MIN_POINTS})")
    data_axes = [ax for ax in fig.axes if ax.lines or ax.collections]
    legends = [(ax.get_legend(), [ax]) for ax in fig.axes if ax.get_legend() is not None]
    legends += [(lg, data_axes) for lg in fig.legends]

    def points(line) -> bool:
        return (isinstance(line, Line2D) and line.get_marker() not in (None, "None", "", " ")
                and line.get_linestyle() in ("None", "none", "", " "))

    for legend, scope in legends:
        for handle, label in zip(legend.legend_handles, legend.get_texts()):
            if not points(handle):
                continue
            drawn = [any(points(line) and line.get_marker() == handle.get_marker() for line in ax.lines)
                     for ax in scope]
            if not (any(drawn) if "panel" in label.get_text() else drawn and all(drawn)):
                problems.append(f"legend entry {label.get_text()!r}: no such points in "
                                f"{'any panel' if not any(drawn) else 'every panel it speaks for'}")
    return problems


@dataclass
class ReportFigure:
    """A figure with its file stem, title and caption (the caption says what it shows). ``not_run``: the
    experiment that draws it is not cached: no picture (``figure`` None, nothing written), the caption says so in
    words with the command that runs it."""

    name: str
    title: str
    caption: str
    figure: Figure | None
    tight: bool = True  # bbox_inches="tight" when saving
    not_run: bool = False

    def write(self, out_dir: str | Path, formats: tuple[str, ...] = ("png", "pdf")) -> list[Path]:
        """Write ``name.png`` / ``name.pdf`` atomically.

        With ``tight``, the bounding box of everything drawn (``Figure.get_tightbbox`` at the saving dpi, padded
        by ``savefig.pad_inches``: what ``bbox_inches="tight"`` computes) is measured once and used for every
        format, instead of once per format (that measurement lays out every text: about as long as a draw).
        """
        if self.not_run:
            return []
        bbox = self._tight_bbox() if self.tight else None
        if os.environ.get("LNRECENCY_STRICT_FIGURES"):  # the test suite: a figure defect fails the build
            problems = figure_problems(self.figure, laid_out=self.tight)  # the tight box laid every text out
            if problems:
                raise ValueError(f"figure {self.name}: " + "; ".join(problems))
        paths = []
        for fmt in formats:
            path = Path(out_dir) / f"{self.name}.{fmt}"
            atomic_save(path, lambda tmp, f=fmt: self.figure.savefig(
                tmp, format=f, dpi=DPI, metadata=_META[f], bbox_inches=bbox))
            paths.append(path)
        return paths

    def _tight_bbox(self):
        import matplotlib
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        fig = self.figure
        dpi = fig.dpi
        try:
            fig.set_dpi(DPI)
            renderer = FigureCanvasAgg(fig).get_renderer()
            return fig.get_tightbbox(renderer).padded(matplotlib.rcParams["savefig.pad_inches"])
        finally:
            fig.set_dpi(dpi)


def _nonsingular(lo: float, hi: float, expander: float = 0.1) -> tuple[float, float]:
    """Colour limits a bar can span (matplotlib's ``transforms.nonsingular``, deprecated in 3.11): a
    non-finite end gives (-expander, expander); an interval narrower than 1e-15 of its ends' size is
    widened by ``expander`` times each end (by +-expander about 0)."""
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return -expander, expander
    lo, hi = min(lo, hi), max(lo, hi)
    size = max(abs(lo), abs(hi))
    if size < 1e6 * np.finfo(float).tiny / 1e-15:
        return -expander, expander
    if hi - lo <= size * 1e-15:
        if hi == 0 and lo == 0:
            return -expander, expander
        return lo - expander * abs(lo), hi + expander * abs(hi)
    return lo, hi


def colour_bar(ax, im, label: str | None = None):
    """A colour bar for the image ``im`` of the panel ``ax``, in a thin axes at its right: the image's
    colour map over its colour limits, drawn as one 256-colour image with the value axis beside it.
    Matplotlib's ``Colorbar`` draws the same gradient as 256 vector cells in an axes carved out of the
    panel's grid cell: with 20 panels a figure, 40% of the heatmaps' drawing time; and its rasterized form
    holds a full-figure raster per bar in the PDF renderer."""
    from matplotlib.ticker import MaxNLocator

    lo, hi = _nonsingular(*im.get_clim())  # a constant image: a bar about its value, as Colorbar
    cax = ax.inset_axes([1.03, 0.0, 0.05, 1.0])
    cax.imshow(np.linspace(lo, hi, 256)[:, None], cmap=im.get_cmap(), vmin=lo, vmax=hi, origin="lower",
               extent=(0.0, 1.0, lo, hi), aspect="auto", interpolation="nearest")
    cax.set_xticks([])
    cax.yaxis.tick_right()
    # at most four values on the bar (matplotlib's default puts up to nine on a panel-high bar): the scale reads the
    # same, and a figure of 20 bars draws about 13 % faster (their tick labels are most of its text)
    cax.yaxis.set_major_locator(MaxNLocator(nbins=3))
    cax.tick_params(labelsize=9)
    if label is not None:
        cax.yaxis.set_label_position("right")
        cax.set_ylabel(label, fontsize=9)
    return cax
