"""The headline's rules (lnrecency.report.headline): lead sentences cut at a list, never in a clause; verdicts
counted by the source of the statement they decide; each statement of a claim with its own verdict; the claims
not run named with their command. Each rule is also shown rejecting its planted violation."""
from __future__ import annotations

from lnrecency.claims.catalog import declared
from lnrecency.inference.evidence import SettingGroup
from lnrecency.inference.verdicts import ClaimResult
from lnrecency.report.headline import (
    LEAD_WORDS,
    SOURCE_GROUPS,
    answer,
    counts_by_source,
    filled_by,
    headline_markdown,
    lead_sentence,
    not_run_claims,
)


def said(cid: str, k: int = 0) -> str:
    """The k-th statement claim ``cid`` declares (lnrecency.claims.catalog): rows decide declared statements."""
    return declared(cid).statements[k].text


def row(cid, source, statement, verdict, finding="a finding.", evidence=None) -> ClaimResult:
    return ClaimResult(cid, source, statement, {"settings": [{"lam": 1.0}]}, verdict,
                       evidence or SettingGroup(per_setting=(), settings_total=1, settings_here=1), finding=finding)


def test_a_short_first_sentence_is_kept_whole_and_alone():
    text = "Holds in expectation only: RP = 0.64 at d = 16. Evidence: proved for every row."
    assert lead_sentence(text) == "Holds in expectation only: RP = 0.64 at d = 16."


def test_a_long_list_is_cut_between_items_and_the_rest_counted():
    items = [f"setting {k}: holds for n < {10 * k} at layers 3, 4 and 5" for k in range(1, 9)]
    text = "; ".join(items) + ". Decided over alpha by region."
    lead = lead_sentence(text)
    assert len(lead.split()) <= LEAD_WORDS + 4 and lead.endswith(" more.")
    kept = lead.rsplit("; and ", 1)[0].split("; ")
    assert kept == items[: len(kept)]  # whole items only: no item is cut inside
    assert lead.endswith(f"and {len(items) - len(kept)} more.")
    naive = text[:200]  # what a character cut would give: it ends inside an item
    assert not any(naive.endswith(i) for i in items)


def test_a_long_sentence_that_is_not_a_list_is_never_cut():
    text = ("With residual the closed form adds the token with weight 1 (it equals our limit with gamma = 1 to "
            "2e-16); the simulations add the unscaled LayerNorm output, gamma = sqrt(d (1 - alpha)) = 8 at alpha "
            "= 0, so the shapes h(j)/h(1) differ by up to 0.035 over the whole range that the authors plot.")
    assert len(text.split()) > LEAD_WORDS
    assert lead_sentence(text) == text


def test_verdicts_are_counted_by_the_source_of_their_statement():
    results = [row("T1", "seed text", said("T1"), "confirmed"),
               row("C5", "seed text", said("C5", 0), "confirmed"),  # the paper's 'can amplify'
               row("C5", "our formulation", said("C5", 1), "refuted"),  # ours: 'grows on all of [0, 1)'
               row("P7", "printed derivation", said("P7"), "refuted"),
               row("C7", "seed text", said("C7", 0), "confirmed"),  # seed 003's
               row("S2.4", "trained models, our formulation", said("S2.4"), "the opposite shown")]
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


def test_the_answer_comes_first_and_says_what_was_not_run():
    results = [row("T1", "seed text", said("T1"), "confirmed"), row("P7", "printed derivation", said("P7"), "refuted"),
               row("P1", "printed derivation", said("P1"), "confirmed")]
    sentences = answer(results)
    assert 2 <= len(sentences) <= 6
    assert sentences[0].startswith("Yes, in expectation")
    assert "1 of 2 statements; P7 is refuted" in sentences[1]
    assert "not run" in sentences[-1]
    text = headline_markdown(results, quick=True)
    assert text.startswith("**The answer.** Yes, in expectation")


def test_a_semicolon_inside_parentheses_is_not_a_list_boundary():
    text = ("attn2 layer 2: slope -0.88 [-1.77, 0.002] (95% over 5 seeds): inconclusive (statement: above 0; one-sided "
            "p 0.97 for it, 0.025 against it; Holm family of 68 at 0.0382, first threshold 0.00056 on 2 min(p)); "
            "neutral control -0.88; trajectory quarter 0.04, half -0.06, final -0.88; the sign changes along training.")
    lead = lead_sentence(text)
    assert lead.count("(") == lead.count(")") and lead.count("[") == lead.count("]")
    assert lead.endswith(" more.") and "one-sided p 0.97" in lead  # the parenthesis kept whole


def test_the_trained_summary_states_only_what_rows_carry():
    """Not run: it names the commands. With a secondary TM row, that those rows are secondary (its anchoring
    sentence stays on its page, out of the plain answer; no prose parsed); with R1 rows, each model's verdict and
    mean slope from its evidence."""
    from lnrecency.claims.trained.r1_pretrained_decoders import PretrainedEvidence
    from lnrecency.report.headline import trained_summary

    assert "experiments thesis-text" in trained_summary([])
    from lnrecency.claims.trained_rules import RowEvidence

    sentence = ("What the synthetic task's attn2 layer-2 slope is made of (...): layernorm: rows of the first copy "
                "-0.5.")
    tm = row("TM1", "trained models, our formulation", said("TM1"), "inconclusive", finding=f"{sentence} secondary",
             evidence=RowEvidence(parts=(), training_seeds=5, learned=5, anchoring=sentence))
    ev = PretrainedEvidence(model="Model X (Q4)", sha256="0" * 64, n=256, windows=16,
                            statistic={"mean": -0.0014, "se": 0.0004}, holm_level=0.05, counts={}, perplexity={},
                            layers={})
    r1 = ClaimResult("R1", "trained models, our formulation", said("R1"), {"case": "x"},
                     "the opposite shown", ev, finding="f")
    text = trained_summary([tm, r1])
    assert "rows are secondary" in text and "rows of the first copy" not in text
    assert "Model X: the opposite shown (mean slope -0.0014 logit per key)" in text
    plain = row("TM1", "trained models, our formulation", said("TM1"), "inconclusive",
                finding=f"{sentence} More.")  # the sentence in the prose only: not quoted
    assert "rows of the first copy" not in trained_summary([plain])
