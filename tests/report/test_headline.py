"""The headline's rules (lnrecency.report.headline): each finding's plain words rendered whole from its typed
qualifiers, never a cut of its prose; verdicts counted by the source of the statement they decide; each statement of
a claim with its own verdict; the claims not run named with their command. Each rule is also shown rejecting its
planted violation."""
from __future__ import annotations

import dataclasses

from lnrecency.claims.catalog import declared
from lnrecency.inference.evidence import SettingGroup
from lnrecency.inference.qualifiers import Qualifiers
from lnrecency.inference.verdicts import ClaimResult
from lnrecency.report.headline import (
    SOURCE_GROUPS,
    answer,
    counts_by_source,
    filled_by,
    headline_markdown,
    not_run_claims,
)


def said(cid: str, k: int = 0) -> str:
    """The k-th statement claim ``cid`` declares (lnrecency.claims.catalog): rows decide declared statements."""
    return declared(cid).statements[k].text


def row(cid, source, statement, verdict, finding="a finding.", evidence=None) -> ClaimResult:
    return ClaimResult(cid, source, statement, {"settings": [{"lam": 1.0}]}, verdict,
                       evidence or SettingGroup(per_setting=(), settings_total=1, settings_here=1), finding=finding)


def test_a_findings_words_come_from_its_qualifiers_whole_never_from_its_prose():
    """Issue 75: the headline's line for a row is its plain words (lnrecency.report.words), rendered from typed
    qualifiers; a long finding is never cut, and rewording it changes nothing."""
    q = Qualifiers(where="with the residual", fails="at layers 5-6, alpha below 0.91", margin=1.4e-9,
                   margin_of="failing keys' weight")
    long = "; ".join(f"setting {k}: holds for n < {10 * k} at layers 3, 4 and 5" for k in range(1, 9)) + "."
    for finding in (long, "Other words entirely."):
        r = dataclasses.replace(row("C2", "our formulation", said("C2", 1), "refuted", finding), qualifiers=q)
        text = headline_markdown([r], quick=True)
        line = next(x for x in text.splitlines() if x.startswith("- **C2"))
        assert "with the residual: fails at layers 5-6, alpha below 0.91; failing keys' weight at most 1.4e-09" in line
        assert "more." not in line and "setting 1" not in line


def test_verdicts_are_counted_by_the_source_of_their_statement():
    results = [row("T1", "seed text", said("T1"), "confirmed"),
               row("C5", "seed text", said("C5", 0), "confirmed"),  # the paper's 'can amplify'
               row("C5", "our formulation", said("C5", 1), "refuted"),  # ours: 'grows on all of [0, 1)'
               row("P7", "printed derivation", said("P7"), "refuted"),
               row("C8", "seed text", said("C8", 0), "confirmed"),  # seed 003's
               row("S2.4", "trained models, seed text", said("S2.4"), "the opposite shown")]
    got = {g: (n, c) for g, n, c in counts_by_source(results)}
    assert got[SOURCE_GROUPS[0]] == (2, {"confirmed": 2, "refuted": 0, "inconclusive": 0})
    assert got[SOURCE_GROUPS[1]][1]["refuted"] == 1
    assert got[SOURCE_GROUPS[2]][1]["the opposite shown"] == 1
    assert got[SOURCE_GROUPS[3]][1]["confirmed"] == 1
    assert got[SOURCE_GROUPS[4]] == (1, {"confirmed": 0, "refuted": 1, "inconclusive": 0})  # ours, counted apart


def test_each_statement_shows_its_own_verdict():
    """C5's 'can amplify' (confirmed) never reads 'refuted' though the claim has a refuted statement."""
    results = [row("C5", "seed text", said("C5", 0), "confirmed", "amplified for alpha < 0.2."),
               row("C5", "our formulation", said("C5", 1), "refuted", "decreases after 0.09.")]
    text = headline_markdown(results, quick=True)
    lines = [line for line in text.splitlines() if line.startswith(("- **C5", "  - "))]
    grows = next(line for line in lines if "grows with alpha on all" in line)
    amplify = next(line for line in lines if "can amplify" in line)
    assert "**refuted:**" in grows and "refuted" not in amplify.replace("the paper", "")
    assert "(the project's own formulations)" in grows and "(the paper (v2 text))" in amplify


def test_the_claims_not_run_are_named_with_their_command():
    missing = not_run_claims([row("T1", "seed text", said("T1"), "confirmed")])
    assert missing["lnrecency experiments thesis"][:2] == ["TM1", "TM2"]
    assert missing["lnrecency corpus-stats"] == ["S2.0"]
    assert "S3.1" in missing["lnrecency experiments seed003"]
    assert filled_by("C2") == "lnrecency verify --claim C2"
    text = headline_markdown([row("T1", "seed text", said("T1"), "confirmed")], quick=True)
    assert "**Not run here, not counted:" in text and "`lnrecency experiments thesis`" in text


def test_the_answer_comes_first_and_the_not_run_line_names_the_commands():
    results = [row("T1", "seed text", said("T1"), "confirmed"), row("P7", "printed derivation", said("P7"), "refuted"),
               row("P1", "printed derivation", said("P1"), "confirmed")]
    lines = answer(results)
    assert lines[1].startswith("**In expectation?** Yes")
    assert lines[-1] == "**The printed derivation?** It holds in 1 of 2 lines (P7 refuted)."
    # the question's first word follows the label of its rows, never typed beside it: a refuted Theorem 1 reads No
    assert answer([row("T1", "seed text", said("T1"), "refuted")])[1].startswith("**In expectation?** No,")
    # Wu et al.'s line says "not contradicted" and its reading only when its rows say so
    wu = [row("W1", "our formulation", said("W1", 1), "confirmed"), row("W1", "prior work (Wu et al. 2025)", said("W1"),
                                                                         "the opposite shown")]
    line = next(x for x in answer(wu) if x.startswith("**Wu et al."))
    assert line.startswith("**Wu et al. (ICML 2025)?** Contradicted in part: in the limit (W1: confirmed; their "
                           "Theorem 4.1: refuted in 1 setting)"), line
    text = headline_markdown(results, quick=True)
    assert text.startswith("**The answer.** The paper claims") and "**Not run here, not counted:" in text


def test_the_report_s_answer_is_the_readme_s_engine_on_the_report_s_rows():
    """One engine (issue 84, item 1): the report opens with the README's question lines, rendered from its own rows'
    typed qualifiers; R1 rows re-decided from docs/pretrained.json carry no statistic in their evidence, and their
    line reads their qualifiers (never a NaN); a TM row (secondary) adds no question."""
    from lnrecency.claims.published import PublishedRuns
    from lnrecency.claims.trained.r1_pretrained_decoders import qualifiers
    from lnrecency.report.words.answer import CLAIM, readme_answer
    from lnrecency.report.words.findings import findings_of, row_of

    stat = {"mean": -0.0014, "se": 0.0004, "df": 15}
    r1 = ClaimResult("R1", "trained models, our formulation", said("R1"), {"case": "Model X (Q4)"}, "refuted",
                     PublishedRuns(file="docs/pretrained.json", runs=8, command="experiments pretrained",
                                   redecided="refuted"), finding="f",
                     qualifiers=qualifiers("Model X (Q4)", "refuted", stat, {"mean": -0.002, "se": 0.0004, "df": 15}))
    t1 = row("T1", "seed text", said("T1"), "confirmed")
    lines = answer([t1, r1])
    assert lines[0] == CLAIM and lines[1].startswith("**In expectation?** Yes, for isotropic random tokens")
    assert lines[1].endswith("(Theorem 1: confirmed).")
    real = next(x for x in lines if x.startswith("**Real pretrained models?**"))
    assert "refuted (mean layer slope -0.0014)" in real and "random control reads -0.0020, the same sign" in real
    assert "nan" not in " ".join(lines).lower()
    text = headline_markdown([t1, r1], quick=True)
    assert text.startswith("**The answer.** " + CLAIM + "\n- **In expectation?**")
    # the README renders the same lines from the same rows (docs/'s snapshots read by both)
    from lnrecency.claims.published import DOCS
    from lnrecency.report.words.answer import snapshots

    readme = readme_answer(findings_of([row_of(r) for r in (t1, r1)]), **snapshots(DOCS))
    assert readme.splitlines() == [lines[0]] + [f"- {x}" for x in lines[1:]]


def test_the_source_tables_claims_column_gives_its_reason_when_it_sums_past_the_claims():
    """Issue 84, item 6: C7 decides a seed text's statements and one of ours, so the per-source column counts it twice;
    the table says so beside its sum, and says nothing when the column sums to the claims."""
    from lnrecency.report.headline import _source_table

    two = [row("C7", "seed text", said("C7", 0), "confirmed"), row("C7", "our formulation", said("C7", 2), "refuted")]
    assert "The claims column sums to 2 for 1 claim: a claim whose statements come from several sources is counted " \
           "under each." in _source_table(two)
    assert not any("sums to" in line for line in _source_table(two[:1]))


def test_a_quick_run_s_deeper_layers_line_says_the_layers_it_checked():
    """Issue 84, item 2: C6 checked at layers 3-4 only (--quick) reads "checked on part of its domain only: at layers
    3-4", never "layers 3-6"; the full run's rows keep the whole range."""
    from lnrecency.claims.catalog import answer_parts

    cid, which, _ = answer_parts("mechanism")[1]
    statement = declared(cid).text(which.split(":", 1)[1]) if which else said(cid)
    full = dataclasses.replace(row(cid, "our formulation", statement, "confirmed"),
                               qualifiers=Qualifiers(where="with and without the residual", holds="at layers 3-6",
                                                     settings=16))
    line = next(x for x in answer([full]) if "deeper layers with normalisation" in x)
    assert "In the limit, layers 3-6: confirmed in 16 settings" in line
    quick = full.on_part("at layers 3-4", "layers 5-6 (the full run checks them)")
    line = next(x for x in answer([quick]) if "deeper layers with normalisation" in x)
    assert "layers 3-6" not in line
    assert "inconclusive in 16 settings (checked on part of its domain only: at layers 3-4)" in line
