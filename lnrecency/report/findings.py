"""Findings as data (issue 66): one typed :class:`Finding` per decided statement and setting group, from which the
README's counts and table, docs/verdicts.json's plain words and the claim pages render.

A verdict row (docs/verdicts.json, or :func:`lnrecency.report.readme.row_of` of a result) becomes a Finding: the claim,
its statement's key and source (read from the catalogue only), the verdict, the reason (the row's finding, whole), the
setting, the interval with the side of 0 it lies on where the row decides one (trained rows), and one plain sentence
of at most :data:`PLAIN_WORDS` words, written whole (never cut: a lead that does not fit gives way to the claim's
declared title). Every count is of Findings, in one scope: :func:`source_counts`, :func:`scope_line`,
:func:`claim_rows`.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Finding", "Interval", "finding_of", "findings_of", "source_counts", "scope_line", "claim_rows", "reason",
           "GRAVITY", "REASON_WORDS", "PLAIN_WORDS"]

#: the verdicts from gravest to mildest: a claim's one-line reason is its gravest row's
GRAVITY = ("refuted", "the opposite shown", "inconclusive", "secondary", "confirmed", "reproduced")
#: the longest lead of a finding taken as its plain sentence; longer leads give way to the declared title
REASON_WORDS = 7
#: the longest plain sentence (a declared title may be this long: the catalogue's titles are written to fit)
PLAIN_WORDS = 20


@dataclass(frozen=True)
class Interval:
    """A row's interval: its ends, the side of 0 it lies on ("above", "below", "across") and its unit, where the row
    states one (None otherwise)."""

    low: float
    high: float
    side: str
    unit: str | None = None


@dataclass(frozen=True)
class Finding:
    """One decided statement in one setting group: ``claim``, ``statement_key`` and ``source`` (the catalogue's
    words for the statement's source), ``verdict``, ``reason`` (the row's finding, whole), ``setting`` (the row's
    setting), ``interval`` (or None) and ``plain`` (at most :data:`PLAIN_WORDS` words, whole)."""

    claim: str
    statement_key: str
    source: str
    verdict: str
    reason: str
    setting: dict
    interval: Interval | None
    plain: str


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


def _interval(row: dict) -> Interval | None:
    iv = row.get("interval")
    if not (isinstance(iv, (list, tuple)) and len(iv) == 2 and all(isinstance(x, (int, float)) for x in iv)):
        return None
    lo, hi = float(iv[0]), float(iv[1])
    side = "above" if lo > 0 else "below" if hi < 0 else "across"
    return Interval(lo, hi, side, row.get("unit") if isinstance(row.get("unit"), str) else None)


def reason(finding: str, title: str = "") -> str:
    """A finding's lead in plain words: up to its first sentence or colon (a quick run's label and a secondary row's
    label are left out; a secondary row's lead is the side of its interval). Never cut (issue 66): a lead over
    :data:`REASON_WORDS` words, or one that is a setting rather than words ("n=8, lam=1"), gives way to the claim's
    declared ``title``, which is written to fit."""
    text = " ".join(str(finding).split())
    text = re.sub(r"^quick run: not decisive[^.]*\.\s*", "", text)
    from lnrecency.claims.trained_rules import SECONDARY_LEAD

    secondary = text.startswith(SECONDARY_LEAD)
    if secondary:
        text = text[len(SECONDARY_LEAD):]
        text = re.sub(r"^quick run: not decisive[^.]*\.\s*", "", text)
    pattern = r"\. " if secondary else r"(?<=[a-z0-9)\]])(: |; |\. )"
    cut = re.search(pattern, text)
    if cut and len(text[:cut.start()].split()) < 2:  # a label ("H1: ...") is not a reason: the clause after it
        text = text[cut.end():]
        cut = re.search(pattern, text)
    lead = text[:cut.start()] if cut else text.rstrip(".")
    setting = re.match(r"^[a-z0-9_]+[=/]", lead)  # a finding that opens with the setting where it fails or holds
    unspaced = re.search(r"\w=[\w.-]", lead)  # "gamma=1, lam=0.3": a setting, not words
    if title and (setting or unspaced or len(lead.split()) > REASON_WORDS or len(lead.split()) < 3):
        lead = title
    elif setting:
        lead = f"at {lead}"
    return lead.replace("|", "/")


def finding_of(row: dict) -> Finding:
    """The Finding of one verdict row (ValueError when the row decides a statement its claim does not declare)."""
    from lnrecency.claims import catalog

    s = _statement(row)
    text = str(row.get("finding") or "")
    return Finding(row["id"], s.key, s.group, row["verdict"], text, row.get("setting") or {}, _interval(row),
                   reason(text, catalog.declared(row["id"]).title))


def findings_of(rows: list[dict]) -> list[Finding]:
    return [finding_of(r) for r in rows]


def source_counts(found: list[Finding]) -> list[str]:
    """One line per source of statements that has findings: claims and verdict counts, in catalogue source order."""
    from lnrecency.claims import catalog
    from lnrecency.inference.evidence import VERDICTS

    out = []
    for group in catalog.SOURCES.values():
        mine = [f for f in found if f.source == group]
        if mine:
            counts = ", ".join(f"{sum(f.verdict == v for f in mine)} {v}" for v in VERDICTS
                               if any(f.verdict == v for f in mine))
            claims = len(dict.fromkeys(f.claim for f in mine))
            out.append(f"- **{group}**: {claims} claim{'s' if claims != 1 else ''}, {counts}.")
    return out


def scope_line(found: list[Finding], trained) -> str:
    """How the counts above and the table below relate (one unit, its scope said): verdicts in all (a fresh report's
    and those on trained and real models), claims, and table rows (one per claim and source)."""
    claims = len(dict.fromkeys(f.claim for f in found))
    pairs = len(dict.fromkeys((f.claim, f.source) for f in found))
    cached = sum(f.claim in trained for f in found)
    return (f"In all: {len(found)} verdicts on {claims} claims ({len(found) - cached} from a fresh report, {cached} on "
            f"trained and real models); the table has {pairs} rows, one per claim and source (a claim with two "
            f"sources has two rows, counted under each).")


def claim_rows(found: list[Finding]) -> list[tuple[str, str, str, str]]:
    """(claim, source, verdict label, plain words) per claim and source of its statements: the sources in catalogue
    order (the paper's first), the claims in catalogue order within each; a claim whose findings differ reads "split"
    with the count of each verdict (one label, never "refuted / confirmed")."""
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
            grave = min(its, key=lambda f: GRAVITY.index(f.verdict) if f.verdict in GRAVITY else 0)
            said = grave.plain
            if len(its) > 1 and verdicts == ["secondary"]:  # every interval's side, not the first one's
                said = _sides(its) or said
            out.append((cid, group, label, said))
    return out


def _sides(found: list[Finding]) -> str:
    """Secondary findings' intervals by the side of 0 they lie on ("3 intervals: 2 below 0, 1 across 0"); "" when
    one has none."""
    if any(f.interval is None for f in found):
        sides = [re.search(r"lies (above|below|across) 0", f.reason) for f in found]
        if any(s is None for s in sides):
            return ""
        words = [s.group(1) for s in sides]
    else:
        words = [f.interval.side for f in found]
    count = {w: words.count(w) for w in ("below", "across", "above")}
    return f"{len(found)} intervals: " + ", ".join(f"{n} {w} 0" for w, n in count.items() if n)
