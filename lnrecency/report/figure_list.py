"""The report's figures (matplotlib, PNG and PDF): each claim's are registered by its ID in its view module
(lnrecency.report.views); :data:`FIGURES` lists them all, in report order.

Figures are ``matplotlib.figure.Figure`` objects (no pyplot state): saving renders them with the Agg (PNG) and
PDF canvases whatever the interactive backend is, and a notebook can ``display`` them. Builders take a
:class:`~lnrecency.report.data.ReportData` and return :class:`ReportFigure` records.
"""
from __future__ import annotations

from typing import Callable

from lnrecency.files.figure_record import ReportFigure
from lnrecency.report.data import ReportData
from lnrecency.report.views.outputs import FigureOutput
from lnrecency.report.views.registry import VIEW_LIST

__all__ = ["ReportFigure", "FIGURES", "build_figures", "figure_names", "drawing_units"]

#: every figure output of the report, in order
FIGURES: list[FigureOutput] = [f for v in VIEW_LIST for f in v.figures]


def drawing_units(outputs: list[FigureOutput] | None = None) -> list[tuple[str, Callable[[ReportData], list]]]:
    """:data:`FIGURES` (or ``outputs``) as units of drawing work, in order: an output drawn in ``parts`` (the score
    heatmaps) becomes one unit per part, so that two processes can share it."""
    return [unit for f in (FIGURES if outputs is None else outputs) for unit in f.units()]


def figure_names(settings) -> list[str]:
    """File stems of every figure :data:`FIGURES` draws for these report settings."""
    return [name for f in FIGURES for name in f.names(settings)]


def build_figures(data: ReportData) -> list[ReportFigure]:
    return [fig for f in FIGURES for fig in f.build(data)]
