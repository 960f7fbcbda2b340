"""How a claim's module attaches its evaluator: the :func:`claim` decorator, in the claim's own module.

What is known about a claim before it is evaluated (its title, statements and their sources, the command that fills
it, its family) is declared once in :mod:`lnrecency.claims.catalog`. The module attaches to that declaration the
evaluator ``fn(*, quick) -> [ClaimResult]`` and what it owns in the report and the notebooks: tables
(:class:`TableOutput`), figures (:class:`FigureOutput`) and notebook cells (Markdown text, or a function whose
body is the code cell; see :func:`cell_source`). Builders and cells are the functions themselves, never names.
:mod:`lnrecency.claims.registry` imports the claim modules, in its order, and reads :data:`REGISTERED`;
the report's table and figure lists and the notebooks derive from it.

This module imports nothing heavy, so declaring costs nothing.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass
from functools import partial
from typing import Any, Callable

__all__ = ["TableOutput", "FigureOutput", "Claim", "claim", "section", "REGISTERED"]


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
class Claim:
    """One registered claim: ``id`` ("T1", "C2", ..., "P1", "TM1", "S2.1", ...; a section without verdicts
    has ``evaluate`` None), its ``module`` (where it was declared), a one-line ``description`` (the catalogue's
    title), what it owns (report tables and figures, notebook cells in ``notebook``) and whether it needs trained
    models (the catalogue's ``training``)."""

    id: str
    module: str
    description: str
    evaluate: Callable[..., list] | None
    tables: tuple = ()
    figures: tuple = ()
    notebook: str | None = None
    cells: tuple = ()
    training: bool = False
    available: Callable[[bool], bool] | None = None  # training: whether its experiment is cached, per quick


#: id -> Claim, in registration order (the registry imports the claim modules in its own order)
REGISTERED: dict[str, Claim] = {}


def _register(entry: Claim) -> None:
    old = REGISTERED.get(entry.id)
    if old is not None and old.module != entry.module:
        raise ValueError(f"claim id {entry.id!r} is declared twice: in {old.module} and in {entry.module}")
    REGISTERED[entry.id] = entry


def _check_cells(cells: tuple) -> tuple:
    for c in cells:
        if not (isinstance(c, (str, TableOutput, FigureOutput)) or inspect.isfunction(c)):
            raise TypeError(f"a notebook cell must be Markdown text, a function or a report output; got "
                            f"{type(c).__name__}")
    return tuple(cells)


def claim(claim_id: str, *, tables: tuple = (), figures: tuple = (), notebook: str | None = None,
          cells: tuple = (), module: str | None = None, available: Callable[[bool], bool] | None = None) -> Callable:
    """Decorator: register the decorated ``evaluate(*, quick, progress) -> [ClaimResult]`` as the evaluator of
    ``claim_id`` (declared in :mod:`lnrecency.claims.catalog`, by the module that registers it), with the report
    tables, figures and notebook cells it owns. A cell that is the builder of one of the claim's own tables or
    figures shows that output. ``module``: the claim module that registers it (``__name__``; default: the
    evaluator's own module, which differs when the evaluator is made by a helper). ``available(quick)``: for a claim
    on trained or real models, whether its experiment is cached (the report evaluates it only then; it never
    trains). Returns the function unchanged."""
    from lnrecency.claims.catalog import declared

    own = {id(o.build): o for o in (*tables, *figures)}
    cells = _check_cells(tuple(own.get(id(c), c) for c in cells))
    decl = declared(claim_id)
    if decl.training and available is None:
        raise ValueError(f"claim {claim_id} needs an experiment: register it with available=fn(quick) -> bool")

    def register(fn: Callable) -> Callable:
        where = module or fn.__module__
        if where != f"lnrecency.claims.{decl.module}":
            raise ValueError(f"claim {claim_id} is declared in the catalogue with module {decl.module!r}; "
                             f"{where} registers it")
        _register(Claim(claim_id, where, decl.title, fn, tuple(tables), tuple(figures), notebook, cells,
                        decl.training, available))
        return fn
    return register


def section(section_id: str, description: str, *, module: str, tables: tuple = (), figures: tuple = (),
            notebook: str | None = None, cells: tuple = ()) -> None:
    """Register outputs and notebook cells that belong to no single verdict (``module``: ``__name__``)."""
    _register(Claim(section_id, module, description, None, tuple(tables), tuple(figures), notebook,
                    _check_cells(cells)))


