"""A plan on text decoders declared as arms, trained and probed by the engine (issue 82, items 1 and 5): plan v5 runs
so with no study module of its own and keeps its cache keys and published bytes; a new plan like v4 (an imposed share,
a stop rule at a target loss, probes along training, tests with rules) is one declaration plus its text; a declaration
with a wrong part is refused when it is made."""
from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest

from lnrecency.claims import catalog  # loaded before a toy plan joins the declarations (its IDs are placeholders)
from lnrecency.claims.trained import plan_claims
from lnrecency.experiments.plans import engine, text_arms
from lnrecency.experiments.plans.declaration import IMPOSED, NORMS, Arm, Arms, Design, Rule, Sample, Study
from lnrecency.experiments.plans.declaration import Test as PlanTest
from lnrecency.experiments.plans.declared import STUDIES, study

ROOT = Path(__file__).resolve().parents[2]


def test_plan_v4_keeps_the_cache_names_and_windows_its_own_module_had(word_corpus):
    """Plan v4 on the engine: the keys, job names and windows' stream of the removed module
    (studies/text_v4/thesis_text_v4.py, commit f97524a: V4Settings.key(), jobs() and windows_of()), so that its runs
    file and read as before (8 quick runs trained by both gave equal records, the imposed share's name aside, and the
    same snapshot bytes)."""
    import numpy as np

    plan = text_arms.thesis_text_v4
    full, quick = plan.preset(False), plan.preset(True)
    assert (full.key(), quick.key()) == ("787fcc0e15dc94b9", "b370655120ca9d71") and quick.quick
    jobs = full.jobs()
    assert len(jobs) == 58 and jobs[0] == ("U1", "none", 0) and jobs[16] == ("N1", "layernorm", 8)
    assert jobs[-1] == ("N1", "none", 28) and full.arm_of(jobs[-1]).name == "N1none"
    pytest.importorskip("torch")
    st = quick.replace(windows=2, base=dataclasses.replace(quick.base, corpus=str(word_corpus("v4windows", 5)), n=16))
    for arm, norm, index in (("U2", "layernorm", 1), ("N1none", "none", 2)):
        seq = np.random.SeedSequence([st.base.probe_seed("attn2", norm, 8), 4, index])  # the removed module's stream
        old, _ = st.data(arm).heldout(st.base.n, 2, np.random.Generator(np.random.PCG64(seq)))
        assert np.array_equal(st.windows_of(arm, 8), old)


def test_plan_v5_keeps_the_cache_keys_its_own_module_computed():
    """The keys the removed plan-v5 module (V5Settings.key(), commit fc650c2) gave its default and quick settings:
    the 51 cached runs stay readable, and a run trained again files under the same name."""
    plan = text_arms.thesis_text_v5
    assert (plan.preset(False).key(), plan.preset(True).key()) == ("6b9aaf69bce2c49a", "2a4b47198ad16aac")
    assert plan.preset(True).quick and not plan.preset(False).quick
    jobs = plan.preset(False).jobs()
    assert [a for a, _ in jobs[:16:8]] == ["Tln", "Tnone"] and len(jobs) == 51  # the longest first


def test_plan_v5_s_published_snapshot_is_rebuilt_from_the_engine_s_table():
    """The per-run table the engine builds is the one plan v5 published, row for row (from the rows themselves)."""
    snap = json.loads((ROOT / "docs" / "thesis_text_v5.json").read_text(encoding="utf-8"))
    runs = [{"arm": arm, "seed": r["seed"], "learned": r["learned"], "slope": {"mean": r["slope"], "se": r["slope_se"]},
             "final_loss": r["final_loss"], "tokens": r["tokens"], "imposed_gap": r["imposed_gap"], "paths": r["paths"],
             "points": [{"at": at, **p} for at, p in r["points"].items()]}
            for arm, rows in snap["runs"].items() for r in rows]
    assert json.dumps(text_arms.seed_table(runs)) == json.dumps(snap["runs"])


def test_every_imposed_share_and_normalisation_a_declaration_may_name_exists():
    from lnrecency.experiments.decoders.decoder_config import DECODER_NORMS

    assert set(NORMS) == set(DECODER_NORMS)  # the declaration is standard library only: its copy is checked here
    for name in IMPOSED:
        share = text_arms.share_of(name)
        assert share[0] == 1.0 and all(0.0 <= x <= 1.0 for x in share)
    assert text_arms.share_of(None) is None


_ARM = Arm("A", True, "layernorm")
_FIELDS = (("seeds", (0,)), ("windows", 8))


@pytest.mark.parametrize("make, match", [
    (lambda: Arm("a b", True, "layernorm"), "a letter then letters or digits"),
    (lambda: Arm("A", "yes", "layernorm"), "bos must be true or false"),
    (lambda: Arm("A", True, "batchnorm"), "norm must be one of"),
    (lambda: Arm("A", True, "layernorm", imposed="half"), "imposed must be one of"),
    (lambda: Arms((_ARM, _ARM), ("A",), (("seeds", (0,)), ("windows", 8)), ()), "distinct names"),
    (lambda: Arms((_ARM,), ("A", "B"), (("seeds", (0,)), ("windows", 8)), ()), "must name each arm once"),
    (lambda: Arms((_ARM,), ("A",), (("windows", 8),), ()), "reads the settings fields seeds"),
    (lambda: Arms((dataclasses.replace(_ARM, stop=True),), ("A",), (("seeds", (0,)), ("windows", 8)), ()),
     "target_loss, cap_factor"),
    (lambda: Arms((_ARM,), ("A",), (("seeds", (0,)), ("windows", 8)), (("steps", 3),)), "quick preset changes steps"),
    (lambda: Arm("A", True, "layernorm", cell="U1 none!"), "cell is letters"),
    (lambda: Arms((_ARM,), ("A",), _FIELDS, (), jobs=("arm", "norm")), "jobs names the arm, the seed"),
    (lambda: Arms((_ARM, dataclasses.replace(_ARM, name="B", group="A")), ("A", "B"), _FIELDS, ()), "under one name"),
    (lambda: Arms((_ARM, dataclasses.replace(_ARM, name="B", cell="A")), ("A", "B"), _FIELDS, ()), "under one cell"),
    (lambda: Arms((_ARM,), ("A",), _FIELDS, (), row=("seed", "learned")), "row holds the slope"),
    (lambda: Arms((_ARM,), ("A",), _FIELDS, (), row=("slope", "reached")), "needs the settings field target_loss"),
    (lambda: Arms((_ARM,), ("A",), _FIELDS, (), stream=("plan", 4)), "stream is an int or"),
])
def test_a_declaration_with_a_wrong_arm_is_refused_when_made(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_a_plan_is_found_by_its_hook_name_and_its_settings_by_their_declared_fields():
    assert engine.hook(study("thesis-text-v5").settings)(True) == text_arms.thesis_text_v5.preset(True)
    with pytest.raises(AttributeError, match="a declared plan with arms"):
        text_arms.thesis_text_v9  # noqa: B018
    st = text_arms.thesis_text_v5.preset(True)
    assert st.replace(windows=8).windows == 8 and st.windows == 16
    with pytest.raises(ValueError, match="no field target_loss"):
        st.replace(target_loss=4.0)


# -- a new plan like v4, declared by the recipe alone ---------------------------------------------------------------

def _toy() -> Study:
    """Plan v4's kind in one declaration: U (BOS, no normalisation, the LayerNorm profile imposed) against a boundary,
    N (no BOS, LayerNorm and none, each trained until a target loss) against each other, and T (no BOS, LayerNorm,
    probed along training) later against earlier; every hook the engine's."""
    arms = Arms((Arm("U", True, "none", imposed="profile", seeds="u_seeds"),
                 Arm("Nln", False, "layernorm", seeds="n_seeds", stop=True, eval_every="n_eval_every"),
                 Arm("Nnone", False, "none", seeds="n_seeds", stop=True, eval_every="n_eval_every"),
                 Arm("T", False, "layernorm", seeds="u_seeds", along=True)),
                order=("Nln", "Nnone", "T", "U"),
                fields=(("u_seeds", (0, 1, 2)), ("n_seeds", (3, 4, 5)), ("windows", 8), ("target_loss", 9.0),
                        ("cap_factor", 2), ("n_eval_every", 5), ("levels", (9.5,)), ("token_steps", (10, 20))),
                quick=())
    hook = "lnrecency.experiments.plans.text_arms:"
    tests = (PlanTest("Z1", "X1", "U", "slope", "logit per key", says="U's slope is above 0.05",
                      rule=Rule(Sample("U"), "above", 0.05), question="the LayerNorm profile without LayerNorm?"),
             PlanTest("Z2", "X2", "N at the target", "LayerNorm - none", "logit per key",
                      says="at the target loss LayerNorm's slope is above none's",
                      rule=Rule(Sample("Nln"), "above", other=Sample("Nnone")), question="at matched loss?"),
             PlanTest("Z3", "X3", "T", "later - earlier", "logit per key", says="T's slope grows along training",
                      rule=Rule(Sample("T", at="step 20", minus="loss 9.5", gated=False), "above"),
                      question="along training?"))
    return Study("toy-arms", "a toy plan", hook + "toy_arms.preset", hook + "toy_arms.run", ("X1", "X2", "X3"),
                 Design(("U", "N", "T"), "3", "learned", "target loss (N)", "the slope"), snapshot=hook + "snapshot",
                 lines=hook + "lines", plan_file="thesis_text_plan_v4.md", tests=tests, gates={"N": "reached"},
                 arms=arms)


@pytest.fixture(scope="module")
def toy(trained_cache, word_corpus):
    pytest.importorskip("torch")
    corpus = word_corpus("toycorpus", 7)
    plan = _toy()
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(STUDIES, plan.name, plan)
        st = text_arms.toy_arms.preset(True)
        st = st.replace(base=dataclasses.replace(st.base, corpus=str(corpus), n=16, steps=20, eval_every=10))
        runs = text_arms.toy_arms.run(st, progress=False, workers=1)
        yield plan, st, runs, text_arms.snapshot(runs, st, {}), text_arms.toy_arms.cached(st)


def test_a_new_plan_like_v4_is_one_declaration_run_and_decided_by_the_engine(toy):
    plan, st, runs, snap, cached = toy
    assert [(r["arm"], r["seed"]) for r in runs] == st.jobs() and cached == runs
    by = {r["arm"]: r for r in runs}
    assert by["U"]["imposed"] == "profile" and by["U"]["imposed_gap"] < 1e-6  # the share held as imposed
    assert by["Nln"]["steps"] <= st.cap_factor * st.base.steps and "reached" in by["Nln"]  # the stop rule
    assert "reached" not in by["U"] and by["U"]["paths"] is not None
    assert [p["at"] for p in by["T"]["points"]] == ["loss 9.5", "step 10", "step 20"]
    assert set(snap["tests"]) == {"Z1", "Z2", "Z3"} and set(snap["runs"]) == {"Nln", "Nnone", "T", "U"}
    assert snap["tests"]["Z1"]["statement"] == "U's slope is above 0.05"
    z3 = snap["tests"]["Z3"]  # each T run's slope at step 20 less its own at the loss crossing
    rows = snap["runs"]["T"]
    want = [r["points"]["step 20"]["slope"] - r["points"]["loss 9.5"]["slope"] for r in rows]  # every run: ungated
    assert len(want) == 3 and z3["values"] == want
    reached = [r for r in snap["runs"]["Nln"] if r["reached"]]  # N reads the runs that reached the target only
    assert "values" not in snap["tests"]["Z2"] or len(snap["tests"]["Z2"]["values"]) == len(reached)
    assert text_arms.lines(snap)[0].startswith("  Nln: layer-2 slope")


def _evaluated(plan, st, monkeypatch) -> dict:
    """The rows of the toy plan's claims, registered as a plan in declared.py is, from its cached runs."""
    from lnrecency.claims import declare, trained_qualifiers

    monkeypatch.setitem(STUDIES, plan.name, plan)
    monkeypatch.setattr(declare, "REGISTERED", dict(declare.REGISTERED))
    for d in catalog.plan_declared([plan]):
        monkeypatch.setitem(catalog.DECLARED, d.id, d)
    for t in plan.tests:  # a plan in declared.py has its tests' words there from import; the toy joins later
        monkeypatch.setitem(trained_qualifiers.PLAN_WORDS, t.id, (t.where, t.comparison, t.unit))
    monkeypatch.setattr(plan_claims.CachedStudy, "settings_for", lambda self, quick: st)
    plan_claims.register(plan)
    return {r.id: r for cid in ("X1", "X2", "X3") for r in declare.REGISTERED[cid].evaluate(quick=False)}


def test_a_reading_its_rows_contradict_is_refused_in_the_claim_s_row_naming_the_row(toy, monkeypatch):
    """Issue 82, item 2: the claims of a plan check each decided test's reading on the rows, as a run of the plan does;
    a contradicted one is refused in its test's row (the verdict stands), naming the row and the number."""
    from lnrecency.experiments.plans.declaration import Condition, Reading

    plan, st, _, snap, _ = toy
    outcome = snap["tests"]["Z1"]["verdict"]
    wrong = Reading(outcome, "Nln's slope is above a billion logits per key.", written="after the runs",
                    conditions=(Condition("Nln", "mean slope", ">", 1e9, "Nln's slope is above a billion"),))
    tests = tuple(dataclasses.replace(t, readings=(wrong,)) if t.id == "Z1" else t for t in plan.tests)
    rows = _evaluated(dataclasses.replace(plan, tests=tests), st, monkeypatch)
    assert rows["X1"].verdict == outcome  # the verdict stands
    assert "Its reading is refused" in rows["X1"].finding and "row 'Nln' has mean slope" in rows["X1"].finding
    assert "refused" not in rows["X2"].finding + rows["X3"].finding


def test_a_plan_naming_a_cell_no_arm_publishes_is_refused_when_declared():
    """A misspelt cell in a rule or a reading's condition is an error naming the test and the field, not a test left
    undecided for want of runs."""
    from lnrecency.experiments.plans.declaration import Condition, Reading

    plan = _toy()
    bad = dataclasses.replace(plan.tests[0], rule=Rule(Sample("Uu"), "above", 0.05))
    with pytest.raises(ValueError, match="test Z1's rule's sample names cell 'Uu', which no arm publishes"):
        dataclasses.replace(plan, tests=(bad, *plan.tests[1:]))
    bad = dataclasses.replace(plan.tests[1], rule=Rule(Sample("Nln"), "above", other=Sample("Nnon")))
    with pytest.raises(ValueError, match="test Z2's rule's other names cell 'Nnon'"):
        dataclasses.replace(plan, tests=(plan.tests[0], bad, plan.tests[2]))
    said = Reading("confirmed", "U is high.", written="after the runs",
                   conditions=(Condition("V", "mean slope", ">", 0.0, "U is high"),))
    with pytest.raises(ValueError, match="test Z1's confirmed reading's condition names cell 'V'"):
        dataclasses.replace(plan, tests=(dataclasses.replace(plan.tests[0], readings=(said,)), *plan.tests[1:]))


@pytest.mark.parametrize("text", ["the BOS path carries most of it", "most of it goes through the own-token path",
                                  "the other keys' path carries it"])
def test_a_reading_that_speaks_of_a_recorded_quantity_states_it_as_a_condition(text):
    """Issue 82, item 2: a reading's words about a path of the decomposition need a condition on that path's share
    (then its rows can contradict it); with the condition it is accepted."""
    from lnrecency.experiments.plans.declaration import SPOKEN, Condition, Reading

    plan = _toy()

    def declared(reading):
        return dataclasses.replace(plan, tests=(dataclasses.replace(plan.tests[0], readings=(reading,)),
                                                *plan.tests[1:]))
    with pytest.raises(ValueError, match="test Z1's confirmed reading speaks of .*, a recorded quantity, but states no "
                                         "condition on"):
        declared(Reading("confirmed", text, written="after the runs"))
    q = next(q for q, words in SPOKEN.items() if re.search(words, text, re.I))
    ok = declared(Reading("confirmed", text, written="after the runs",
                          conditions=(Condition("U", q, ">=", 0.5, "at least half"),)))
    assert ok.test("Z1").readings[0].conditions[0].quantity == q


def test_a_new_plan_s_claims_are_declared_from_its_tests_and_decided_with_no_module_of_their_own(toy, monkeypatch):
    """The claims of a plan declared with questions on its tests: catalogued from the declaration (title, statement,
    command, family; decided by the one generic module) and evaluated from the plan's cached runs, row by row with
    the decision of its test."""

    plan, st, runs, snap, _ = toy
    decls = catalog.plan_declared([plan])
    assert [(d.id, d.module, d.command, d.view) for d in decls] == [
        (f"X{k}", catalog.PLAN_CLAIMS, "experiments toy-arms", False) for k in (1, 2, 3)]
    assert decls[1].text("s1") == plan.test("Z2").says and decls[1].title == "at matched loss?"
    rows = _evaluated(plan, st, monkeypatch)
    assert set(rows) == {"X1", "X2", "X3"}
    for cid, key in (("X1", "Z1"), ("X2", "Z2"), ("X3", "Z3")):
        r, t = rows[cid], snap["tests"][key]
        assert r.statement == plan.test(key).says and r.verdict == t["verdict"] and r.evidence.test == key
        assert (r.qualifiers.estimate is None) == ("interval" not in t)
        assert r.finding.startswith(f"{key}: " if "interval" in t else "Not decided")
