"""Plan v4 (issue 76): every number the plan states recomputed from the repository alone (the published per-seed
snapshots of plans v2 and v3 and the measured run times), the plan's bytes the ones the code pins, the imposed
profiles the published cells', the decision rule's directions, and the quick pipeline end to end on a tiny corpus
(U1 and U2 with their layer-1 share held at the profile, N1 stopped at its target)."""
from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from lnrecency.experiments.studies.text_v4 import v4_plan

ROOT = Path(__file__).resolve().parents[2]


def _json(rel: str) -> dict:
    return json.loads((ROOT / rel).read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def design() -> dict:
    return v4_plan.design(_json("docs/thesis_text_v2.json"), _json("docs/thesis_text_v3.json"),
                          _json("lnrecency/data/costs.json"))


def test_the_plan_is_the_one_the_code_pins():
    assert hashlib.sha256(v4_plan.plan_path().read_bytes()).hexdigest() == v4_plan.PLAN_SHA256 == v4_plan.plan_sha256()


def test_the_plan_states_the_numbers_recomputed_from_the_repository(design):
    plan = v4_plan.plan_path().read_text(encoding="utf-8")
    sd, c, w = design["sds"], design["cost"], design["windows"]
    rows = [f"| U1, U2 | {v4_plan.U_SEEDS} | {design['u_sd']:.3f} | {design['u_effect']:.4f} | "
            f"{design['u_power_first']:.2f} | {design['u_power_last']:.2f} |",
            f"| N1 | {design['n1_seeds']} per arm | LayerNorm {sd['layernorm']['assumed']:.4f}, none "
            f"{sd['none']['assumed']:.4f} | {design['effect_n1']} | {design['n1_power_first']:.2f} | "
            f"{design['n1_power_last']:.2f} |",
            *(f"| {cell.replace('layernorm', 'LayerNorm')} | {n} |" for cell, n in w["cells"].items())]
    words = [f"All cells use {w['windows']} windows", f"held-out loss {design['target_loss']}",
             f"+{design['effect_n1']} logit per key", f"(LayerNorm {sd['layernorm']['v2_at_target']:.5f}, none "
             f"{sd['none']['v2_at_target']:.5f})", f"({sd['layernorm']['v3_m0']:.5f}, {sd['none']['v3_m0']:.5f})",
             f"above {design['u_boundary']:.4f} logit per key", f"{design['bos_layernorm_mean']:.4f}",
             f"seeds 8-28 ({design['n1_seeds']} per arm", f"a full run costs {c['run_core_seconds']:.0f} core-seconds",
             f"16 full runs ({c['u_core_seconds']:.0f} core-s)", f"{c['n1_core_seconds']:.0f} core-s for "
             f"{design['n1_seeds']} seeds per arm", f"cost {c['probe_core_seconds']:.0f} core-s",
             f"LayerNorm {100 * c['fraction_of_tokens']['layernorm']:.1f} %, none "
             f"{100 * c['fraction_of_tokens']['none']:.1f} %", f"times {c['eval_factor']:.2f}",
             f"In all {c['core_seconds']:.0f} core-seconds: about {c['wall_seconds'] / 60:.0f} minutes on 2 cores"]
    missing = [x for x in rows + words if x not in plan]
    assert missing == []
    assert design["n1_power_first"] >= 0.8 and design["u_power_first"] >= 0.8 and c["fits"]
    assert v4_plan.n1_power(design["n1_seeds"] - 1, sd["layernorm"]["assumed"], sd["none"]["assumed"]) < 0.8
    from lnrecency.experiments.plans import text_arms
    from lnrecency.experiments.plans.declared import study

    st = text_arms.thesis_text_v4.preset(False)
    rules = [study("thesis-text-v4").test(t).rule for t in ("U1", "U2")]  # the boundary each U test declares
    assert all(round(design["u_boundary"], 4) == r.boundary for r in rules) and st.windows == w["windows"]
    assert (len(st.n1_seeds), len(st.u_seeds), st.target_loss) == (design["n1_seeds"], v4_plan.U_SEEDS,
                                                                    v4_plan.TARGET_LOSS)
    assert st.n1_eval_every == v4_plan.N1_EVAL_EVERY and st.cap_factor == v4_plan.N1_CAP_FACTOR


def test_the_imposed_profiles_are_the_published_cells():
    from lnrecency.experiments.plans.text_arms import shares

    published = v4_plan.imposed_profiles(_json("docs/thesis_text_v2.json"))
    assert {k: list(v) for k, v in shares().items()} == published
    assert published["layernorm"][0] == 1.0 and np.mean(published["layernorm"][1:]) > 4 * np.mean(published["none"][1:])


def test_the_rule_decides_each_way():
    from lnrecency.experiments.plans.declared import study
    from lnrecency.experiments.plans.engine import decide

    def rows(values, **kw):
        return [{"slope": v, "learned": True, "reached": True, **kw} for v in values]
    table = {"U1 none": rows([0.15, 0.14, 0.16, 0.15, 0.13, 0.17, 0.15, 0.14]),  # read-out learned: confirmed
             "U2 layernorm": rows([0.15, 0.14, 0.16, 0.15, 0.13, 0.17, 0.15, 0.14]),  # slope kept: refuted
             "N1 layernorm": rows(0.001 + 0.0002 * np.arange(8)), "N1 none": rows(0.004 + 0.0002 * np.arange(8))}
    got = {k: d.verdict for k, (d, _) in decide(study("thesis-text-v4"), table).items()}
    assert got == {"U1": "confirmed", "U2": "refuted", "N1": "refuted"}
    from lnrecency.experiments.plans.hooks import v4_secondary

    sec = v4_secondary(table, _json("docs/thesis_text_v2.json"))  # U1 far above v2's BOS none, U2 near its LayerNorm
    assert sec["U1 - v2 bos none"]["side"] == "above" and sec["U2 - v2 bos layernorm"]["side"] == "across"
    table["N1 none"] = [{**r, "reached": i < 2} for i, r in enumerate(table["N1 none"])]  # two runs at the target
    d, why = decide(study("thesis-text-v4"), table)["N1"]
    assert d is None and "fewer than" in why


@pytest.fixture(scope="module")
def quick(trained_cache, word_corpus):
    pytest.importorskip("torch")
    from lnrecency.experiments.plans import text_arms

    corpus = word_corpus("v4corpus", 4)
    quick = text_arms.thesis_text_v4.preset(True)
    st = quick.replace(u_seeds=(0,), n1_seeds=(8,), windows=8,
                       base=dataclasses.replace(quick.base, corpus=str(corpus), n=16, steps=20, eval_every=10))
    return st, text_arms.thesis_text_v4.run(st, progress=False, workers=1)


def test_the_quick_pipeline_holds_the_imposed_share_and_stops_at_the_target(quick):
    from lnrecency.experiments.plans import text_arms
    from lnrecency.experiments.plans.hooks import v4_snapshot

    st, runs = quick
    assert [(r["arm"], r["norm"]) for r in runs] == [("U1", "none"), ("U2", "layernorm"), ("N1", "layernorm"),
                                                      ("N1", "none")]
    for r in runs:
        if r["arm"] == "N1":  # the quick target (7.0) is reached at the first evaluation, well before the cap
            assert r["imposed"] is None and r["stopped"] == "target" and r["final_loss"] <= st.target_loss
            assert r["steps"] == st.n1_eval_every and r["paths"] is None
        else:
            assert r["imposed"] == {"U1": "profile", "U2": "profile none"}[r["arm"]] and r["imposed_gap"] < 1e-6
            assert r["steps"] == st.base.steps and set(r["paths"]) == {"own", "bos", "other", "bias"}
            assert sum(r["paths"].values()) == pytest.approx(r["slope"]["mean"], abs=1e-9)
        assert r["windows"] == 8 and np.isfinite(r["slope"]["mean"])
    assert text_arms.thesis_text_v4.cached(st) == runs
    snap = v4_snapshot(runs, st, {})
    json.dumps(snap, allow_nan=False)
    assert snap["plan_sha256"] == v4_plan.PLAN_SHA256 and snap["missed_target"] == []
    assert {t["verdict"] for t in snap["tests"].values()} == {"inconclusive"}  # one seed per cell decides nothing
