"""A run's verdicts kept with their typed evidence in the experiment cache, and read back only after checks.

``keep(results, quick=)`` stores a list of verdicts (every claim a report evaluates, at one setting) in the cache
(``<cache root>/regenerate/default``, ``.../quick``; the store of :mod:`lnrecency.files.store`); ``kept(quick=)`` reads
them back through the store's one validated reader, refusing a link on the way to any file it reads and any row not a
verdict of a claim the catalogue declares and ``keep`` may store; ``with_claims`` replaces some claims' rows with
fresh ones. Since issue 75, ``regenerate --claim ID`` takes the other claims' rows from the committed
docs/verdicts.json instead (a fresh clone needs nothing cached), so the regeneration no longer writes or reads this
store; it stays a checked way to keep a run's verdicts with their evidence.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

__all__ = ["keep", "kept", "keepable", "with_claims", "READS"]


def _folder(quick: bool) -> Path:
    from lnrecency.experiments.run_cache import folder

    return folder("regenerate") / ("quick" if quick else "default")


#: the files a kept result is read from: each goes through the one link check (:func:`kept`)
READS = ("evidence.json", "arrays.npz")
_FIX = "run python3 -m lnrecency.report.regenerate once without --claim"


def keepable() -> tuple[str, ...]:
    """The claims whose rows :func:`keep` stores: every claim of the catalogue that a report evaluates (not those on
    trained or real models, which come from their own caches)."""
    from lnrecency.claims.catalog import ids, trained_ids

    trained = set(trained_ids())
    return tuple(cid for cid in ids() if cid not in trained)


def _check_rows(results, where: str) -> list:
    """``results`` as a list of verdict rows, each a ClaimResult of a claim :func:`keep` stores (ValueError naming
    the first row that is not: a forged or foreign store is refused, never rendered)."""
    from lnrecency.inference.verdicts import ClaimResult

    allowed = set(keepable())
    if not isinstance(results, (tuple, list)):
        raise ValueError(f"--claim: {where!r} holds {type(results).__name__}, not a list of verdicts; {_FIX}")
    for q, r in enumerate(results):
        if not isinstance(r, ClaimResult):
            raise ValueError(f"--claim: {where!r} row {q} holds {type(r).__name__} {str(r)[:40]!r}, not a verdict; "
                             f"{_FIX}")
        if r.id not in allowed:
            from lnrecency.claims.catalog import ids

            why = ("is on trained or real models; its rows are never kept" if r.id in ids()
                   else "is not in the catalogue")
            raise ValueError(f"--claim: {where!r} row {q} is for claim {str(r.id)[:40]!r}, which {why}; the kept "
                             f"rows are of {', '.join(sorted(allowed))}; {_FIX}")
    return list(results)


def keep(results: list, *, quick: bool) -> Path:
    """Store ``results`` (every claim a report evaluates, at one setting) as the last full run's."""
    from lnrecency.experiments.run_cache import make_folder
    from lnrecency.files.atomic import atomic_write_bytes, atomic_write_text
    from lnrecency.files.store import dumps

    results = _check_rows(results, "the rows to keep")
    where = make_folder(_folder(quick))
    text, arrays = dumps(tuple(results))
    atomic_write_bytes(where / "arrays.npz", arrays)
    atomic_write_text(where / "evidence.json", text)
    return where


def kept(*, quick: bool) -> list:
    """The last full run's results at one setting; ValueError (naming the fix) when there are none, they cannot be
    read, a file they are read from is a symbolic link, or a row is not one :func:`keep` stores (a claim not in the
    catalogue, a claim on trained models, something that is not a verdict)."""
    from lnrecency.experiments.run_cache import link_on_the_way
    from lnrecency.files.store import StoreError, loads

    where = _folder(quick)
    for name in READS:  # never read through a link: the store is the cache's, not what a link points at
        link = link_on_the_way(where / name)
        if link is not None:
            raise ValueError(f"--claim: {str(link)!r} is a symbolic link, not a file or folder lnrecency made; remove "
                             f"it and {_FIX}")
    if not (where / "evidence.json").is_file():
        raise ValueError(f"--claim needs the verdicts of a full regeneration, kept in {str(where)!r}; there are none: "
                         f"{_FIX}")
    try:
        results = loads(where)  # the store's reader opens each file without following a link, too
    except StoreError as exc:
        raise ValueError(f"--claim: the kept verdicts in {str(where)!r} cannot be read ({exc}); {_FIX}") from None
    if not isinstance(results, tuple):
        raise ValueError(f"--claim: {str(where)!r} holds {type(results).__name__}, not a list of verdicts; {_FIX}")
    return _check_rows(results, str(where))


def with_claims(ids: list[str], *, quick: bool, evaluate, progress=sys.stderr) -> list:
    """The last full run's results at one setting with the rows of ``ids`` evaluated afresh (in catalogue order;
    a claim that was not there before is added). One progress line per claim and setting."""
    from lnrecency.claims.catalog import ids as catalogue

    old = kept(quick=quick)
    fresh = []
    for cid in ids:
        start = time.perf_counter()
        rows = evaluate([cid], quick=quick)
        fresh += rows
        if progress is not None:
            print(f"{cid}: {len(rows)} row(s) at the {'quick' if quick else 'default'} settings in "
                  f"{time.perf_counter() - start:.1f} s", file=progress, flush=True)
    order = {cid: q for q, cid in enumerate(catalogue())}
    out = [r for r in old if r.id not in ids] + fresh
    return sorted(out, key=lambda r: order.get(r.id, len(order)))  # stable: each claim's rows keep their order
