"""Issue 84, item 5, at the source: a decision made by a hair says so in its cell (typed: the row keeps its pair p and
the Holm level it was compared with), Wu's P1-P4 rows carry the arms' unequal learning as their counter-row, and
seed 003's S3.1 rows carry the placement whose interval lies on the other side. Each rule is shown saying no."""
from __future__ import annotations

import copy
import json
import statistics
from pathlib import Path

import pytest

from lnrecency.claims.trained_qualifiers import part_counter, plan_qualifiers
from lnrecency.claims.trained_rules import by_a_hair as hair_sentence
from lnrecency.claims.trained_rules import plan_levels
from lnrecency.inference.qualifiers import Qualifiers, by_a_hair
from lnrecency.report.words.plain import cell

ROOT = Path(__file__).resolve().parents[2]
SNAPSHOT = json.loads((ROOT / "docs" / "verdicts.json").read_text(encoding="utf-8"))
ROWS = SNAPSHOT["verdicts"]


def test_the_hair_rule_is_a_factor_of_two_either_side():
    assert by_a_hair(0.025, 0.05) and by_a_hair(0.1, 0.05) and by_a_hair(0.05, 0.05)
    assert not by_a_hair(0.0249, 0.05) and not by_a_hair(0.1001, 0.05)
    assert not by_a_hair(None, 0.05) and not by_a_hair(0.05, None)


def test_a_row_decided_by_a_hair_says_so_in_its_cell_and_one_far_from_its_level_does_not():
    base = dict(where="no BOS", comparison="LayerNorm - none", unit="logit per key", estimate=-0.002, low=-0.0035,
                high=-0.0003, reason="holm")
    near = cell("inconclusive", Qualifiers(**base, p_pair=0.025, level=0.05), "")
    far = cell("inconclusive", Qualifiers(**base, p_pair=0.0001, level=0.05), "")
    assert near.startswith("no BOS: not significant after Holm, by a hair; ") and "hair" not in far
    decided = cell("refuted", Qualifiers(where="depth 2", comparison="gap", estimate=0.03, low=0.01, high=0.05,
                                         p_pair=0.012, level=0.0167), "")
    assert decided.startswith("depth 2: decided by a hair; ")


@pytest.mark.parametrize("bad", [dict(p_pair=0.02), dict(level=0.05), dict(p_pair=1.5, level=0.05),
                                 dict(p_pair=0.02, level=0.0), dict(p_pair=float("nan"), level=0.05)])
def test_a_stored_pair_p_and_level_are_checked(bad):
    with pytest.raises(ValueError, match="p_pair"):
        Qualifiers(**bad)


def test_every_committed_row_says_by_a_hair_exactly_where_its_finding_does():
    """The cell's flag (from the typed pair p and level, recomputed from the published snapshots by requalify) and
    the finding's sentence (written when the row was decided) agree row by row: six rows across four plans, and C5's two
    RP rows whose Bernstein step turns when its rate is halved or doubled (the finding names the step)."""
    flagged = {(r["id"], r["setting"].get("case")) for r in ROWS if Qualifiers.from_json(r.get("qualifiers") or {})
               .by_a_hair}
    said = {(r["id"], r["setting"].get("case")) for r in ROWS if "by a hair" in r["finding"]}
    assert flagged == said and len(flagged) == 7, (flagged ^ said)  # C5's two rows share their key
    assert sum(r["id"] == "C5" and "by a hair" in r["finding"] for r in ROWS) == 2
    # an undecided row was left undecided by a hair, never "decided" by one (its cell: "..., by a hair")
    for r in ROWS:
        if (r["id"], r["setting"].get("case")) in said and r["id"] != "C5":
            word = "Undecided" if r["verdict"] == "inconclusive" else "Decided"
            assert f" {word} by a hair:" in r["finding"], (r["id"], r["verdict"])
    for r in ROWS:
        if Qualifiers.from_json(r.get("qualifiers") or {}).by_a_hair:
            assert "by a hair" in r["plain"] and "by a hair" in r["finding"], r["id"]


def test_plan_levels_read_each_plan_s_families_and_derive_the_pair_p():
    """Plan v2's snapshot keeps p_confirm and p_refute only: its levels come from the pair p derived from them; Wu's
    two families of six are decided apart (R6 at 0.05/4, not at 0.05/10)."""
    v2 = json.loads((ROOT / "docs" / "thesis_text_v2.json").read_text())["tests"]
    levels = plan_levels("thesis-text-v2", v2)
    assert levels["Q3"] == pytest.approx(0.05) and levels["Q5"] == pytest.approx(0.025)
    wu = json.loads((ROOT / "docs" / "wu_icl.json").read_text())["tests"]
    wu = {k: (v if v.get("interval") is not None else None) for k, v in wu.items()}
    assert plan_levels("wu-icl", wu)["R6"] == pytest.approx(0.0125)
    q = plan_qualifiers("Q3", v2["Q3"], level=levels["Q3"])
    assert q.by_a_hair and q.p_pair == pytest.approx(2 * min(v2["Q3"]["p_confirm"], v2["Q3"]["p_refute"]))
    assert hair_sentence(q.p_pair, q.level, "inconclusive") != ""
    # the same test compared with a level it is far from: no hair in the cell, none in the sentence
    assert not plan_qualifiers("Q3", v2["Q3"], level=0.5).by_a_hair and hair_sentence(q.p_pair, 0.5, "x") == ""
    assert plan_qualifiers("Q3", v2["Q3"], level=levels["Q3"], quick=True).p_pair is None  # a quick run decides none


def test_wu_s_rows_carry_the_arms_unequal_learning_computed_from_the_runs():
    """P1's counter-row: in-context accuracy with LayerNorm minus without, at the step compared, as the published
    per-run rows give it (recomputed here from the runs, not the cells the code reads)."""
    snap = json.loads((ROOT / "docs" / "wu_icl.json").read_text())
    runs = snap["runs"]

    def acc(arm: str, norm: str) -> list[float]:
        rows = [r for r in (runs if isinstance(runs, list) else [x for v in runs.values() for x in v])
                if r["arm"] == arm and r["norm"] == norm]
        return [r["final"]["plain"] for r in rows]
    diff = statistics.fmean(acc("depth 2", "layernorm")) - statistics.fmean(acc("depth 2", "none"))
    w3 = [Qualifiers.from_json(r["qualifiers"]) for r in ROWS if r["id"] == "W3"
          and r["setting"].get("case") == "P1"][0]
    # its interval excludes 0: the arms learned unequally, said in its label
    assert w3.counter.label == "ours, learned unequally: in-context accuracy, LayerNorm - none"
    assert w3.counter.estimate == pytest.approx(diff, abs=1e-12) and w3.counter.low < diff < w3.counter.high
    assert diff > 0.15  # 0.515 against 0.324
    from lnrecency.claims.trained.w2_w4_wu_icl import stage_counter

    assert stage_counter("P5", snap["cells"]) is None and stage_counter("R1", snap["cells"]) is None
    level = copy.deepcopy(snap["cells"])  # arms that learned alike: the words are not said
    level["depth 2 layernorm"]["plain"] = list(level["depth 2 none"]["plain"])
    same = stage_counter("P1", level)
    assert same.low < 0 < same.high and same.label == "ours: in-context accuracy, LayerNorm - none"


def _s31(part: str, lo: float, hi: float, learned: int = 5) -> dict:
    return {"id": "S3.1", "verdict": "inconclusive", "learned": learned, "interval": [lo, hi],
            "rule": {"rule": "directional", "side": "below", "boundary": 0.0, "part": part}}


def test_a_part_s_counter_row_is_the_learned_part_on_the_other_side():
    pre, post, both = _s31("argmax/pre", -0.75, -0.37), _s31("argmax/post", 0.018, 0.069), _s31("argmax/both",
                                                                                                 -0.56, -0.48)
    rows = [pre, post, both]
    c = part_counter(pre, rows, min_learned=3)
    assert (c.label, round(c.estimate, 4)) == ("argmax/post", 0.0435) and c.verdict == "inconclusive"
    assert part_counter(post, rows, min_learned=3) is None  # the row on the other side is the counter, not countered
    assert part_counter(pre, [pre, both], min_learned=3) is None  # nothing on the other side: no counter
    unlearned = _s31("lookup/post", 0.5, 0.9, learned=0)
    assert part_counter(pre, [pre, unlearned], min_learned=3) is None  # a part whose models did not learn says nothing
    across = _s31("argmax/post", -0.01, 0.069)
    assert part_counter(pre, [pre, across], min_learned=3) is None  # an interval across 0 is not the other side
    committed = [Qualifiers.from_json(r["qualifiers"]) for r in ROWS if r["id"] == "S3.1"]
    assert [q.counter.label if q.counter else None for q in committed][:3] == ["argmax/post", None, "argmax/post"]


def test_an_undecided_test_by_a_hair_says_which_side_it_leans_to():
    """TP1 (centring only) nearly refuted, not nearly confirmed: its smaller one-sided p is against its statement,
    and the answer says so; TV5's leans for it. A stored side other than for / against is refused."""
    from lnrecency.report.words.answer import _v
    from lnrecency.report.words.findings import findings_of

    found = {(f.claim, f.setting.get("case")): f for f in findings_of(ROWS)}
    tp1, tv5 = found[("TP1", None)], found[("TV5", None)]
    assert tp1.qualifiers.leans == "against" and _v(tp1) == "inconclusive, by a hair, leaning against it"
    assert tv5.qualifiers.leans == "for" and _v(tv5).endswith("leaning for it")
    v5 = json.loads((ROOT / "docs" / "thesis_text_v5.json").read_text())["tests"]["D1"]
    assert v5["p_refute"] < v5["p_confirm"]  # the published decision: the smaller p is against the statement
    with pytest.raises(ValueError, match="leans"):
        Qualifiers(p_pair=0.02, level=0.05, leans="towards")
    with pytest.raises(ValueError, match="leans"):
        Qualifiers(leans="for")  # a side without its pair p


@pytest.mark.parametrize("p_confirm, p_refute, level, reason", [
    (0.004, 0.99, 0.0167, "holm stop"),  # pair p 0.008 within its level: a test before it stopped Holm
    (0.0098, 0.99, 0.0167, "pair"),  # one-sided within the level, doubled (0.0196) not: the pair rule alone
    (0.02, 0.99, 0.0167, "holm"),  # significant alone (below 0.025), above its Holm level even one-sided
    (0.2, 0.8, 0.0167, "not significant"),
])
def test_an_undecided_test_says_why_from_its_pair_p_and_level(p_confirm, p_refute, level, reason):
    """Issue 84, item 5: the reason a family left a test undecided is read from its p-values and its Holm level; its
    cell then says it, and marks the interval as unadjusted where the test is significant alone."""
    decision = {"verdict": "inconclusive", "interval": [0.001, 0.004], "p_confirm": p_confirm, "p_refute": p_refute,
                "fwer": 0.05}
    q = plan_qualifiers("Q3", decision, level=level)
    assert q.reason == reason
    said = cell("inconclusive", q, "")
    assert (", unadjusted" in said) == (reason != "not significant")


def test_a_counter_row_s_opposite_sign_is_said_only_of_the_same_quantity_on_the_other_side_of_0():
    from lnrecency.inference.qualifiers import Counter

    def said(counter, low=0.001, high=0.004):
        return cell("confirmed", Qualifiers(comparison="a - b", estimate=(low + high) / 2, low=low, high=high,
                                            counter=counter), "")
    assert said(Counter("matched loss", -0.002, -0.003, -0.001)).endswith(
        "matched loss: -0.0020 [-0.0030, -0.0010], the opposite sign")
    assert "opposite" not in said(Counter("matched loss", -0.002, -0.005, 0.001))  # its interval crosses 0
    assert "opposite" not in said(Counter("matched loss", 0.002, 0.001, 0.003))  # the same side
    assert "opposite" not in said(Counter("accuracy", -0.2, -0.3, -0.1, other=True))  # another quantity


def test_an_equivalence_test_is_called_underpowered_only_when_power_needs_a_wider_margin():
    """Its comparison names the margin and, only where the design at its measured spread confirms equivalence with
    power 0.8 at a wider margin than the plan's, that it is underpowered (the same rule says no below it)."""
    q6 = json.loads((ROOT / "docs" / "thesis_text_v2.json").read_text(encoding="utf-8"))["tests"]["Q6"]
    wide = plan_qualifiers("Q6", q6)
    assert wide.comparison.endswith("(margin 0.05; underpowered: power 0.8 needs 0.06)")
    enough = plan_qualifiers("Q6", {**q6, "detectable_effect": 0.04})
    assert enough.comparison.endswith("(margin 0.05)")


def test_a_measured_time_near_its_goal_is_said_to_meet_or_miss_it_by_a_hair(monkeypatch):
    """docs/report.md's timings: within a tenth of its goal, either side, a time meets or misses it "by a hair, in one
    run"; further off, plainly (the same rule says both)."""
    from lnrecency.claims import catalog
    from lnrecency.report.words import costs

    times = {"report": 67.0, "report --quick": 20.6, "report --quick (figures cached)": 14.8, "report --from": 8.3,
             "report --from (figures cached)": 3.1}
    monkeypatch.setattr(catalog, "cost", lambda name: {"seconds": times[name], "date": "2026-12-03", "peak_mib": 300})
    text = costs.timings_sentence()
    assert "`--quick` 20.6 s (goal 15 s: missed)" in text
    assert "7.6" not in text and "8.3 s (goal 8 s: missed by a hair, 0.3 s, in one run)" in text
    assert "14.8 s (goal 15 s: met by a hair, 0.2 s, in one run)" in text
    assert "3.1 s (goal 8 s: met)" in text
    # a time run several times: its median against the goal, the runs' range beside it, no "one run"
    runs = {"report --quick": [17.9, 16.9, 18.8], "report --from": [7.9, 8.1, 8.4]}
    monkeypatch.setattr(catalog, "cost", lambda name: {"seconds": statistics.median(runs.get(name, [times[name]])),
                                                       "runs": runs.get(name, []), "date": "2026-12-03",
                                                       "peak_mib": 300})
    text = costs.timings_sentence()
    assert "`--quick` 17.9 s (median of 3 runs, 16.9-18.8 s; goal 15 s: missed)" in text
    assert "8.1 s (median of 3 runs, 7.9-8.4 s; goal 8 s: missed by a hair, 0.1 s)" in text


def test_the_trained_holm_level_names_its_share_of_the_family_wise_rate():
    """A seed experiment's Holm level is its share of 0.05 by its number of tests (trained_rules.experiment_alpha);
    the finding's words recover the total from the level, and it is the sum of the experiments' design sizes."""
    from lnrecency.claims.trained_rules import DESIGN_SIZES, experiment_alpha, share_words
    from lnrecency.experiments.studies.seeds_config import EXPERIMENTS
    from lnrecency.experiments.studies.thesis_config import ThesisSettings

    presets = {"thesis": ThesisSettings.preset(False), **{k: v.preset(False) for k, v in EXPERIMENTS.items()}}
    sizes = {k: DESIGN_SIZES[k](presets[k]) for k in DESIGN_SIZES}
    for name, size in sizes.items():
        said = share_words(size, float(f"{experiment_alpha(name, False):.3g}"))  # as the finding prints the level
        assert said.endswith(f": {size} of their {sum(sizes.values())} tests)")
    assert share_words(6, 0.05) == ""  # a plan decided at the whole rate says nothing


def test_where_a_row_was_decided_by_a_hair_needs_the_hair():
    """``hair_at`` names the part of a row of several settings that was decided by a hair: it is refused without
    ``hair`` (a place for a hair that was not there)."""
    assert Qualifiers(hair=True, hair_at="d = 64 without the residual").by_a_hair
    with pytest.raises(ValueError, match="hair_at"):
        Qualifiers(hair_at="d = 64 without the residual")
