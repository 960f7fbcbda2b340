"""The README a reviewer reads in five minutes (issue 52): at most 1,500 words; one table row per claim and source
of its statements, the paper's first and ours after, each with one verdict label; the counts by source equal the
snapshot it was generated from (docs/verdicts.json), so a number that appears in two places cannot differ."""
from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

from lnrecency.claims import catalog
from lnrecency.report.readme import BEGIN, END
from lnrecency.report.words.findings import claim_rows, findings_of, source_counts

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
#: the size budgets, read from their one written place (pyproject.toml; docs/layout.md, "Size budgets")
BUDGETS = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["lnrecency"]["size-budgets"]
SNAPSHOT = json.loads((ROOT / "docs" / "verdicts.json").read_text(encoding="utf-8"))


def test_the_readme_is_short():
    """Issue 66 kept the README under 1,500 words; issue 75 gives each of the table's rows a cell of up to 20 words
    with its sizes and scope (58 rows: about 400 words more). Outside the generated block the README stays short."""
    words = [w for w in README.split() if not set(w) <= set("|-:")]  # table rules and cell bars are not words
    outside = README.split(BEGIN, 1)[0] + README.split(END, 1)[1]
    assert len(words) <= BUDGETS["readme-words"], len(words)
    assert len(outside.split()) <= BUDGETS["readme-outside-words"], len(outside.split())


def test_one_row_per_claim_and_source_in_source_order_with_one_label():
    block = README.split(BEGIN, 1)[1].split(END, 1)[0]
    rows = re.findall(r"^\| \[([^\]]+)\]\(docs/claims/[^)]+\) \| ([^|]+) \| ([^|]+) \| ([^|]*) \|$", block, re.M)
    short = {catalog.SOURCES[k]: v for k, v in catalog.SOURCE_SHORT.items()}
    want = [(cid, short[group], label) for cid, group, label, _ in claim_rows(findings_of(SNAPSHOT["verdicts"]))]
    assert [(c, s.strip(), v.strip()) for c, s, v, _ in rows] == want
    order = list(catalog.SOURCE_SHORT.values())
    seen = [order.index(s.strip()) for _, s, _, _ in rows]
    assert seen == sorted(seen) and seen[0] == order.index("paper")  # the paper's claims first
    assert all(" / " not in v for _, _, v, _ in rows)  # one label per row, never "refuted / confirmed"
    measured = {r["id"] for r in SNAPSHOT["verdicts"]}
    assert {c for c, _, _, _ in rows} == measured  # every claim with a row in the snapshot has its row


def test_the_counts_by_source_are_the_snapshots():
    """docs/sources.md holds them (generated from docs/verdicts.json; the README links there)."""
    sources = (ROOT / "docs" / "sources.md").read_text(encoding="utf-8")
    for line in source_counts(findings_of(SNAPSHOT["verdicts"])):
        assert line in sources, line
    assert "docs/sources.md#verdicts-by-source" in README


def test_a_split_claim_reads_split_with_its_counts():
    rows = [{"id": "C5", "statement": catalog.declared("C5").statements[0].text, "verdict": v, "finding": f}
            for v, f in (("confirmed", "holds in 2 settings"), ("refuted", "n=8, lam=1: increases then falls"))]
    ((cid, group, label, reason),) = claim_rows(findings_of(rows))
    assert (cid, label) == ("C5", "split: 1 confirmed, 1 refuted") and group == catalog.SOURCES["paper"]
    # the gravest row's lead is a setting ("n=8, lam=1"), not words: the claim's declared title, never a cut clause
    assert reason == catalog.declared("C5").title


def test_every_statistic_of_the_answer_and_table_is_glossed_on_first_use():
    """The answer and the table use statistics (lam, d, slopes in logit per key, rollout, ...): each that the
    block uses is glossed in plain words in the line after the answer, above the table (issue 52, jargon)."""
    from lnrecency.report.headline import GLOSSES

    block = README.split(BEGIN, 1)[1].split(END, 1)[0]
    words = next(line for line in block.splitlines() if line.startswith("Words: "))
    assert block.index(words) < block.index("| claim |")
    for term, (pattern, gloss) in GLOSSES.items():
        if re.search(pattern, block.replace(words, "")):
            assert f"*{term}*: {gloss}" in words, term


def test_words_line_glosses_only_what_a_text_uses_in_order_of_first_use():
    from lnrecency.report.headline import words_line

    line = words_line("RP 0.64 at d = 16 with lam = 1")
    assert line.index("*RP*") < line.index("*d*") < line.index("*lam*") and "*rollout*" not in line
    assert words_line("nothing technical here") == ""


def test_plan_v2s_block_and_sentence_say_each_cell_and_test():
    """docs/thesis-text-v2.md's results and the README's sentence, generated from a run's snapshot (issue 50)."""
    from lnrecency.report.v2_results import v2_block, v2_sentence

    cell = {"seeds": [0, 1, 2], "slope": [0.15, 0.01], "late": [0.1, 0.01], "ablated": [0.02, 0.01],
            "change": [-0.88, 0.05], "first_share_rows": [1.0, 0.8] + [0.1] * 62,
            "theory": {"b": 2.5, "largest_gap": 0.2}}
    snap = {"plan_sha256": "ab" * 32, "quick": False,
            "tests": {f"Q{k}": {"statement": f"statement {k}", "verdict": "reproduced", "interval": [0.1, 0.2],
                                "detectable_effect": 0.01, "why": ""} for k in range(1, 7)},
            "cells": {"bos layernorm": cell, "no bos none": {**cell, "seeds": [], "slope": [None, None],
                                                              "change": [None, None], "theory": None}}}
    block = v2_block(snap)
    assert block.count("| Q") == 6 and "-88 % (SE 5)" in block and "0.800 / 0.100 / 0.100" in block
    assert "| no bos none | 0 | n/a |" in block and "b = 2.50, 0.200" in block
    said = v2_sentence(snap)
    # the snapshot's "reproduced" (runs before issue 75) reads confirmed: the statements are ours
    assert "-88 %" in said and "TV4 confirmed" in said and "against none n/a" in said
    assert "matched loss LayerNorm minus none is [+0.1000, +0.2000] (TV3 confirmed)" in said
    brief = v2_sentence(snap, brief=True)
    assert "-88 %" in brief and "TV4" not in brief and len(brief.split()) < len(said.split())
    assert "Gu et al." not in block  # a snapshot from before the rollout was recorded: no such table
    roll = {f"{w} {k}": [v, 0.01] for w in ("text", "random") for k, v in (
        ("rollout 1 first", 0.4), ("rollout 2 first", 0.6), ("rollout 2 last", 0.002),
        ("rollout 2 residual first", 0.3), ("gu_sink", 0.5 if w == "text" else 0.25), ("sink", 0.2))}
    block = v2_block({**snap, "cells": {name: {**c, **roll} for name, c in snap["cells"].items()}})
    assert "Gu et al.'s Sink^0.3_1" in block and block.count("| 0.400 (SE 0.010) / 0.600 (SE 0.010) |") == 2
    assert "| 0.0020 (SE 0.0100) |" in block and "| 0.50 (SE 0.01) / 0.25 (SE 0.01) |" in block
    assert "uniform causal attention" not in block  # no window length in the snapshot: no reference row
    block = v2_block({**snap, "settings": {"base": {"n": 64}},
                      "cells": {name: {**c, **roll} for name, c in snap["cells"].items()}})
    assert "| uniform causal attention (exact path count, n = 64) | 0.016 / 0.074 | 0.0002 | 0.026 |" in block


def test_the_snapshot_agrees_with_the_catalogue():
    """Issue 66: docs/verdicts.json (and the README generated with it) cannot drift from the catalogue unnoticed:
    every row decides a statement its claim declares, every claim the report evaluates has its rows, and no row
    belongs to a claim the catalogue no longer has (regenerate after changing a claim:
    `python3 -m lnrecency.report.regenerate --claim ID`)."""
    from lnrecency.claims.registry import TRAINED

    rows = SNAPSHOT["verdicts"]
    assert {r["id"] for r in rows} <= set(catalog.ids())
    for r in rows:
        catalog.statement_source(r["id"], r["statement"])  # ValueError when the statement is not declared
    assert {c for c in catalog.ids() if c not in TRAINED} <= {r["id"] for r in rows}


def test_the_answer_is_short_plain_and_names_where_it_fails():
    block = README.split(BEGIN, 1)[1].split(END, 1)[0]
    answer = block.split("**The answer.**", 1)[1].split("\n\n", 1)[0]
    assert len(answer.split()) <= BUDGETS["answer-words"], len(answer.split())
    assert answer.strip().startswith("The paper claims")  # what the paper claims first, then one line per question
    for question in ("In expectation?", "One draw?", "Without normalisation?", "Trained text models with BOS?",
                     "Without BOS?", "The printed derivation?"):
        assert f"- **{question}**" in answer, question
    for where in ("lam = 8", "5.7x fewer tokens", "lowered, not removed"):
        assert where in answer, where
    assert "..." not in answer


def test_no_cell_is_cut():
    """Issue 66: every "in plain words" cell is written whole, never ended with "..."; issue 75: rendered from typed
    qualifiers (tests/report/test_plain.py checks the words)."""
    for cid, _, _, said in claim_rows(findings_of(SNAPSHOT["verdicts"])):
        assert not said.endswith("...") and not re.search(r"\w=[\w.-]", said), (cid, said)


def test_the_counts_say_their_scope_and_agree_with_the_table():
    """Issue 66: the verdicts, claims and table rows are counted once each, from the snapshot, and the README says how
    they relate; the table has exactly as many rows as that line says."""
    from lnrecency.claims.registry import TRAINED
    from lnrecency.report.words.findings import scope_line

    line = scope_line(findings_of(SNAPSHOT["verdicts"]), TRAINED)
    assert line in README
    block = README.split(BEGIN, 1)[1].split(END, 1)[0]
    rows = re.findall(r"^\| \[[^\]]+\]\(docs/claims/", block, re.M)
    assert f"the table has {len(rows)} rows" in line
    decided = [r for r in SNAPSHOT["verdicts"] if r["verdict"] != "secondary"]
    claims = len({r["id"] for r in SNAPSHOT["verdicts"]})
    assert f"In all: {len(decided)} verdicts" in line and f"on {claims} claims" in line


def test_a_secondary_claim_shows_every_intervals_side():
    """Issue 66: TM2 has three intervals (two below 0, one across); its cell says so instead of the first one's."""
    rows = [{"id": "TM2", "statement": catalog.declared("TM2").statements[0].text, "verdict": "secondary",
             "finding": "Secondary (an interval, not a verdict). More.", "interval": [lo, hi]}
            for lo, hi in ((-1.59, -0.07), (-0.02, 0.48), (-3.28, -1.18))]
    ((_, _, label, said),) = claim_rows(findings_of(rows))
    assert (label, said) == ("secondary", "3 intervals: 2 below 0, 1 across 0")