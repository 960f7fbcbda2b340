"""The headline a reviewer reads first (report ``index.md``, ``index.html`` and the README, all from here).

In order: the plain answer (:func:`answer`: what the paper claims, then one line per question a reader brings;
the README's from the same engine); the verdicts counted by the source of the statement they decide (the paper, its
first version's printed derivation, seed 002, seed 003, the project's own formulations; :func:`source_of`); the
claims this run did not evaluate, with the command that fills them; then one finding per claim, what fails
first, each statement of the claim with its own verdict and its plain words, rendered from the gravest row's typed
qualifiers (:mod:`lnrecency.report.words`: whole, at most 24 words; ``lnrecency verify`` prints the finding whole).

The findings are chosen by rule, not by hand. The one finding that no verdict row carries, the ceiling of
cumulant expansions at the authors' width d = 16, is a measurement of ``lnrecency reproduce`` (minutes; not
recomputed by the report) and is stated with the command that measures it (:data:`MEASURED`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from lnrecency.claims import catalog
from lnrecency.inference.evidence import VERDICTS
from lnrecency.inference.verdicts import ClaimResult
from lnrecency.report.trained_answer import v2_setting  # noqa: F401 (re-exported)
from lnrecency.report.words import glossary as _glossary

__all__ = ["GLOSSES", "words_line",
           "Finding", "Statement", "MEASURED", "SOURCE_GROUPS", "source_group", "source_of", "counts_by_source",
           "counts_line", "answer", "not_run_claims", "damaged_claims", "filled_by", "findings", "finding_lines",
           "headline_markdown", "v2_setting"]

#: verdict order of the headline: what fails first
ORDER = ("refuted", "the opposite shown", "inconclusive", "secondary", "reproduced", "confirmed")
#: where a statement comes from, as the headline counts them (declared per statement in the claim catalogue)
SOURCE_GROUPS = tuple(catalog.SOURCES.values())


def source_group(cid: str, statement: str) -> str:
    """The :data:`SOURCE_GROUPS` entry of claim ``cid``'s statement ``statement``, as the catalogue declares it (a
    row of stored evidence whose statement was reworded since: its claim's one source)."""
    return catalog.statement_source(cid, statement, stored=True)


def source_of(r: ClaimResult) -> str:
    """:func:`source_group` of a verdict row."""
    return source_group(r.id, r.statement)


#: the terms a reader meets in the answer and the verdict table, each in a few plain words (the full definitions:
#: docs/glossary.md, from lnrecency.report.words.glossary); :func:`words_line` glosses those a text uses
GLOSSES: dict[str, tuple[str, str]] = {t.names[0]: (t.pattern, t.gloss) for t in _glossary.TERMS if t.gloss}


def words_line(text: str) -> str:
    """"Words:" and the plain-words gloss of every :data:`GLOSSES` entry that ``text`` uses, in order of first use
    ("" when none), with the glossary's address for the rest."""
    used = sorted(((m.start(), term) for term, (pattern, _) in GLOSSES.items()
                   if (m := re.search(pattern, text)) is not None))
    if not used:
        return ""
    return ("Words: " + "; ".join(f"*{term}*: {GLOSSES[term][1]}" for _, term in used)
            + " (all: docs/glossary.md).")


@dataclass(frozen=True)
class Statement:
    """One statement of a claim with the verdicts of its rows (a statement may hold in some settings and fail
    in others: each verdict with its number of rows) and the lead sentence of its gravest row."""

    text: str
    source: str
    verdicts: tuple[tuple[str, int], ...]
    lead: str


@dataclass(frozen=True)
class Finding:
    """One headline finding: the claim, its verdict words (gravest first), its statements, and where its
    evidence is."""

    claim: str
    verdicts: tuple[str, ...]
    statements: tuple[Statement, ...]
    evidence: str  # a file of the report (a table) or a page of the docs


#: measured by a command the report does not run (it takes minutes); stated with that command
MEASURED = Finding(
    "ceiling", ("measured",),
    (Statement("The authors' finite-width panels follow from a cumulant expansion.", SOURCE_GROUPS[4],
               (("measured", 1),),
               "At the authors' width d = 16 no cumulant expansion reaches their panels at layers >= 2 with alpha "
               ">= 0.2: fed each setting's exact cumulants, the two-term Edgeworth expansion still misses 32 of the "
               "84 printed values for certain, none at d = 256 or 1024 (`lnrecency reproduce --out DIR`, tables "
               "expansion_ceiling and ceiling_count)."),),
    "docs/authors.md")


def _plain(r: ClaimResult) -> str:
    """A row's plain words (issue 75): rendered from its typed qualifiers by the one grammar, whole, never a cut of
    its finding's prose (``lnrecency verify --claim ID`` prints the finding whole)."""
    from lnrecency.report.words.findings import finding_of, row_of

    return finding_of(row_of(r)).plain


def _statements(rows: list[ClaimResult]) -> tuple[Statement, ...]:
    by_text: dict[str, list[ClaimResult]] = {}
    for r in rows:
        by_text.setdefault(" ".join(r.statement.split()), []).append(r)
    out = []
    for text, group in by_text.items():
        words = sorted(dict.fromkeys(r.verdict for r in group), key=ORDER.index)
        lead = next(r for r in group if r.verdict == words[0])
        out.append(Statement(text, source_of(lead), tuple((w, sum(r.verdict == w for r in group)) for w in words),
                             _plain(lead)))
    return tuple(sorted(out, key=lambda s: ORDER.index(s.verdicts[0][0])))


def findings(results: list[ClaimResult], tables: dict[str, str]) -> list[Finding]:
    """One :class:`Finding` per claim (``tables``: claim id -> its evidence file), what fails first."""
    by_claim: dict[str, list[ClaimResult]] = {}
    for r in results:
        if not r.not_run:
            by_claim.setdefault(r.id, []).append(r)
    out = []
    for cid, rows in by_claim.items():
        statements = _statements(rows)
        words = tuple(sorted(dict.fromkeys(w for s in statements for w, _ in s.verdicts), key=ORDER.index))
        out.append(Finding(cid, words, statements, tables.get(cid, "verdicts.md")))
    return sorted(out, key=lambda f: ORDER.index(f.verdicts[0]))


def counts(results: list[ClaimResult]) -> dict[str, int]:
    """Verdict -> number of rows, in :data:`VERDICTS` order (confirmed, refuted, inconclusive always)."""
    return {v: sum(r.verdict == v for r in results) for v in VERDICTS
            if v in ("confirmed", "refuted", "inconclusive") or any(r.verdict == v for r in results)}


def counts_line(results: list[ClaimResult], *, quick: bool) -> str:
    """The verdicts counted (secondary intervals apart: never verdicts) and the claims they are on."""
    results = [r for r in results if not r.not_run]
    decided = [r for r in results if r.verdict != "secondary"]
    c = counts(decided)
    claims = len(dict.fromkeys(r.id for r in results))
    apart = len(results) - len(decided)
    return (f"**{len(decided)} verdicts on {claims} claims** ({'quick' if quick else 'default'} settings): "
            + ", ".join(f"{n} {v}" for v, n in c.items())
            + (f"; {apart} secondary interval{'s' * (apart != 1)} (no verdict)" if apart else "") + ".")


def counts_by_source(results: list[ClaimResult]) -> list[tuple[str, int, dict[str, int]]]:
    """(source group, claims, verdict -> rows) per :data:`SOURCE_GROUPS` entry that has rows."""
    results = [r for r in results if not r.not_run]
    out = []
    for group in SOURCE_GROUPS:
        rows = [r for r in results if source_of(r) == group]
        if rows:
            out.append((group, len(dict.fromkeys(r.id for r in rows)), counts(rows)))
    return out


def _source_table(results: list[ClaimResult]) -> list[str]:
    groups = counts_by_source(results)
    words = [v for v in VERDICTS if any(c.get(v) for _, _, c in groups)]
    lines = ["| statements from | claims | " + " | ".join(words) + " |", "|---|---:|" + "---:|" * len(words)]
    for group, claims, c in groups:
        lines.append(f"| {group} | {claims} | " + " | ".join(str(c.get(v, 0)) for v in words) + " |")
    total, listed = len({r.id for r in results if not r.not_run}), sum(claims for _, claims, _ in groups)
    if listed > total:  # the column's sum beside the headline's count, with its reason
        lines += ["", f"The claims column sums to {listed} for {total} claim{'s' * (total != 1)}: a claim whose "
                      f"statements come from several sources is counted under each."]
    return lines


def filled_by(cid: str) -> str:
    """The command that evaluates claim ``cid`` outside the report (declared in the claim catalogue)."""
    return catalog.declared(cid).fills


def not_run_claims(results: list[ClaimResult]) -> dict[str, list[str]]:
    """Command -> the registered claims with no evaluated row in ``results``, in registry order."""
    done = {r.id for r in results if not r.not_run}
    out: dict[str, list[str]] = {}
    for cid in catalog.ids():
        if cid not in done:
            out.setdefault(filled_by(cid), []).append(cid)
    return out


def damaged_claims(results: list[ClaimResult]) -> dict[str, str]:
    """Claim id -> why, for the claims whose experiment's cached results are damaged (the file and the fix)."""
    from lnrecency.inference.evidence import Damaged

    return {r.id: r.evidence.reason for r in results if isinstance(r.evidence, Damaged)}


def _not_run_line(results: list[ClaimResult]) -> str:
    broken = damaged_claims(results)
    missing = {cmd: [c for c in ids if c not in broken] for cmd, ids in not_run_claims(results).items()}
    missing = {cmd: ids for cmd, ids in missing.items() if ids}
    damaged = ""
    if broken:
        by_reason: dict[str, list[str]] = {}
        for cid, why in broken.items():
            by_reason.setdefault(why, []).append(cid)
        # a cache, or a row that its published runs do not re-derive (lnrecency.report.published_rows)
        label = "Damaged caches" if all("docs/" not in why for why in broken.values()) \
            else "Damaged inputs (a cache, or stored rows their published runs do not re-derive)"
        damaged = (f" **{label}, not counted:** " + "; ".join(f"{', '.join(ids)}: {why}"
                                                              for why, ids in by_reason.items()) + ".")
    if not missing:
        return (("Every registered claim was evaluated." if not broken else "") + damaged).strip()
    parts = [f"{', '.join(ids)} (`{cmd}`)" for cmd, ids in missing.items()]
    n = sum(len(ids) for ids in missing.values())
    return (f"**Not run here, not counted: {n} claims** on trained models and real text: " + "; ".join(parts)
            + ". Each needs `python3 -m pip install -e '.[models]'` and minutes of training; the report then reads "
              "the cached results." + damaged)


def answer(results: list[ClaimResult]) -> list[str]:
    """The plain answer, the report's opening and the README's from one engine (:mod:`lnrecency.report.words.answer`):
    what the paper claims, then one line per question a reader brings, each from the rows' typed qualifiers and the
    runs published in docs/ (a question whose rows this report does not hold is left out; in an installed package,
    without docs/, so are those that need a published snapshot)."""
    from lnrecency.claims.published import DOCS
    from lnrecency.report.words.answer import answer_lines, snapshots
    from lnrecency.report.words.findings import findings_of, row_of

    return answer_lines(findings_of([row_of(r) for r in results if not r.not_run]), **snapshots(DOCS))


def _verdicts_text(s: Statement) -> str:
    if len(s.verdicts) == 1 and s.verdicts[0][1] == 1:
        return s.verdicts[0][0]
    return ", ".join(f"{w} ({n} row{'s' if n > 1 else ''})" for w, n in s.verdicts)


def finding_lines(f: Finding, link, *, every_statement: bool = True) -> list[str]:
    """A claim's bullet: its gravest statement with its verdicts and lead sentence, then (``every_statement``)
    each other statement the same way, else their number."""
    where = link(f.evidence)
    cite = f"([evidence]({where}))" if where is not None else f"(evidence: `{f.evidence}` in the source tree)"
    head, *rest = f.statements
    more = "" if every_statement or not rest else f" (+{len(rest)} more statement{'s' * (len(rest) > 1)})"
    said = f.verdicts[0] if len(f.verdicts) == 1 else "split: " + ", ".join(f.verdicts)
    lines = [f"- **{f.claim}: {said}.** *{head.text}* ({head.source}) **{_verdicts_text(head)}:** "
             f"{head.lead} {cite}{more}"]
    if every_statement:
        lines += [f"  - *{s.text}* ({s.source}) **{_verdicts_text(s)}:** {s.lead}" for s in rest]
    return lines


def report_link(path: str) -> str | None:
    """Links inside a report folder: its own files; a docs page is named, not linked (the folder moves)."""
    return None if path.startswith("docs/") else path


def claim_tables(results: list[ClaimResult]) -> dict[str, str]:
    """Claim id -> the Markdown file of its first report table (else the verdicts table)."""
    from lnrecency.report.views.outputs import VIEWS
    from lnrecency.report.views.registry import VIEW_LIST  # noqa: F401  (imports every view module)

    out = {}
    for r in results:
        view = VIEWS.get(r.id)
        stems = [t.stem for t in view.tables] if view is not None else []
        out[r.id] = f"{stems[0]}.md" if stems else "verdicts.md"
    return out


def headline_markdown(results: list[ClaimResult], tables: dict[str, str] | None = None, *, quick: bool,
                      link=report_link, every_statement: bool = True) -> str:
    """The headline in Markdown: the answer, the counts by source, what was not run, then one bullet per
    claim (``tables``: claim id -> evidence file, default :func:`claim_tables`; ``link`` maps an evidence
    path to the link written, None: named only; ``every_statement``: each statement of a claim on its own
    line, else the gravest only), then the measured ceiling."""
    tables = claim_tables(results) if tables is None else tables
    items = findings(results, tables)
    settled = [f for f in items if f.verdicts[0] in ("confirmed", "reproduced")]
    open_ = [f for f in items if f not in settled]
    first, *questions = answer(results)
    said = " ".join([first, *questions])
    lines = ["**The answer.** " + first, *(f"- {q}" for q in questions), "",
             *([words_line(said), ""] if words_line(said) else []),
             counts_line(results, quick=quick) + " By the source of the statement each verdict decides:", "",
             *_source_table(results), "", _not_run_line(results), "",
             "Each verdict comes with its reason: `lnrecency verify --claim ID` prints it whole (`verify --list` "
             "lists every claim with its statement and source). Monte Carlo decisions are k standard errors under "
             "a stated false-alarm budget; trained-model verdicts are decided together at family-wise rate 0.05 "
             "(Holm).", ""]
    if open_:
        lines += ["**What fails, is not reproduced, or is not settled**", "",
                  *(line for f in open_ for line in finding_lines(f, link, every_statement=every_statement)), ""]
    lines += ["**What holds, and where**", "",
              *(line for f in settled for line in finding_lines(f, link, every_statement=every_statement)),
              *finding_lines(MEASURED, link), ""]
    return "\n".join(lines)
