"""What a claim shows in the report and the notebooks, registered by claim ID: :func:`views`.

A claim's evaluator (lnrecency.claims) decides; its views, in a module of this sub-package named like the claim's
module (``report/views/parameter_free/c3_residual.py`` for ``claims/parameter_free/c3_residual.py``),
show: report tables (:class:`TableOutput`), figures (:class:`FigureOutput`) and notebook cells (Markdown text, a
function whose body is the code cell (:func:`lnrecency.report.views.cells.cell_source`), or one of its own outputs).
Builders take a :class:`lnrecency.report.data.ReportData` and are the functions themselves, never names.
:mod:`lnrecency.report.views.registry` imports the view modules in the claims' order and reads :data:`VIEWS`; the
report's table and figure lists and the notebooks derive from it.

Example (a claim's view module)::

    from lnrecency.report.views.outputs import TableOutput, views
    from lnrecency.report.views.shared import score_table

    def c3_scores(data):
        return score_table(data, "C3", "C3 with a residual: the verdict's Monte Carlo means")

    views("C3", module=__name__, tables=(TableOutput("c3_scores", "C3: the verdict's means", c3_scores),),
          notebook="03_residual_and_depth", cells=("The verdict's own Monte Carlo:", c3_scores))
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass
from functools import partial
from typing import Any, Callable

__all__ = ["TableOutput", "FigureOutput", "View", "views", "section", "VIEWS"]


@dataclass(frozen=True)
class TableOutput:
    """A report table: its file stem, one line for the report's index, and ``build(data) -> Table``
    (``data``: a :class:`lnrecency.report.data.ReportData`)."""

    stem: str
    line: str
    build: Callable[[Any], Any]


@dataclass(frozen=True)
class FigureOutput:
    """Report figures: one line for the index, ``build(data) -> [ReportFigure]`` and ``stems``: the file stems
    it writes, a tuple or a function of the report settings. ``parts`` > 1: ``build(data, part=k)`` draws the
    k-th share, so that two processes can split the work (:meth:`units`)."""

    line: str
    build: Callable[..., list]
    stems: tuple | Callable[[Any], list]
    parts: int = 1

    def names(self, settings: Any) -> list[str]:
        return list(self.stems(settings) if callable(self.stems) else self.stems)

    def units(self) -> list[tuple[str, Callable[[Any], list]]]:
        """(line, draw(data)) per share of the drawing work."""
        if self.parts > 1:
            return [(self.line, partial(self.build, part=k)) for k in range(self.parts)]
        return [(self.line, self.build)]


Cell = str | Callable | TableOutput | FigureOutput  # Markdown; a function whose body is a code cell; an output shown


@dataclass(frozen=True)
class View:
    """What one claim (``id``; a section without verdicts has its own id) shows: its ``tables``, ``figures`` and
    the ``cells`` of notebook ``notebook``, registered by ``module``."""

    id: str
    module: str
    description: str
    tables: tuple = ()
    figures: tuple = ()
    notebook: str | None = None
    cells: tuple = ()
    section: bool = False


#: id -> View, in registration order (the registry imports the view modules in the claims' order)
VIEWS: dict[str, View] = {}


def _register(entry: View) -> None:
    old = VIEWS.get(entry.id)
    if old is not None and old.module != entry.module:
        raise ValueError(f"the views of {entry.id!r} are registered twice: in {old.module} and in {entry.module}")
    VIEWS[entry.id] = entry


def _check_cells(cells: tuple, own: dict) -> tuple:
    cells = tuple(own.get(id(c), c) for c in cells)
    for c in cells:
        if not (isinstance(c, (str, TableOutput, FigureOutput)) or inspect.isfunction(c)):
            raise TypeError(f"a notebook cell must be Markdown text, a function or a report output; got "
                            f"{type(c).__name__}")
    return cells


def views(claim_id: str, *, module: str, tables: tuple = (), figures: tuple = (), notebook: str | None = None,
          cells: tuple = ()) -> None:
    """Register what claim ``claim_id`` (declared in :mod:`lnrecency.claims.catalog`) shows: report tables, figures
    and notebook cells. A cell that is the builder of one of its own tables or figures shows that output.
    ``module``: the view module (``__name__``), named like the claim's module under ``lnrecency.report.views``."""
    from lnrecency.claims.catalog import declared

    decl = declared(claim_id)
    if module != f"lnrecency.report.views.{decl.module}":
        raise ValueError(f"claim {claim_id} is declared in the catalogue with module {decl.module!r}; its views "
                         f"belong in lnrecency.report.views.{decl.module}, not {module}")
    own = {id(o.build): o for o in (*tables, *figures)}
    _register(View(claim_id, module, decl.title, tuple(tables), tuple(figures), notebook, _check_cells(cells, own)))


def section(section_id: str, description: str, *, module: str, tables: tuple = (), figures: tuple = (),
            notebook: str | None = None, cells: tuple = ()) -> None:
    """Register outputs and notebook cells that belong to no single verdict (``module``: ``__name__``)."""
    own = {id(o.build): o for o in (*tables, *figures)}
    _register(View(section_id, module, description, tuple(tables), tuple(figures), notebook,
                   _check_cells(cells, own), section=True))
