"""A fresh report's rows on trained models, decided from the per-run rows their experiments publish in docs/ (issue 85,
item 2): nothing needs to be cached or trained for them.

For every claim whose experiment publishes its runs (:mod:`lnrecency.claims.published`): when the claim was not
evaluated here (its experiment is not cached), its rows of the verdict snapshot docs/verdicts.json are used, each only
after its verdict has been decided again from the published runs by the plan's own rule and found the same (a row
that does not follow is refused: the claim reads "damaged", naming the row and both verdicts). Each row says so in its
finding ("decided here from the N runs published in docs/X.json ...; retrain with ..."). Where the claim was evaluated
from the cache, the cache's rows are kept if they agree with the published runs; if they do not, the published rows
are shown and the finding says that the cache disagrees (a cached run of other code or another plan text is never
silently preferred)."""
from __future__ import annotations

import functools
from pathlib import Path

__all__ = ["with_published", "SNAPSHOT"]

SNAPSHOT = Path(__file__).resolve().parents[2] / "docs" / "verdicts.json"


def _stored_rows(cid: str) -> list[dict]:
    """docs/verdicts.json's rows of ``cid`` (the file read and checked once per process and modification)."""
    return [r for r in _snapshot_rows(SNAPSHOT.stat().st_mtime_ns if SNAPSHOT.is_file() else 0) if r["id"] == cid]


@functools.lru_cache(maxsize=2)
def _snapshot_rows(_mtime: int) -> tuple:
    from lnrecency.report.readme import read_snapshot

    return tuple(read_snapshot(SNAPSHOT).get("rows") or [])


def _result(row: dict, pub, lead: str):
    from lnrecency.claims.published import PublishedRuns
    from lnrecency.inference.qualifiers import Qualifiers
    from lnrecency.inference.verdicts import ClaimResult

    quals = Qualifiers.from_json(row["qualifiers"]) if isinstance(row.get("qualifiers"), dict) else None
    return ClaimResult(row["id"], row["source"], row["statement"], dict(row["setting"]), row["verdict"],
                       PublishedRuns(file=pub.file, runs=pub.runs, command=pub.command, redecided=row["verdict"]),
                       f"{lead[0].upper()}{lead[1:]}. {row.get('finding', '')}".strip(), quals)


def _damaged(cid: str, reason: str):
    from lnrecency.claims.catalog import declared, result_source
    from lnrecency.inference.evidence import Damaged
    from lnrecency.inference.verdicts import ClaimResult

    s = declared(cid).statements[0].text
    return ClaimResult(cid, result_source(cid, s), s, {}, "inconclusive", Damaged(reason=reason), reason)


def _published_for(cid: str, mine: list, quick: bool = False):
    """``cid``'s rows: ``mine`` (evaluated here) where they agree with the published runs, else the published ones;
    None when the claim's experiment publishes no runs. ``quick``: ``mine`` are a quick run's rows, which decide
    nothing: the published ones are shown, and say so."""
    from lnrecency.claims.catalog import label
    from lnrecency.claims.published import redecided

    try:
        pub = redecided(cid)
    except ValueError as exc:
        return [_damaged(cid, str(exc))]
    if pub is None:
        return None
    if mine and quick:
        lead = f"the cache holds this claim's quick runs, which decide nothing; shown here: {pub.note}"
    elif mine:
        cached = [(r.statement, label(cid, r.statement, r.verdict)) for r in mine]  # as the registry labels them
        if cached == list(pub.rows):
            return mine
        lead = (f"the cached runs decide {', '.join(v for _, v in cached)}, the {pub.runs} runs published in "
                f"{pub.file} {', '.join(v for _, v in pub.rows)}: shown here, the published ones ({pub.note})")
    else:
        lead = pub.note
    stored = _stored_rows(cid)
    said = [(r["statement"], r["verdict"]) for r in stored]
    if said != list(pub.rows):
        return [_damaged(cid, f"docs/verdicts.json's rows of {cid} say {', '.join(v for _, v in said) or 'nothing'}; "
                              f"the {pub.runs} runs published in {pub.file} decide "
                              f"{', '.join(v for _, v in pub.rows)} by the plan's rule: the stored rows are refused")]
    for r, interval in zip(stored, pub.intervals or [None] * len(stored)):
        q = r.get("qualifiers") or {}
        have = (q.get("low"), q.get("high")) if q.get("low") is not None else None
        if have != interval:  # the same code on the same JSON values gives the same bits (tests/experiments)
            return [_damaged(cid, f"docs/verdicts.json's {cid} row gives the interval {have}; the {pub.runs} runs "
                                  f"published in {pub.file} give {interval} by the plan's rule: the stored rows are "
                                  f"refused")]
    return [_result(r, pub, lead) for r in stored]


def with_published(results: list, claims=None, *, quick: bool = False) -> list:
    """``results`` with every claim of ``claims`` (default every claim) whose experiment publishes its runs decided
    from them (module docstring), in the catalogue's order; the other rows as they were. ``quick``: ``results`` are
    a quick report's (a cached quick run decides nothing)."""
    from lnrecency.claims.catalog import ids, trained_ids

    by: dict = {}
    for r in results:
        by.setdefault(r.id, []).append(r)
    for cid in trained_ids():
        if claims is not None and cid not in claims:
            continue
        mine = [r for r in by.get(cid, []) if not r.not_run]
        rows = _published_for(cid, mine, quick)
        if rows is not None:
            by[cid] = rows
    order = {c: k for k, c in enumerate(ids())}
    return [r for cid in sorted(by, key=lambda c: order.get(c, len(order))) for r in by[cid]]
