"""Findings as data (issues 66, 75): one typed :class:`Finding` per decided statement and setting group, from which
the README's counts and table, docs/verdicts.json's plain words and the claim pages render.

A verdict row (docs/verdicts.json, or :func:`lnrecency.report.readme.row_of` of a result) becomes a Finding: the
claim, its statement's key and source (read from the catalogue only), the verdict labelled by whose statement it is
(:func:`lnrecency.claims.catalog.label`), the reason (the row's finding, whole, for the claim pages), the setting,
the row's typed qualifiers (:class:`lnrecency.inference.qualifiers.Qualifiers`: stored with the row, or read from
its typed fields) and one plain sentence rendered from them by :func:`lnrecency.report.words.plain.cell`. No prose
is read back: a finding's words never change a cell. Every count is of Findings, in one scope: :func:`source_counts`,
:func:`scope_line`, :func:`claim_rows`; secondary rows are intervals, counted apart, never as verdicts.
"""
from __future__ import annotations

from dataclasses import dataclass

from lnrecency.inference.qualifiers import Qualifiers
from lnrecency.report.words.plain import PLAIN_WORDS, cell, scope_of, split_cell

__all__ = ["Finding", "finding_of", "findings_of", "qualifiers_of", "source_counts", "scope_line", "published_sentence",
           "claim_rows", "fresh_counts", "row_of", "GRAVITY", "PLAIN_WORDS"]

#: the verdicts from gravest to mildest: a claim's cell is its gravest row's
GRAVITY = ("refuted", "the opposite shown", "inconclusive", "secondary", "confirmed", "reproduced")


@dataclass(frozen=True)
class Finding:
    """One decided statement in one setting group: ``claim``, ``statement_key`` and ``source`` (the catalogue's
    words for the statement's source), ``verdict`` (labelled by whose statement it is), ``reason`` (the row's
    finding, whole), ``setting`` (the row's setting), ``qualifiers`` and ``plain`` (rendered from them, at most
    :data:`PLAIN_WORDS` words)."""

    claim: str
    statement_key: str
    source: str
    verdict: str
    reason: str
    setting: dict
    qualifiers: Qualifiers
    plain: str

    @property
    def secondary(self) -> bool:
        return self.verdict == "secondary"


def _statement(row: dict):
    """The catalogue's statement a row decides (a row stored before its statement was reworded: the claim's only
    source's first statement, as :func:`lnrecency.claims.catalog.statement_source` reads it with ``stored``)."""
    from lnrecency.claims import catalog

    text = " ".join(str(row["statement"]).split())
    decl = catalog.declared(row["id"])
    found = next((s for s in decl.statements if s.text == text), None)
    if found is None:
        catalog.statement_source(row["id"], text, stored=True)  # ValueError unless the claim has one source
        found = decl.statements[0]
    return found


def row_of(r) -> dict:
    """A verdict row as docs/verdicts.json holds it (a ClaimResult's JSON, no evidence)."""
    from lnrecency.inference.evidence import strict_json

    return {k: v for k, v in strict_json(r.to_json()).items() if k != "evidence"}


def qualifiers_of(row: dict) -> Qualifiers:
    """A row's qualifiers: those it stores (checked field by field), else what its typed fields say: the number of
    settings it covers and, for a row of trained models, its interval."""
    if row.get("qualifiers") is not None:
        return Qualifiers.from_json(row["qualifiers"])
    settings = (row.get("setting") or {}).get("settings")
    iv = row.get("interval")
    low = high = None
    if isinstance(iv, (list, tuple)) and len(iv) == 2 and all(isinstance(x, (int, float)) for x in iv):
        low, high = float(min(iv)), float(max(iv))
    many = isinstance(settings, list) and bool(settings)
    return Qualifiers(where=scope_of(settings) if many else "", settings=len(settings) if many else None, low=low,
                      high=high)


def finding_of(row: dict) -> Finding:
    """The Finding of one verdict row (ValueError when the row decides a statement its claim does not declare)."""
    from lnrecency.claims import catalog
    from lnrecency.inference.qualifiers import contradiction

    s = _statement(row)
    verdict = catalog.label(row["id"], s.text, row["verdict"])
    q = qualifiers_of(row)
    said = contradiction(verdict, q)
    if said:  # a stored row whose label its own qualifiers contradict is refused, never rendered or carried forward
        raise ValueError(f"the {row['id']} row on {s.key!r} ({str(row.get('setting') or '')[:60]}) does not follow "
                         f"from what is stored with it: {said}")
    return Finding(row["id"], s.key, s.group, verdict, str(row.get("finding") or ""), row.get("setting") or {}, q,
                   cell(verdict, q, catalog.declared(row["id"]).title))


def findings_of(rows: list[dict]) -> list[Finding]:
    return [finding_of(r) for r in rows]


def _counts(found: list[Finding], *, always: tuple = ()) -> str:
    """'38 confirmed, 9 refuted; 12 secondary intervals (no verdict)': each verdict that occurs (and those of
    ``always``), the secondary intervals apart."""
    from lnrecency.inference.evidence import VERDICTS

    decided = [f for f in found if not f.secondary]
    text = ", ".join(f"{sum(f.verdict == v for f in decided)} {v}" for v in VERDICTS
                     if v in always or any(f.verdict == v for f in decided))
    apart = len(found) - len(decided)
    if apart:
        text += ("; " if text else "") + f"{apart} secondary interval{'s' * (apart != 1)} (no verdict)"
    return text


def fresh_counts(found: list[Finding], *, quick: bool) -> str:
    """'**50 verdicts on 19 claims** (default settings): 38 confirmed, 9 refuted, 3 inconclusive.' (secondary
    intervals counted apart)."""
    decided = [f for f in found if not f.secondary]
    claims = len(dict.fromkeys(f.claim for f in found))
    return (f"**{len(decided)} verdicts on {claims} claims** ({'quick' if quick else 'default'} settings): "
            f"{_counts(found, always=('confirmed', 'refuted', 'inconclusive'))}.")


def source_counts(found: list[Finding]) -> list[str]:
    """One line per source of statements that has findings: claims and verdict counts (secondary intervals counted
    apart), in catalogue source order."""
    from lnrecency.claims import catalog

    out = []
    for group in catalog.SOURCES.values():
        mine = [f for f in found if f.source == group]
        if mine:
            claims = len(dict.fromkeys(f.claim for f in mine))
            out.append(f"- **{group}**: {claims} claim{'s' if claims != 1 else ''}, {_counts(mine)}.")
    return out


def published_sentence(found: list[Finding], others: int) -> str:
    """What a fresh report shows of the claims whose experiments publish per-run rows in docs/ (each verdict and
    interval re-derived from them, lnrecency.claims.published), and how many other claims on trained or pretrained
    models and real text need their experiments."""
    decided = [f for f in found if not f.secondary]
    claims = len(dict.fromkeys(f.claim for f in found))
    return (f"It also shows **{len(decided)} verdicts on {claims} claims** on trained models, verdicts and intervals "
            f"re-derived from the per-run rows published in docs/: "
            f"{_counts(found, always=('confirmed', 'refuted', 'inconclusive'))}; the other {others} claims on models "
            f"or real text read \"not run\" there (rows below: their last run).")


def scope_line(found: list[Finding], trained, published=None) -> str:
    """How the counts above and the table below relate (one unit, its scope said): verdicts in all (a fresh report's,
    those it decides from published runs, and those on trained and real models from their last run), the secondary
    intervals apart, claims, and table rows (one per claim and source). ``published``: the claims of ``trained``
    decided from published runs (default: those whose experiments publish them, lnrecency.claims.published)."""
    if published is None:
        from lnrecency.claims.published import publishes

        published = {cid for cid in trained if publishes(cid)}
    decided = [f for f in found if not f.secondary]
    claims = len(dict.fromkeys(f.claim for f in found))
    pairs = len(dict.fromkeys((f.claim, f.source) for f in found))
    from_runs = sum(f.claim in published for f in decided)
    cached = sum(f.claim in trained and f.claim not in published for f in decided)
    apart = len(found) - len(decided)
    return (f"In all: {len(decided)} verdicts ({len(decided) - cached - from_runs} computed fresh; "
            f"{from_runs + cached} from the experiments' last run, {from_runs} of them re-derived from published runs)"
            + (f" and {apart} secondary intervals" if apart else "") + f" on {claims} claims; the table has {pairs} "
            f"rows, one per claim and source (a claim with two sources has two rows, counted under each).")


def claim_rows(found: list[Finding]) -> list[tuple[str, str, str, str]]:
    """(claim, source, verdict label, plain words) per claim and source of its statements: the sources in catalogue
    order (the paper's first), the claims in catalogue order within each; a claim whose findings differ reads "split"
    with the count of each verdict (one label, never "refuted / confirmed"). The plain words are the gravest row's
    cell; a secondary claim's, its intervals counted by the side of 0 they lie on."""
    from lnrecency.claims import catalog
    from lnrecency.inference.evidence import VERDICTS

    order = {cid: q for q, cid in enumerate(catalog.ids())}
    out = []
    for group in catalog.SOURCES.values():
        mine = [f for f in found if f.source == group]
        for cid in sorted(dict.fromkeys(f.claim for f in mine), key=lambda c: order.get(c, len(order))):
            its = [f for f in mine if f.claim == cid]
            verdicts = [v for v in VERDICTS if any(f.verdict == v for f in its)]
            label = verdicts[0] if len(verdicts) == 1 else "split: " + ", ".join(
                f"{sum(f.verdict == v for f in its)} {v}" for v in verdicts)
            reps = sorted((next(f for f in its if f.verdict == v) for v in verdicts),
                          key=lambda f: GRAVITY.index(f.verdict))
            said = split_cell([(f.verdict, f.qualifiers) for f in reps], catalog.declared(cid).title)
            if len(its) > 1 and verdicts == ["secondary"]:  # every interval's side, not the first one's
                said = _sides(its) or said
            out.append((cid, group, label, said))
    return out


def _sides(found: list[Finding]) -> str:
    """Secondary findings' intervals by the side of 0 they lie on ("3 intervals: 2 below 0, 1 across 0"), read from
    their numbers; "" when one has none."""
    words = [f.qualifiers.side for f in found]
    if not all(words):
        return ""
    count = {w: words.count(w) for w in ("below", "across", "above")}
    return f"{len(found)} intervals: " + ", ".join(f"{n} {w} 0" for w, n in count.items() if n)
