"""The study engine (issue 82): every experiment declared once and run by one loop; a plan's readings are data,
checked against its own rows; a declaration with a missing or wrong part is refused when it is made."""
from __future__ import annotations

import copy
import json
from dataclasses import replace
from pathlib import Path

import pytest

from lnrecency.experiments.plans import engine
from lnrecency.experiments.plans.declaration import HOOKS, Condition, Design, Reading, Rule, Sample, Study
from lnrecency.experiments.plans.declaration import Test as PlanTest
from lnrecency.experiments.plans.declared import STUDIES, U2_PINNED, plan_keys, study
from lnrecency.experiments.plans.declared import test_of as claim_tests

DOCS = Path(__file__).resolve().parents[2] / "docs"
V4 = json.loads((DOCS / "thesis_text_v4.json").read_text())


def test_every_declared_hook_resolves_and_every_plan_names_its_published_hash():
    for s in STUDIES.values():
        for name in HOOKS:
            if getattr(s, name):
                assert engine.hook(getattr(s, name)) is not None, (s.name, name)
    for name, file in (("thesis-text-v2", "thesis_text_v2.json"), ("thesis-text-v3", "thesis_text_v3.json"),
                       ("thesis-text-v4", "thesis_text_v4.json"), ("wu-icl", "wu_icl.json")):
        assert json.loads((DOCS / file).read_text())["plan_sha256"] == study(name).plan_sha256(), name
    assert study("thesis-text-v4").pinned_sha256 == study("thesis-text-v4").plan_sha256()


def test_the_per_plan_tables_come_from_the_declarations():
    assert claim_tests()["TU2"] == "U2" and claim_tests()["TC4"] == "A0" and "W2" not in claim_tests()  # W2 holds R1-R6
    assert plan_keys("thesis-text-v4") == {"TU1": "U1", "TU2": "U2", "TN1": "N1"}
    from lnrecency.claims.trained_qualifiers import COUNTER_OF, PLAN_WORDS

    assert PLAN_WORDS["N1"] == ("no BOS, matched loss 4.25", "LayerNorm - none", "logit per key")
    assert COUNTER_OF["Q3"] == ("Q2", "equal tokens")


def test_requalify_reproduces_every_kept_row_byte_for_byte_plan_v4_included():
    from lnrecency.report.words.requalify import qualify_rows

    kept = json.loads((DOCS / "verdicts.json").read_text())["verdicts"]
    rows = copy.deepcopy(kept)
    assert qualify_rows(rows, DOCS) >= 75
    assert json.dumps(rows) == json.dumps(kept)
    damaged = copy.deepcopy(kept)  # the same machinery says no: a TU2 row whose qualifiers were edited is rewritten
    tu2 = next(r for r in damaged if r["id"] == "TU2")
    tu2["qualifiers"]["where"] = "everywhere"
    qualify_rows(damaged, DOCS)
    assert json.dumps(damaged) == json.dumps(kept)


def test_plan_v4s_readings_follow_from_its_rows_and_the_pinned_u2_reading_is_refused():
    plan = study("thesis-text-v4")
    said = engine.check_readings(plan, V4)
    assert said["U2"].written == "after the runs" and said["U1"].written == "before the runs"
    assert engine.quantity(V4, "U2 layernorm", "bos path share") == pytest.approx(0.858, abs=5e-4)
    with pytest.raises(engine.ReadingContradicted, match=r"test U2's refuted reading .* row 'U2 layernorm' has bos "
                                                         r"path share 0\.858"):
        engine.check_readings(plan, V4, {"U2": U2_PINNED})
    flipped = copy.deepcopy(V4)  # rows in which the BOS path carries under half: the declared reading is refused
    for r in flipped["runs"]["U2 layernorm"]:
        r["paths"]["other"], r["paths"]["bos"] = r["paths"]["bos"], r["paths"]["other"]
    with pytest.raises(engine.ReadingContradicted, match="at least half"):
        engine.check_readings(plan, flipped)
    assert engine.check_readings(plan, flipped, {"U2": U2_PINNED})["U2"] is U2_PINNED  # and the pinned one holds


def test_the_page_says_only_readings_its_rows_allow():
    from lnrecency.report.plan_results import plan_block

    page = (DOCS / "thesis-text-v4.md").read_text()
    assert plan_block(study("thesis-text-v4"), V4) in page
    assert U2_PINNED.text.rstrip(".") not in page and "the sink removed" not in page  # the refused reading: not said
    assert "contradicted by its rows" in page  # and the page says why it is not
    assert "Read after the runs (not in the plan)" in plan_block(study("thesis-text-v4"), V4)


def test_a_pinned_readings_words_stay_and_our_note_on_what_its_runs_did_is_rendered_beside_them():
    from lnrecency.report.plan_results import plan_reading

    plan = study("thesis-text-v4")
    u1 = plan.tests[0].reading("refuted")
    assert "LayerNorm-level share" in u1.text  # the plan's words, as pinned
    assert "row by row" in u1.note and u1.written == "before the runs"
    said = plan_reading(plan, V4)
    assert f"\"{u1.text.rstrip('.')}.\" (Our note, after the runs: {u1.note}.)" in said
    bare = replace(plan, tests=tuple(replace(t, readings=tuple(replace(r, note="") for r in t.readings))
                                     for t in plan.tests))
    assert "Our note" not in plan_reading(bare, V4)  # no note, none said
    with pytest.raises(ValueError, match="note"):
        Reading("refuted", "x", note="   ")


def _test(**kw):
    base = dict(id="Z1", claim="TU1", where="somewhere", comparison="a - b", unit="logit per key")
    return PlanTest(**{**base, **kw})


@pytest.mark.parametrize("make, match", [
    (lambda: Reading("proven", "x"), "outcome must be one of"),
    (lambda: Reading("refuted", "x", written="during"), "written must be one of"),
    (lambda: Condition("U2 layernorm", "bos share", "<", 0.5, "w"), "quantity must be one of"),
    (lambda: Condition("U2 layernorm", "bos path share", "!=", 0.5, "w"), "op must be one of"),
    (lambda: Condition("U2 layernorm", "bos path share", "<", float("nan"), "w"), "finite number"),
    (lambda: _test(id="Z12"), "a capital letter and a digit"),
    (lambda: _test(whose="mine"), "whose must be"),
    (lambda: _test(readings=(Reading("refuted", "a"), Reading("refuted", "b"))), "at most one per outcome"),
    (lambda: replace(study("thesis-text-v4"), snapshot="no hook"), "snapshot must be a hook"),
    (lambda: replace(study("thesis-text-v4"), summaries="lnrecency.x:y"), "one of the two"),
    (lambda: replace(study("thesis-text-v4"), plan_file="thesis_text_plan_v9.md"), "is not in lnrecency/data"),
    (lambda: replace(study("thesis-text-v4"), claims=("TU1",),
                     tests=(_test(readings=(Reading("confirmed", "words never in the plan"),)),)),
     "said to be written before the runs but is not in thesis_text_plan_v4.md"),
    (lambda: replace(study("thesis-text-v4"), claims=("TU1",), tests=(_test(counter=("Z2", "w")),)),
     "counter-row 'Z2'"),
    (lambda: replace(study("thesis-text-v4"), claims=("TU1", "TU2", "TN1", "TQ7")),
     r"claims must be the claims its tests decide, in their order: \('TU1', 'TU2', 'TN1'\)"),
    (lambda: Sample("A", at="3M tokens"), "must be a point 'loss X' or 'step N'"),
    (lambda: Sample("A", minus="loss 4.25"), "minus .* needs at"),
    (lambda: Sample("A", value="Slope!"), "value must be a row's field"),
    (lambda: Sample("A", at="loss 4.25", value="qk_identity_value"), "the slope at a point"),
    (lambda: Rule(Sample("A"), "sideways"), "side must be 'above', 'below' or 'within'"),
    (lambda: Rule(Sample("A"), "within"), "side 'within' .* and a positive margin go together"),
    (lambda: Rule(Sample("A"), "above", margin=0.05), "side 'within' .* and a positive margin go together"),
    (lambda: Sample("A", less=(0.5,)), "less must be"),
    (lambda: Sample("A", less=(0.0, "slope")), "less must be"),
    (lambda: Sample("A", matched="B", value="ablated"), "matched reads the slope"),
    (lambda: Sample("A", at="loss 4.25", less=(0.5, "slope")), "less reads the row's fields at the end"),
    (lambda: Rule(Sample("A"), boundary=0.1, other=Sample("B")), "compares the difference with 0"),
    (lambda: _test(rule=Rule(Sample("A"))), "with the statement it decides"),
    (lambda: _test(question="does it hold?"), "needs the test's rule and statement"),
    (lambda: replace(study("thesis-text-v4"), claims=("TU1",), tests=(study("thesis-text-v4").tests[0],
                                                                       _test(id="Z2"))),
     "every test has a rule or none does"),
])
def test_a_declaration_with_a_wrong_part_is_refused_when_made(make, match):
    with pytest.raises(ValueError, match=match):
        make()


# -- one loop: a plan declared by the recipe alone, run by the engine with hooks of its own ------------------------

def toy_settings(quick):
    return {"quick": quick}


def toy_run(st, *, use_cache=True, progress=None, workers=None, scheduler="local"):
    return [{"cell": "A", "learned": True, "slope": s, "paths": {"bos": 0.9 * s, "own": 0.1 * s}} for s in (1.0, 2.0)]


def toy_snapshot(runs, st, words):
    return {"plan_sha256": "0" * 64, "tests": {"Z1": {"statement": words["Z1"], "verdict": "confirmed", "why": ""}},
            "runs": {"A": runs}}


def toy_lines(snap):
    return [f"  A: {len(snap['runs']['A'])} runs"]


def _toy(condition_op):
    reading = Reading("confirmed", "the slope goes through the BOS path", written="after the runs",
                      conditions=(Condition("A", "bos path share", condition_op, 0.5, "the BOS path carries it"),))
    return Study("toy-plan", "a toy plan", f"{__name__}:toy_settings", f"{__name__}:toy_run", ("TU1",),
                 Design(("A",), "2", "none", "none", "the slope"), snapshot=f"{__name__}:toy_snapshot",
                 lines=f"{__name__}:toy_lines", plan_file="thesis_text_plan_v4.md", tests=(_test(readings=(reading,)),))


def test_a_new_plan_runs_through_the_one_loop_and_a_reading_its_rows_contradict_stops_it():
    snap = engine.run_plan(_toy(">"), quick=False, words={"Z1": "a statement"}, workers=1, models="ignored")
    assert snap["quick"] is False and snap["tests"]["Z1"]["verdict"] == "confirmed"
    quick = engine.run_plan(_toy("<"), quick=True, words={"Z1": "a statement"})  # a quick run decides nothing
    assert quick["tests"]["Z1"]["verdict"] == engine.NOT_DECISIVE
    with pytest.raises(engine.ReadingContradicted, match="row 'A' has bos path share 0.900"):
        engine.run_plan(_toy("<"), quick=False, words={"Z1": "a statement"})


def test_the_command_takes_its_choices_from_the_declarations(capsys):
    from lnrecency.cli.app import main
    from lnrecency.cli.commands.decoders.experiments import EXPERIMENTS

    assert EXPERIMENTS == tuple(STUDIES)
    assert main(["experiments", "thesis-text-v4", "--figure", "x.png"]) == 2
    assert "--figure goes with thesis-text-v2" in capsys.readouterr().err
    assert main(["experiments", "pretrained", "--scheduler", "tcp://127.0.0.1:1"]) == 2


def test_a_second_plan_cannot_take_a_test_id_or_a_claim(monkeypatch):
    from lnrecency.experiments.plans import declared

    v4 = study("thesis-text-v4")
    same_id = replace(v4, name="toy-plan", claims=("TM1",), tests=(_test(id="U1", claim="TM1"),))
    with pytest.raises(ValueError, match="test ID U1 is already study 'thesis-text-v4''s"):
        declared._one_owner({**STUDIES, "toy-plan": same_id})
    same_claim = replace(v4, name="toy-plan", claims=("TU1",), tests=(_test(id="Z1", claim="TU1"),))
    with pytest.raises(ValueError, match="claim TU1 is already decided by study 'thesis-text-v4'"):
        declared._one_owner({**STUDIES, "toy-plan": same_claim})


def test_the_tests_placeholder_test_ids_are_refused_in_a_declared_plan():
    from lnrecency.experiments.plans import declared

    assert not any(t.id.startswith(declared.PLACEHOLDER_TEST) for s in STUDIES.values() for t in s.tests)
    toy = replace(study("thesis-text-v4"), name="toy-plan", claims=("TM1",), tests=(_test(id="Z1", claim="TM1"),))
    with pytest.raises(ValueError, match="test ID Z1: the letter 'Z' is the tests' placeholder"):
        declared._no_placeholder({**STUDIES, "toy-plan": toy})


def test_a_hook_that_does_not_resolve_names_the_study_and_the_field():
    bad = replace(_toy(">"), lines="lnrecency.experiments.plans.hooks:v4_line")
    said = r"study 'toy-plan': its lines hook 'lnrecency.experiments.plans.hooks:v4_line' does not resolve"
    with pytest.raises(ValueError, match=said + r" \(AttributeError"):
        engine.hook(bad.lines, bad, "lines")


def test_a_snapshot_that_is_not_the_plans_is_refused_and_an_unknown_cell_lists_the_cells():
    with pytest.raises(ValueError, match=r"decides no test Z1 \(it decides U1, U2, N1\)"):
        engine.check_readings(_toy(">"), V4)
    with pytest.raises(ValueError, match=r"no cell 'U1 nones'; its cells: U1 none, U2 layernorm, N1 layernorm"):
        engine.quantity(V4, "U1 nones", "mean slope")


# -- tests decided by their declared rules ---------------------------------------------------------------------------

@pytest.mark.parametrize("name, extra", [("thesis-text-v4", ()), ("thesis-text-v5", ("mean",))])
def test_the_engine_decides_a_plan_from_its_declared_rules_to_the_published_bytes(name, extra):
    """Plans v4 and v5 decided by the engine from their declared rules (their own decision code removed) give their
    published tests byte for byte: statements, verdicts, p-values, intervals and the per-seed values read."""
    snap = json.loads((DOCS / study(name).published).read_text())
    got = engine.decided_tests(study(name), snap["runs"], extra)
    assert json.dumps(got, allow_nan=False) == json.dumps(snap["tests"], allow_nan=False)


def test_a_declared_sample_reads_its_gate_its_point_and_its_pair():
    plan = study("thesis-text-v5")

    def row(seed, learned, end, matched):
        points = {"loss 4.25": {"slope": matched}, **({} if end is None else {"step 1465": {"slope": end}})}
        return {"seed": seed, "learned": learned, "slope": 10.0 + seed, "points": points}
    table = {"Tln": [row(2, True, 5.0, 1.0), row(1, False, 7.0, 2.0), row(0, True, None, 3.0)]}
    assert engine.sample_values(plan, Sample("Tln"), table) == (12.0, 10.0)  # past the gate, the final slope
    assert engine.sample_values(plan, Sample("Tln", at="loss 4.25", gated=False), table) == (1.0, 2.0, 3.0)
    assert engine.sample_values(plan, Sample("Tln", at="step 1465"), table) == (5.0,)  # seed 0 never got there
    assert engine.sample_values(plan, Sample("Tln", at="step 1465", minus="loss 4.25"), table) == (4.0,)
    v4 = study("thesis-text-v4")  # plan v4's N1 cells read the runs that reached the target (its declared gate)
    rows = [{"slope": 1.0, "learned": True, "reached": False}, {"slope": 2.0, "learned": True, "reached": True}]
    assert engine.sample_values(v4, Sample("N1 none"), {"N1 none": rows}) == (2.0,)
    assert engine.sample_values(v4, Sample("U1 none"), {"U1 none": rows}) == (1.0, 2.0)


def test_a_plan_without_rules_is_not_decided_by_the_engine():
    with pytest.raises(ValueError, match="have no rule"):
        engine.decide(study("seed002"), {})  # a study of claims, no plan tests


@pytest.mark.parametrize("field, value, match", [
    ("few", "fewer than {n} runs", "few is a sentence .* its only fields {min}"),
    ("few", "x" * 121, "few is a sentence of at most 120 characters"),
    ("unmatched", "not every run of {cell} reached {target}", "unmatched is a sentence .* {cell} and {matched}"),
])
def test_a_study_s_own_words_for_an_undecided_test_are_checked_when_declared(field, value, match):
    design = Design(("A",), "2", "none", "none", "the slope")
    fine = {"few": "fewer than {min} runs", "unmatched": "not every run of {cell} reached {matched}'s loss"}[field]
    Study("words", "w", "a.b:c", "a.b:d", (), design, summaries="a.b:e", **{field: fine})  # accepted
    with pytest.raises(ValueError, match=match):
        Study("words", "w", "a.b:c", "a.b:d", (), design, summaries="a.b:e", **{field: value})


def test_a_later_plan_reads_an_earlier_one_s_published_snapshot():
    """Plan v4's secondary intervals recomputed from its published rows and plan v2's published cells, both read by the
    engine's one reader, are the ones docs/thesis_text_v4.json publishes."""
    from lnrecency.experiments.plans.hooks import v4_secondary

    v4 = engine.published_snapshot("thesis_text_v4.json")
    assert v4 == V4 and engine.published_snapshot("thesis_text_v9.json") is None
    got = v4_secondary(v4["runs"], engine.published_snapshot("thesis_text_v2.json"))
    assert json.dumps(got) == json.dumps(V4["secondary"]) and set(got) == {"U1 - v2 bos none", "U2 - v2 bos layernorm"}
