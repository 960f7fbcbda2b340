"""Registry of every claim check: id -> evaluator; ``evaluate(ids)`` runs them and returns ClaimResults.

Ids: "T1" (Theorem 1, seed text), "C2".."C9" (SPEC claims 2-9), "P1".."P9" (the authors' printed
derivation: P1-P7 symbolic, lnrecency.claims.printed; P8-P9 numeric, lnrecency.claims.printed_numeric).
A module may return several ClaimResults with the same id: one per setting group (confirmed in some
settings, refuted in others).
"""
from __future__ import annotations

import importlib
import sys
from typing import Callable, Iterable

from tqdm import tqdm

from lnrecency.claims.catalog import CATALOG
from lnrecency.verdicts import ClaimResult

#: id -> (module under lnrecency.claims, one-line description), derived from the catalog
CLAIMS: dict[str, tuple[str, str]] = {c.id: (c.module, c.description) for c in CATALOG if c.module}


def _runner(module: str) -> Callable[..., list[ClaimResult]]:
    mod = importlib.import_module(f"lnrecency.claims.{module}")
    if module == "printed":
        return lambda *, quick, progress: list(mod.evaluate_printed_symbolic())
    return mod.evaluate


def check_ids(ids: Iterable[str] | None) -> list[str]:
    if ids is None:
        return list(CLAIMS)
    if isinstance(ids, str):
        ids = [ids]
    out = []
    for cid in ids:
        key = str(cid).upper()
        if key not in CLAIMS:
            raise ValueError(f"claim id must be one of {', '.join(CLAIMS)}; got {cid!r}")
        if key not in out:
            out.append(key)
    return out


def evaluate(ids: Iterable[str] | None = None, *, quick: bool = False,
             progress: bool | None = None) -> list[ClaimResult]:
    """Evaluate the claims ``ids`` (all by default); results in registry order, filtered to ``ids``.

    ``quick``: smaller grids and sample sizes (the pytest default); ``progress``: a tqdm bar over the
    claim modules (None: only when stderr is a terminal).
    """
    wanted = check_ids(ids)
    modules = []
    for cid in wanted:
        if CLAIMS[cid][0] not in modules:
            modules.append(CLAIMS[cid][0])
    show = sys.stderr.isatty() if progress is None else bool(progress)
    results: list[ClaimResult] = []
    for module in tqdm(modules, disable=not show, desc="claims", unit="module", leave=False):
        results += [r for r in _runner(module)(quick=quick, progress=False) if r.id in wanted]
    order = {cid: q for q, cid in enumerate(CLAIMS)}
    return sorted(results, key=lambda r: order.get(r.id, len(order)))
