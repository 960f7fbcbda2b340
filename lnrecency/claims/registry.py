"""Registry of every claim check: id -> evaluator; ``evaluate(ids)`` runs them and returns ClaimResults.

Ids: "T1" (Theorem 1, seed text), "C2".."C9" (docs/model.md, claims C2-C9), "P1".."P9" (the authors' printed
derivation: P1-P7 symbolic, lnrecency.claims.printed; P8-P9 numeric, lnrecency.claims.printed_numeric).
A module may return several ClaimResults with the same id: one per setting group (confirmed in some
settings, refuted in others).
"""
from __future__ import annotations

import importlib
import sys
from typing import Iterable

from tqdm import tqdm

from lnrecency.claims.catalog import CATALOG
from lnrecency.verdicts import ClaimResult

#: id -> (module under lnrecency.claims, one-line description), derived from the catalog
CLAIMS: dict[str, tuple[str, str]] = {c.id: (c.module, c.description) for c in CATALOG if c.module}
#: the ids whose verdicts need trained models (torch; minutes of training, cached): evaluated only when
#: named, or with ``trained=True``
TRAINED: tuple[str, ...] = tuple(c.id for c in CATALOG if c.module and c.training)


def _run(module: str, wanted: list[str], quick: bool) -> list[ClaimResult]:
    """The module's results for the ``wanted`` ids. A module holding several claims maps each id to its
    own evaluator (``BY_ID``), so asking for one of them does not evaluate the others."""
    mod = importlib.import_module(f"lnrecency.claims.{module}")
    by_id = getattr(mod, "BY_ID", None)
    if by_id is None:
        results = mod.evaluate(quick=quick, progress=False)
    else:
        results = [r for cid in by_id if cid in wanted for r in by_id[cid](quick=quick)]
    return [r for r in results if r.id in wanted]


def check_ids(ids: Iterable[str] | None, *, trained: bool = False) -> list[str]:
    """The claim ids asked for (upper-cased, deduplicated, validated); None: every claim, those that need
    trained models only with ``trained``."""
    if ids is None:
        return [cid for cid in CLAIMS if trained or cid not in TRAINED]
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
             progress: bool | None = None, trained: bool = False) -> list[ClaimResult]:
    """Evaluate the claims ``ids`` (all by default); results in registry order, filtered to ``ids``.

    ``quick``: smaller grids and sample sizes (the pytest default); ``progress``: a tqdm bar over the
    claim modules (None: only when stderr is a terminal); ``trained``: with ``ids=None``, the claims on
    trained models too (:data:`TRAINED`).
    """
    wanted = check_ids(ids, trained=trained)
    modules = []
    for cid in wanted:
        if CLAIMS[cid][0] not in modules:
            modules.append(CLAIMS[cid][0])
    show = sys.stderr.isatty() if progress is None else bool(progress)
    results: list[ClaimResult] = []
    for module in tqdm(modules, disable=not show, desc="claims", unit="module", leave=False):
        results += _run(module, wanted, quick)
    order = {cid: q for q, cid in enumerate(CLAIMS)}
    return sorted(results, key=lambda r: order.get(r.id, len(order)))
