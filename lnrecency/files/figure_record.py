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


#: where a colour bar sits beside its panel, in the panel's axes coordinates (x from, x to), and its tick marks' length
BAR_X = (1.03, 1.08)
TICK_X = 0.015


def bar_ticks(lo: float, hi: float, ticks=None) -> list[tuple[float, str]]:
    """A bar's (value, label) pairs: at most four values (matplotlib's locator, nbins 3) inside [lo, hi], or the
    values ``ticks``, each written with the fewest significant digits that give it back to within a millionth of the
    range (so that neighbours never read the same)."""
    from matplotlib.ticker import MaxNLocator

    span = hi - lo
    values = [float(v) for v in (MaxNLocator(nbins=3).tick_values(lo, hi) if ticks is None else ticks)
              if lo - 1e-9 * span <= v <= hi + 1e-9 * span]
    out = []
    for v in values:
        text = next(t for t in (f"{v:.{k}g}" for k in range(1, 18)) if abs(float(t) - v) <= 1e-6 * span)
        out.append((v, "0" if float(text) == 0 else text))
    return out


def colour_bar(ax, im, label: str | None = None, ticks=None):
    """A colour bar for the image ``im`` of the panel ``ax``, at its right: the image's colour map over its colour
    limits as one 256-colour image, framed, with at most four values marked beside it (:func:`bar_ticks`; ``ticks``:
    these values instead). Drawn into the panel itself (an image, a frame, tick marks and labels placed in the
    panel's axes coordinates), not as an axes of its own: a figure of 20 panels then creates 20 axes instead of 40,
    and draws each bar's four labels instead of a whole value axis (the heatmaps' drawing time was mostly their
    bars'). Matplotlib's ``Colorbar`` would draw the gradient as 256 vector cells. ``label``: a name for the values,
    written along the bar's right side. Returns the bar's image."""
    from matplotlib.image import BboxImage
    from matplotlib.lines import Line2D
    from matplotlib.patches import Rectangle
    from matplotlib.transforms import Bbox, TransformedBbox, offset_copy

    lo, hi = _nonsingular(*im.get_clim())  # a constant image: a bar about its value, as Colorbar
    x0, x1 = BAR_X
    bar = BboxImage(TransformedBbox(Bbox.from_extents(x0, 0.0, x1, 1.0), ax.transAxes), cmap=im.get_cmap(),
                    interpolation="nearest", origin="lower")
    bar.set_data(np.linspace(lo, hi, 256)[:, None])
    bar.set_clim(lo, hi)
    bar.set_clip_on(False)
    ax.add_artist(bar)
    ax.add_patch(Rectangle((x0, 0.0), x1 - x0, 1.0, transform=ax.transAxes, fill=False, lw=0.8, clip_on=False))
    for value, text in bar_ticks(lo, hi, ticks):
        y = (value - lo) / (hi - lo)
        ax.add_line(Line2D([x1, x1 + TICK_X], [y, y], transform=ax.transAxes, color="black", lw=0.8, clip_on=False))
        ax.text(x1 + TICK_X, y, text, transform=offset_copy(ax.transAxes, fig=ax.figure, x=2, units="points"),
                fontsize=9, ha="left", va="center", clip_on=False)
    if label is not None:  # beyond the longest label (at most about 8 characters of 9 pt)
        ax.text(x1 + TICK_X, 0.5, label, transform=offset_copy(ax.transAxes, fig=ax.figure, x=44, units="points"),
                fontsize=9, ha="left", va="center", rotation=90, clip_on=False)
    return bar
