"""Plan v3's published data (issue 67, items 1-3): docs/thesis_text_v3.json.

* The plan file was committed before the snapshot (git history), and the snapshot names the plan's hash.
* Every verdict A1-C0 is recomputed from the per-seed rows the snapshot publishes, by the plan's rule (the same code
  on JSON-exact values gives the same bits), and each test's values are the rows' intervened - 0.5 x intact.
* Every model's path decomposition sums to its slope to float rounding, and each path's three parts to the path.
* The same machinery says no: rows where the intervention keeps the whole slope decide A1 the opposite way.
"""
from __future__ import annotations

import copy
import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

from lnrecency.experiments.plans.declared import study
from lnrecency.experiments.plans.engine import decide
from lnrecency.experiments.studies.thesis_text_v3 import decided_tests, plan_sha256

ROOT = Path(__file__).resolve().parents[2]
SNAPSHOT = ROOT / "docs" / "thesis_text_v3.json"


@pytest.fixture(scope="module")
def snapshot() -> dict:
    return json.loads(SNAPSHOT.read_text(encoding="utf-8"))


def test_the_snapshot_is_of_the_plan_as_shipped_and_the_plan_came_first(snapshot):
    assert snapshot["plan_sha256"] == plan_sha256()
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")

    def first_commit(path: str) -> int:
        out = subprocess.run(["git", "log", "--format=%ct", "--diff-filter=A", "--", path], cwd=ROOT,
                             capture_output=True, text=True, check=True).stdout.split()
        return int(out[-1]) if out else 2**62  # not committed yet: after any commit
    assert first_commit("lnrecency/data/thesis_text_plan_v3.md") < first_commit("docs/thesis_text_v3.json")


def test_every_verdict_is_recomputed_from_the_published_seeds(snapshot):
    plan = study("thesis-text-v3")
    decided = decide(plan, snapshot["runs"])  # the engine, by the tests' declared rules
    assert list(decided) == ["A1", "B1", "C1", "A0", "C0"] and set(snapshot["tests"]) == set(decided)
    assert json.dumps(decided_tests(snapshot["runs"]), sort_keys=True) == json.dumps(snapshot["tests"], sort_keys=True)
    for key, (d, why) in decided.items():
        said = snapshot["tests"][key]
        bos, kind = said["bos"], said["intervention"]
        assert plan.test(key).rule.sample.value == f"{kind}_value" and said["statement"] == plan.test(key).says
        rows = [r for r in snapshot["runs"]["bos layernorm" if bos else "no bos layernorm"] if r["learned"]]
        assert said["values"] == [r[kind] - 0.5 * r["slope"] for r in rows] == [r[f"{kind}_value"] for r in rows]
        assert d.verdict == said["verdict"] and why == said["why"], key
        assert list(d.test.values) == said["values"]
        assert (d.test.p_confirm, d.test.p_refute, d.test.p_pair) == (said["p_confirm"], said["p_refute"],
                                                                      said["p_pair"]), key
        assert list(d.test.interval()) == said["interval"], key


def test_every_decomposition_sums_to_its_slope(snapshot):
    for rows in snapshot["runs"].values():
        assert len(rows) == 8
        for r in rows:
            paths = r["paths"]
            scale = max(1.0, abs(r["slope"]))
            assert abs(sum(p["slope"] for p in paths.values()) - r["slope"]) <= 1e-12 * scale
            assert r["sum_error"] <= 1e-12 * scale
            for p in paths.values():
                assert abs(p["scale"] + p["numerator"] + p["interaction"] - p["slope"]) <= 1e-12 * scale
            assert paths["bias"]["slope"] == pytest.approx(0.0, abs=1e-12)  # a constant key has no slope


def test_the_published_rows_can_say_no(snapshot):
    rows = copy.deepcopy(snapshot["runs"])
    for r in rows["bos layernorm"]:
        r["qk_identity_value"] = r["slope"] - 0.5 * r["slope"]  # the intervention kept the whole slope
    assert decide(study("thesis-text-v3"), rows)["A1"][0].verdict == "refuted"
    for r in rows["no bos layernorm"]:
        r["learned"] = False
    d, why = decide(study("thesis-text-v3"), rows)["A0"]
    assert d is None and "fewer than" in why


def test_the_theory_rows_are_the_limit_plus_each_models_measured_gain(snapshot):
    """Per cell: the parameter-free slope and the coordinate's slope recomputed by the theory at the published b, each
    seed's prediction base + gain x slope(c) with its published gain, the ratio to the trained slope; with BOS the
    read-out predicts the right sign and at least half the size, without BOS it predicts almost nothing (the page
    says so)."""
    from lnrecency.inference.recency_slope import layer_slope
    from lnrecency.theory.sink import bos_coordinate, sink_limit

    theory = snapshot["theory"]
    assert set(theory) == set(snapshot["runs"])
    for cell, t in theory.items():
        norm = cell.split()[-1]
        rows = [r for r in snapshot["runs"][cell] if r["learned"]]
        base = sink_limit(64, 2, b=t["b"], norm=norm, residual=True).slope(2)
        per_key = layer_slope(np.tile(bos_coordinate(64, b=t["b"], norm=norm, residual=True), (64, 1)), skip=1)
        assert t["parameter_free"] == pytest.approx(base, rel=1e-12, abs=1e-15)
        assert t["coordinate_slope"] == pytest.approx(per_key, rel=1e-12, abs=1e-15)
        assert t["predicted_per_seed"] == pytest.approx([base + r["readout_gain"] * per_key for r in rows], rel=1e-12)
        assert t["trained"] == pytest.approx(float(np.mean([r["slope"] for r in rows])), rel=1e-12)
    with_bos, without = theory["bos layernorm"], theory["no bos layernorm"]
    assert with_bos["parameter_free"] < 0 < with_bos["trained"]  # the parameter-free theory: the wrong sign
    assert 0.5 < with_bos["ratio"] < 1.5
    assert abs(without["ratio"]) < 0.2
