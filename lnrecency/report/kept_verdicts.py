"""The verdicts of the last full regeneration, kept so that ``regenerate --claim ID`` evaluates one claim only.

A full ``python3 -m lnrecency.report.readme`` (or ``lnrecency.report.regenerate``) evaluates every claim the
report evaluates, at the default and the ``--quick`` settings, and keeps both lists, with their typed evidence,
in the experiment cache (``<cache root>/regenerate/default``, ``.../quick``; the store of
:mod:`lnrecency.files.store`, read back by its one validated reader). ``--claim ID`` evaluates that claim at both
settings and takes every other claim's rows from there: what the README, docs/verdicts.json and the claim pages
are written from is then the last full run's, with this claim's rows afresh. The test suite checks that the
README and docs/verdicts.json agree with the catalogue (tests/report/test_readme_table.py).
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

__all__ = ["keep", "kept", "with_claims"]


def _folder(quick: bool) -> Path:
    from lnrecency.experiments.run_cache import folder

    return folder("regenerate") / ("quick" if quick else "default")


def keep(results: list, *, quick: bool) -> Path:
    """Store ``results`` (every claim a report evaluates, at one setting) as the last full run's."""
    from lnrecency.experiments.run_cache import make_folder
    from lnrecency.files.atomic import atomic_write_bytes, atomic_write_text
    from lnrecency.files.store import dumps

    where = make_folder(_folder(quick))
    text, arrays = dumps(tuple(results))
    atomic_write_bytes(where / "arrays.npz", arrays)
    atomic_write_text(where / "evidence.json", text)
    return where


def kept(*, quick: bool) -> list:
    """The last full run's results at one setting; ValueError (naming the fix) when there are none or they cannot
    be read."""
    from lnrecency.experiments.run_cache import link_on_the_way
    from lnrecency.files.store import StoreError, loads

    where = _folder(quick)
    link = link_on_the_way(where / "evidence.json")
    if link is not None:  # never read through a link: the store is the cache's, not what a link points at
        raise ValueError(f"--claim: {str(link)!r} is a symbolic link, not a folder lnrecency made; remove it and run "
                         f"python3 -m lnrecency.report.regenerate once without --claim")
    if not (where / "evidence.json").is_file():
        raise ValueError(f"--claim needs the verdicts of a full regeneration, kept in {str(where)!r}; there are none: "
                         f"run python3 -m lnrecency.report.regenerate once without --claim")
    try:
        results = loads(where)
    except StoreError as exc:
        raise ValueError(f"--claim: the kept verdicts in {str(where)!r} cannot be read ({exc}); run python3 -m "
                         f"lnrecency.report.regenerate once without --claim") from None
    if not isinstance(results, tuple):
        raise ValueError(f"--claim: {str(where)!r} holds {type(results).__name__}, not a list of verdicts")
    return list(results)


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
