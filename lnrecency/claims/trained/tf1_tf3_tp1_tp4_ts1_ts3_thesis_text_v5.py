"""TF1-TF3, TP1-TP4, TS1-TS3: the thesis on text, plan version 5 (does the slope need the sink's fall with position,
which part of LayerNorm the read-out needs, and is "reverses at matched loss" the training stage), in NoPE language
models trained here (the engine's :mod:`lnrecency.experiments.plans.text_arms`, from the plan's declared arms).

The ten primary tests of the pre-registered plan (``lnrecency/data/thesis_text_plan_v5.md``; its SHA-256 is in every
row's evidence), decided by Holm's procedure at 0.05 in two families: F1-F3 and the parts tests (the plan's P1-P4,
declared D1-D4: Wu's experiment holds P1-P6), and T1-T3. F and the parts are one-sample tests of the layer-2 slope
against 0.0764 logit per key (half of plan v2's BOS LayerNorm slope); T1 a one-sample test of each LayerNorm run's
slope at 3.0M tokens minus at held-out loss 4.25; T2 and T3 Welch's tests of LayerNorm minus none at 3.0M tokens and at
loss 4.25. The statements are ours; a quick run decides nothing. The trajectories, the secondary intervals, the path
decomposition and the predictions compared are published with the per-seed rows (docs/thesis_text_v5.json).
"""
from __future__ import annotations

from lnrecency.claims.cached_study import CachedStudy
from lnrecency.claims.catalog import declared, result_source
from lnrecency.claims.declare import claim
from lnrecency.claims.published import plan_rows
from lnrecency.claims.trained_qualifiers import plan_qualifiers
from lnrecency.claims.trained_rules import by_a_hair, not_installed, one_claim_of, plan_levels
from lnrecency.experiments.plans.declared import plan_keys, study
from lnrecency.inference.evidence import Evidence, record

PLAN_KEYS = plan_keys("thesis-text-v5")  # claim -> its test, from the plan's declaration
STATEMENTS = {cid: declared(cid).text("s1") for cid in PLAN_KEYS}
#: the two Holm families (the plan's rate at most 0.10), as declared
FAMILIES = study("thesis-text-v5").holm_families()


@record
class TextThesisV5Evidence(Evidence):
    test: str
    plan_sha256: str
    decision: dict  # the snapshot's test: verdict, interval, p-values, per-seed values; {} when not decided
    why_not: str
    windows: int
    noise: dict  # cell -> {"probe_se", "seed_sd", "ratio"}
    prediction: dict  # the plan's prediction for this test against its outcome


#: the experiment's cached runs (lnrecency.claims.cached_study)
STUDY = CachedStudy("lnrecency.experiments.plans.text_arms", "thesis_text_v5", "thesis_text_v5.cached",
                    "thesis_text_v5.run")
available = STUDY.available


def _finding(key: str, test: dict, quick: bool, level: float | None, prediction: dict) -> str:
    lead = "quick run: not decisive. " if quick else ""
    family = "T" if key[0] == "T" else "FP"
    if not test.get("interval"):
        return f"{lead}Not decided: {test.get('why') or 'no test'} (plan v5's Holm family {family} keeps its place)."
    lo, hi = test["interval"]
    what = {"T1": "slope at 3.0M tokens - at loss 4.25", "T2": "LayerNorm - none", "T3": "LayerNorm - none"}.get(
        key, "layer-2 slope")
    seeds = (f"{len(test['values'])} and {len(test['other'])} runs" if test.get("other") else
             f"{len(test['values'])} runs")
    text = (f"{lead}{key}: {what} {test['mean']:+.5f} logit per key, 95% interval [{lo:+.5f}, {hi:+.5f}] over "
            f"{seeds}; p (stated direction) {test['p_confirm']:.2g}, p (opposite) {test['p_refute']:.2g}; Holm over "
            f"plan v5's family {family} ({len(FAMILIES[family])} tests) at 0.05; at the measured spread the design "
            f"detects {test['detectable_effect']:.5f} with power 0.8.")
    text += by_a_hair(test["p_pair"], level, test["verdict"])
    if prediction and not quick:
        size = prediction.get("predicted_size")
        text += (f" Predicted before the runs: {prediction['predicted']}" + (f" ({size:+.4f})" if size is not None
                                                                              else "")
                 + f"; the verdict {'matched' if prediction['held'] else 'missed'} it"
                 + ("" if prediction.get("size_inside") is None else
                    "; the size lies inside the interval" if prediction["size_inside"] else
                    "; the size lies outside the interval") + ".")
    return text


def _evaluate_all(quick: bool, progress=None) -> list:
    from lnrecency.inference.verdicts import ClaimResult

    try:
        from lnrecency.experiments.plans.engine import hook
    except ImportError as exc:
        return [not_installed(cid, s, exc) for cid, s in STATEMENTS.items()]
    st, runs = STUDY.runs(quick, progress)
    snap = hook(study("thesis-text-v5").snapshot)(runs, st, {})
    tests = snap["tests"]
    levels = plan_levels("thesis-text-v5", tests)
    out = []
    for cid, statement in STATEMENTS.items():
        key = PLAN_KEYS[cid]
        t = tests[key]
        verdict = "inconclusive" if quick else t["verdict"]
        ev = TextThesisV5Evidence(test=key, plan_sha256=snap["plan_sha256"],
                                  decision={k: v for k, v in t.items() if k not in ("statement", "why")},
                                  why_not=t["why"], windows=st.t_windows if key[0] == "T" else st.windows,
                                  noise=snap["noise"], prediction=snap["predictions"].get(key, {}))
        t_arm = key[0] == "T"
        setting = {"arch": "attn2 (2 attention-only layers, NoPE, width 64)", "layer": 2,
                   "training_seeds": len(st.t_seeds if t_arm else st.fp_seeds),
                   "probe": f"{ev.windows} held-out windows, {'no BOS' if t_arm else 'BOS first'}, first key out; "
                            f"plan v5 {snap['plan_sha256'][:12]}"}
        decided = t if t.get("interval") is not None else None
        out.append(ClaimResult(cid, result_source(cid, statement), statement, setting, verdict, ev,
                               _finding(key, t, quick, levels.get(key), snap["predictions"].get(key, {})),
                               plan_qualifiers(key, decided, t.get("why", ""), quick=quick, decisions=tests,
                                               level=levels.get(key))))
    return out


def evaluator_for(cid: str):
    return one_claim_of(_evaluate_all, cid)


for _cid in PLAN_KEYS:
    claim(_cid, module=__name__, available=available)(evaluator_for(_cid))


#: the per-run rows this experiment publishes (a file of docs/): a fresh report with nothing cached re-decides this
#: module's rows from them by the plan's own rule (lnrecency.claims.published)
PUBLISHED = "thesis_text_v5.json"


def redecide(snap: dict) -> list[tuple[str, str, str, tuple | None]]:
    """(claim, statement, verdict, interval or None) of every row this module decides, re-decided from the published
    snapshot's per-run rows alone by the plan's own rule (the same code on JSON-exact values gives the same bits)."""
    from lnrecency.experiments.plans.declared import study
    from lnrecency.experiments.plans.engine import decide

    return plan_rows(decide(study("thesis-text-v5"), snap["runs"]),
                     [(cid, s, PLAN_KEYS[cid]) for cid, s in STATEMENTS.items()])
