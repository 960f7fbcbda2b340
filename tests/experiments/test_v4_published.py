"""Plan v4's published results (issue 76): docs/thesis_text_v4.json holds every run's row, and every decision is
recomputed from those rows alone by the plan's own rule (the same code on JSON-exact values gives the same bits); the
snapshot names the plan file committed before the runs; the page and the README say what the snapshot says."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SNAPSHOT = json.loads((ROOT / "docs" / "thesis_text_v4.json").read_text(encoding="utf-8"))


def test_the_snapshot_is_the_registered_plans():
    from lnrecency.experiments.studies.text_v4.v4_plan import PLAN_SHA256, plan_sha256

    assert SNAPSHOT["plan_sha256"] == PLAN_SHA256 == plan_sha256()
    assert not SNAPSHOT.get("quick")


def test_every_decision_is_recomputed_from_the_published_rows():
    from lnrecency.experiments.plans.declared import study
    from lnrecency.experiments.plans.engine import decide

    again = decide(study("thesis-text-v4"), SNAPSHOT["runs"])
    for tid, t in SNAPSHOT["tests"].items():
        d, why = again[tid]
        if d is None:
            assert t["verdict"] == "inconclusive" and t["why"] == why, tid
            continue
        assert (d.verdict, d.test.p_confirm, d.test.p_refute, list(d.test.interval())) == (
            t["verdict"], t["p_confirm"], t["p_refute"], t["interval"]), tid
        assert list(d.test.values) == t["values"], tid


def test_the_rule_says_no_on_planted_rows():
    """The same rule on the published rows with U1's slopes moved below its boundary and N1's arms swapped reverses
    those decisions: the recomputation can fail."""
    from lnrecency.experiments.plans.declared import study
    from lnrecency.experiments.plans.engine import decide

    runs = json.loads(json.dumps(SNAPSHOT["runs"]))
    for r in runs["U1 none"]:
        r["slope"] = study("thesis-text-v4").test("U1").rule.boundary - 0.05 + 1e-3 * r["seed"]
    runs["N1 layernorm"], runs["N1 none"] = runs["N1 none"], runs["N1 layernorm"]
    planted = decide(study("thesis-text-v4"), runs)
    assert planted["U1"][0].verdict == "refuted"
    published = SNAPSHOT["tests"]["N1"]
    if published["verdict"] != "inconclusive":
        assert planted["N1"][0].verdict == {"confirmed": "refuted", "refuted": "confirmed"}[published["verdict"]]


@pytest.mark.parametrize("cell", ["U1 none", "U2 layernorm", "N1 layernorm", "N1 none"])
def test_every_cell_publishes_its_runs_seed_by_seed(cell):
    from lnrecency.experiments.plans import text_arms

    st = text_arms.thesis_text_v4.preset(False)
    rows = SNAPSHOT["runs"][cell]
    seeds = st.n1_seeds if cell.startswith("N1") else st.u_seeds
    assert [r["seed"] for r in rows] == list(seeds)
    for r in rows:
        assert {"slope", "slope_se", "final_loss", "tokens", "learned", "reached"} <= set(r)
        if cell.startswith("N1") and r["reached"]:
            assert r["final_loss"] <= st.target_loss


def test_the_page_and_the_readme_say_what_the_snapshot_says():
    from lnrecency.experiments.plans.declared import study
    from lnrecency.report.plan_results import plan_block

    page = (ROOT / "docs" / "thesis-text-v4.md").read_text(encoding="utf-8")
    assert plan_block(study("thesis-text-v4"), SNAPSHOT) in page
    for tid, t in SNAPSHOT["tests"].items():
        assert f"| {tid} | {t['statement']} | {t['verdict']} |" in page
