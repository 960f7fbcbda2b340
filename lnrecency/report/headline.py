"""The headline a reviewer reads first (report ``index.md``, ``index.html`` and the README, all from here):
verdict counts, then the findings that matter, one sentence each with where it holds and a link to its
evidence, then the verdict table.

The findings are chosen by rule, not by hand: one per claim, the claims with a verdict other than
"confirmed" first (what fails, is not reproduced, or is not settled), then the confirmed ones; each is the
first sentence of the row's finding (which states the region and the margin), cut at
:data:`SENTENCE_CHARS`. The one finding that no verdict row carries, the ceiling of cumulant expansions at
the authors' width d = 16, is a measurement of ``lnrecency reproduce`` (minutes; not recomputed by the
report) and is stated with the command that measures it (:data:`MEASURED`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from lnrecency.inference.evidence import VERDICTS
from lnrecency.inference.verdicts import ClaimResult

__all__ = ["Finding", "MEASURED", "counts_line", "findings", "headline_markdown"]

#: longest finding sentence shown in the headline (the verdict table and `verify` give it whole)
SENTENCE_CHARS = 300
#: verdict order of the headline: what fails first
ORDER = ("refuted", "not reproduced in this setting", "inconclusive", "reproduced", "confirmed")


@dataclass(frozen=True)
class Finding:
    """One headline finding: the claim, its verdict words, one sentence, and where its evidence is."""

    claim: str
    verdicts: tuple[str, ...]
    sentence: str
    evidence: str  # a file of the report (a table) or a page of the docs
    statement: str = ""


#: measured by a command the report does not run (it takes minutes); stated with that command
MEASURED = Finding(
    "ceiling", ("measured",),
    "At the authors' width d = 16 no cumulant expansion reaches their panels at layers >= 2 with alpha >= "
    "0.2: fed each setting's exact cumulants, the two-term Edgeworth expansion still misses 32 of the 84 "
    "printed values for certain (Fisher's z: 18), none at d = 256 or 1024; only the full finite-d law (the "
    "simulation) agrees with all 84 (`lnrecency reproduce --out DIR`, tables expansion_ceiling and "
    "ceiling_count).",
    "docs/authors.md", "The authors' finite-width panels follow from a cumulant expansion")


def first_sentence(text: str, limit: int = SENTENCE_CHARS) -> str:
    """The first sentence of ``text`` (ends at '. ' or ': ' after 40 characters, or ';' if none), at most
    ``limit`` characters, cut at a word with an ellipsis."""
    text = " ".join(str(text).split())
    m = re.search(r"(?<=\S)[.;](?=\s+[A-Z(])", text[40:])
    if m is not None:
        text = text[:40 + m.start() + 1].rstrip(";") + ("" if text[40 + m.start()] == "." else ".")
    if len(text) <= limit:
        return text
    return text[:limit].rsplit(" ", 1)[0].rstrip(",;:") + " ..."


def counts(results: list[ClaimResult]) -> dict[str, int]:
    """Verdict -> number of rows, in :data:`VERDICTS` order (confirmed, refuted, inconclusive always)."""
    return {v: sum(r.verdict == v for r in results) for v in VERDICTS
            if v in ("confirmed", "refuted", "inconclusive") or any(r.verdict == v for r in results)}


def counts_line(results: list[ClaimResult], *, quick: bool) -> str:
    skipped = [r for r in results if r.not_run]
    results = [r for r in results if not r.not_run]
    c = counts(results)
    claims = len(dict.fromkeys(r.id for r in results))
    return (f"**{len(results)} verdicts on {claims} claims** ({'quick' if quick else 'default'} settings): "
            + ", ".join(f"{n} {v}" for v, n in c.items()) + "."
            + (f" Not run, not counted: {len(skipped)} rows ({', '.join(dict.fromkeys(r.id for r in skipped))}: "
               f"{skipped[0].finding or 'not run'})." if skipped else ""))


def findings(results: list[ClaimResult], tables: dict[str, str]) -> list[Finding]:
    """One :class:`Finding` per claim (``tables``: claim id -> its evidence file), what fails first."""
    by_claim: dict[str, list[ClaimResult]] = {}
    for r in results:
        if r.not_run:
            continue
        by_claim.setdefault(r.id, []).append(r)
    out = []
    for cid, rows in by_claim.items():
        words = tuple(dict.fromkeys(sorted((r.verdict for r in rows), key=ORDER.index)))
        lead = next(r for r in rows if r.verdict == words[0])  # the row of the gravest verdict
        text = lead.finding or "no finding recorded"
        out.append(Finding(cid, words, first_sentence(text), tables.get(cid, "verdicts.md"), lead.statement))
    return sorted(out, key=lambda f: ORDER.index(f.verdicts[0]))


#: longest claim statement shown beside a headline finding
STATEMENT_CHARS = 110


def short_statement(f: Finding) -> str:
    s = " ".join(f.statement.split())
    return s if len(s) <= STATEMENT_CHARS else s[:STATEMENT_CHARS].rsplit(" ", 1)[0].rstrip(",;:") + " ..."


def _bullet(f: Finding, link) -> str:
    verdict = " / ".join(f.verdicts)
    where = link(f.evidence)
    cite = f"([evidence]({where}))" if where is not None else f"(evidence: `{f.evidence}` in the source tree)"
    return f"- **{f.claim}: {verdict}.** *{short_statement(f)}* {f.sentence} {cite}"


def report_link(path: str) -> str | None:
    """Links inside a report folder: its own files; a docs page is named, not linked (the folder moves)."""
    return None if path.startswith("docs/") else path


def claim_tables(results: list[ClaimResult]) -> dict[str, str]:
    """Claim id -> the Markdown file of its first report table (else the verdicts table)."""
    from lnrecency.claims.registry import CLAIMS

    out = {}
    for r in results:
        claim = CLAIMS.get(r.id)
        stems = [t.stem for t in claim.tables] if claim is not None else []
        out[r.id] = f"{stems[0]}.md" if stems else "verdicts.md"
    return out


def headline_markdown(results: list[ClaimResult], tables: dict[str, str] | None = None, *, quick: bool,
                      link=report_link) -> str:
    """The headline in Markdown: counts, then one bullet per claim (``tables``: claim id -> evidence file,
    default :func:`claim_tables`; ``link`` maps an evidence path to the link written, None: named only),
    then the measured ceiling."""
    tables = claim_tables(results) if tables is None else tables
    items = findings(results, tables)
    settled = [f for f in items if f.verdicts[0] in ("confirmed", "reproduced")]
    open_ = [f for f in items if f not in settled]
    lines = [counts_line(results, quick=quick), "",
             "Each verdict comes with its reason: `lnrecency verify --claim ID` prints it whole. Monte Carlo "
             "decisions are k standard errors under a stated false-alarm budget; trained-model verdicts are "
             "decided together at family-wise rate 0.05 (Holm).", ""]
    if open_:
        lines += ["**What fails, is not reproduced, or is not settled**", "", *(_bullet(f, link) for f in open_), ""]
    lines += ["**What holds, and where**", "", *(_bullet(f, link) for f in settled),
              _bullet(MEASURED, link), ""]
    return "\n".join(lines)
