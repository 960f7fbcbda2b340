"""How a claim's module attaches its evaluator: the :func:`claim` decorator, in the claim's own module.

What is known about a claim before it is evaluated (its title, statements and their sources, the command that fills
it, its family) is declared once in :mod:`lnrecency.claims.catalog`. The module attaches to that declaration the
evaluator ``fn(*, quick, progress) -> [ClaimResult]`` and, for a claim on trained or real models, whether its
experiment is cached. What the claim shows (report tables, figures, notebook cells) is registered by its ID on the
report floor, in :mod:`lnrecency.report.views`: a claim module draws nothing.
:mod:`lnrecency.claims.registry` imports the claim modules, in its order, and reads :data:`REGISTERED`.

This module imports nothing heavy, so declaring costs nothing.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

__all__ = ["Claim", "claim", "REGISTERED"]


@dataclass(frozen=True)
class Claim:
    """One registered claim: ``id`` ("T1", "C2", ..., "P1", "TM1", "S2.1", ...), its ``module`` (where it was
    declared), a one-line ``description`` (the catalogue's title), its evaluator and whether it needs trained models
    (the catalogue's ``training``; then ``available(quick)`` says whether its experiment is cached)."""

    id: str
    module: str
    description: str
    evaluate: Callable[..., list]
    training: bool = False
    available: Callable[[bool], bool] | None = None


#: id -> Claim, in registration order (the registry imports the claim modules in its own order)
REGISTERED: dict[str, Claim] = {}


def _register(entry: Claim) -> None:
    old = REGISTERED.get(entry.id)
    if old is not None and old.module != entry.module:
        raise ValueError(f"claim id {entry.id!r} is declared twice: in {old.module} and in {entry.module}")
    REGISTERED[entry.id] = entry


def claim(claim_id: str, *, module: str | None = None, available: Callable[[bool], bool] | None = None) -> Callable:
    """Decorator: register the decorated ``evaluate(*, quick, progress) -> [ClaimResult]`` as the evaluator of
    ``claim_id`` (declared in :mod:`lnrecency.claims.catalog`, by the module that registers it). ``module``: the
    claim module that registers it (``__name__``; default: the evaluator's own module, which differs when the
    evaluator is made by a helper). ``available(quick)``: for a claim on trained or real models, whether its
    experiment is cached (the report evaluates it only then; it never trains). Returns the function unchanged."""
    from lnrecency.claims.catalog import declared

    decl = declared(claim_id)
    if decl.training and available is None:
        raise ValueError(f"claim {claim_id} needs an experiment: register it with available=fn(quick) -> bool")

    def register(fn: Callable) -> Callable:
        where = module or fn.__module__
        if where != f"lnrecency.claims.{decl.module}":
            raise ValueError(f"claim {claim_id} is declared in the catalogue with module {decl.module!r}; "
                             f"{where} registers it")
        _register(Claim(claim_id, where, decl.title, fn, decl.training, available))
        return fn
    return register
