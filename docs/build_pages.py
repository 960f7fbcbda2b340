"""Generated pages of the documentation, from the claim catalogue and the verdict snapshot (called by conf.py before
every build, and by ``python3 -m lnrecency.report.regenerate``, which writes the claim pages into docs/claims/, where
they are committed so that their links work on GitHub; the notebook copies are not committed):

* ``claims/ID.md``: one page per claim: statement, source, verdict and finding (every row of the verdict
  snapshot docs/verdicts.json), its report tables and figures, its notebook and how to rerun it;
* ``claims/index.md``: the list, with the C-claims' relation to the paper's Propositions 1-3;
* ``notebooks/*.ipynb``: copies of the repository's notebooks (rendered, not executed).
"""
from __future__ import annotations

import json
from pathlib import Path

#: what each source of statements is (the catalogue's source keys, lnrecency.claims.catalog.SOURCES)
SOURCE_NOTE = {
    "paper": "the paper's own text as the seeds give it (abstract, TL;DR, Theorem 1 as stated, figure captions)",
    "v1": "the first version's printed derivation (arXiv 2509.21042v1, Sec. 3.2 and App. A)",
    "seed002": "Eoin Farrell's essay, as seed 002 gives it",
    "seed003": "Li, Boduljak and Zhou, as seed 003 gives it",
    "ours": "the project's precise formulation of what the paper or a seed reports (its full text is not available)",
    "wu2025": "Wu et al. (ICML 2025), prior work the paper answers",
}


def _write(path: Path, text: str) -> None:
    """Write only when the text changed (Sphinx rebuilds what changed)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")


def _rows(here: Path) -> tuple[dict, dict]:
    snap = here / "verdicts.json"
    if not snap.exists():
        return {}, {}
    data = json.loads(snap.read_text(encoding="utf-8"))
    rows: dict[str, list] = {}
    for r in data["verdicts"]:
        rows.setdefault(r["id"], []).append(r)
    return rows, data


def _md(text: str) -> str:
    """Plain text as Markdown that renders as written: the formulas' '*' (and '<', '>') escaped, so that MyST
    makes no italics or HTML out of them."""
    return str(text).replace("\\", "\\\\").replace("*", "\\*").replace("<", "&lt;").replace(">", "&gt;")


def _cell(text: str) -> str:
    """Plain text as one Markdown table cell: :func:`_md`, with '|' escaped."""
    return _md(text).replace("|", "\\|")


def _setting_needed(claim, v2: dict | None) -> list[str]:
    """Plan v1's thesis-on-text claims (TT1-TT4) measured with BOS first: which setting their result needs, from
    plan v2's run (docs/thesis_text_v2.json, lnrecency.report.v2_results.v2_sentence)."""
    from lnrecency.claims.catalog import declared
    from lnrecency.report.v2_results import v2_sentence

    if v2 is None or declared(claim.id).family != "thesis-text plan":
        return []
    text = v2_sentence(v2).replace("](docs/", "](../")
    return ["**Which setting it needs.** This plan's models were trained and probed with BOS first in every window. "
            + text.replace("Which setting it needs (plan v2, ours", "Plan v2 ([TV1-TV6](TV1.md), ours", 1), ""]


def _claim_page(claim, rows: list, snap: dict, v2: dict | None = None) -> str:
    from lnrecency.claims import catalog
    from lnrecency.report.views.outputs import VIEWS
    from lnrecency.report.views.registry import VIEW_LIST  # noqa: F401  (imports every view module)
    from lnrecency.report.views.shared import setting_summary

    # the title is the statement under test, not a finding (a referee read "LayerNorm above none" as a result)
    lines = [f"# {claim.id}: {claim.description}", "", "(The title names what is tested, not what was found: the "
             "verdicts below say that.)", ""]
    if rows:  # the README's cell for each of its sources, from the same findings (lnrecency.report.words.findings)
        from lnrecency.report.words.findings import claim_rows, finding_of, findings_of

        for _, group, label, plain in claim_rows(findings_of(rows)):
            lines += [f"**In the README** ({group}): {label}; {_md(plain)}.", ""]
        flags = (" --quick" if snap.get("quick") else "") + (" --trained" if snap.get("trained") else "")
        groups: dict[str, list] = {}
        for r in rows:
            groups.setdefault(" ".join(r["statement"].split()), []).append(r)
        lines += [f"**Verdicts** (from `lnrecency verify{flags}`, the run the README's headline was generated "
                  f"from). This claim decides {len(groups)} statement{'s' * (len(groups) > 1)}; each verdict "
                  f"below decides the statement it is listed under, one row per setting group.", ""]
        declared = {s.text: s for s in catalog.declared(claim.id).statements}
        for k, (text, group) in enumerate(groups.items(), 1):
            statement = declared.get(text)
            lines += [f"## Statement {k}" if len(groups) > 1 else "## Statement", "", _md(text), ""]
            if statement is not None:
                lines += [f"**Source.** {statement.group} ({SOURCE_NOTE[statement.source]}).", ""]
            lines += ["| verdict | settings | in plain words |", "|---|---|---|"]
            found = [finding_of(r) for r in group]
            for r, f in zip(group, found):
                lines.append(f"| {f.verdict} | {_cell(setting_summary(r['setting'], None))} | {_cell(f.plain)} |")
            lines += ["", "The findings, whole:", ""]
            lines += [f"- **{f.verdict}**: {_md(r['finding'] or 'no finding recorded')}" for r, f in zip(group, found)]
            lines.append("")
    else:
        lines += ["**Verdict.** Not in the verdict snapshot (docs/verdicts.json): run "
                  f"`lnrecency verify --claim {claim.id}`.", ""]
    lines += _setting_needed(claim, v2)
    view = VIEWS.get(claim.id)
    own_tables, own_figures = (view.tables, view.figures) if view is not None else ((), ())
    tables = [t.stem for t in own_tables]
    figures = [s for f in own_figures for s in (f.stems if not callable(f.stems) else ())]
    lines += ["**Evidence in the report** (`lnrecency report --out report`, files in `report/`):", ""]
    lines += [f"- table `{t}` (`{t}.md`, `.csv`, `.tex`, `.json`)" for t in tables] or ["- the `verdicts` table"]
    lines += [f"- figure `{f}` (`{f}.png`, `.pdf`)" for f in figures]
    if any(callable(f.stems) for f in own_figures):
        lines.append("- figures whose names depend on the report's settings (listed in `report/index.md`)")
    lines += ["", "**Rerun.**", "", "```bash", f"lnrecency verify --claim {claim.id}          # the verdict "
              "and its whole evidence", f"lnrecency verify --claim {claim.id} --json   # the same as JSON", "```",
              ""]
    if claim.training:
        lines += ["Needs the models extra (`pip install -e '.[models]'`) and the cached experiment; see "
                  "[Trained models](../trained-experiments.md).", ""]
    if view is not None and view.notebook:
        # the repository's notebook (../../notebooks/): the link resolves in a checkout and on GitHub; Sphinx serves
        # it as a download (its rendered copy is under Notebooks)
        lines += [f"Notebook: [{view.notebook}](../../notebooks/{view.notebook}.ipynb).", ""]
    return "\n".join(lines)


PROPOSITIONS = """The paper lists Definition 1, Theorem 1 and Propositions 1-3, but only Theorem 1's statement is
available to this project (the seeds hold the abstract, TL;DR, Theorem 1 and the figure captions). So the
claims C2-C9 are **our formulation** of what the abstract, the TL;DR and the figures report; which of them
Propositions 1-3 state, and in what form, is unknown, and no verdict here is a verdict on a proposition's
wording. What the seed text says and the claims that test it: "without normalisation, stacked causal attention
is biased toward earlier tokens" (prior work) -> C2; "residual connections ... the bias persists" -> C3;
"embedding anisotropy can amplify it" -> C4, C5; deeper layers (Figures 3, 4) -> C6; seeds 002 and 003 -> C7,
C8; finite width -> C9."""


def generate(here: Path) -> None:
    from lnrecency.claims.registry import CATALOG
    from lnrecency.report.readme import claim_page

    rows, snap = _rows(here)
    v2_path = here / "thesis_text_v2.json"
    v2 = json.loads(v2_path.read_text(encoding="utf-8")) if v2_path.is_file() else None
    out = here / "claims"
    pages = []
    for claim in CATALOG:
        stem = claim_page(claim.id)
        _write(out / f"{stem}.md", _claim_page(claim, rows.get(claim.id, []), snap, v2))
        verdicts = ", ".join(dict.fromkeys(r["verdict"] for r in rows.get(claim.id, []))) or "not in the snapshot"
        pages.append((stem, claim, verdicts))
    index = ["# Claims", "", "One page per claim: statement, source, verdict with its finding, the report's "
             "tables and figures, and how to rerun it. `lnrecency verify --list` prints the same list.", "",
             "## The paper's Propositions 1-3", "", PROPOSITIONS, "", "| claim | what | verdicts |", "|---|---|---|"]
    index += [f"| [{c.id}]({stem}.md) | {c.description} | {v} |" for stem, c, v in pages]
    index += ["", "```{toctree}", ":hidden:", "", *(stem for stem, _, _ in pages), "```", ""]
    _write(out / "index.md", "\n".join(index))
    nb_out = here / "notebooks"
    nb_out.mkdir(exist_ok=True)
    for nb in sorted((here.parent / "notebooks").glob("*.ipynb")):
        target = nb_out / nb.name  # docs/notebooks/: an image linked as ../docs/X.png is docs/X.png, ../X.png here
        data = nb.read_bytes().replace(b"](../docs/", b"](../")
        if not target.exists() or target.read_bytes() != data:
            target.write_bytes(data)
