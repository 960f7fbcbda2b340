"""TU1, TU2, TN1: the thesis on text, plan version 4 (does LayerNorm act upstream, where the sink forms, or in layer
2's read-out; and without BOS, at matched loss), in NoPE language models trained here (the engine's
:mod:`lnrecency.experiments.plans.text_arms`, from the plan's declared arms).

The three primary tests U1, U2, N1 of the pre-registered plan (``lnrecency/data/thesis_text_plan_v4.md``; its SHA-256
is in every row's evidence), decided together by Holm's procedure at 0.05 over these three only: a family of their
own. U1 and U2 are one-sample tests of the layer-2 slope against 0.0764 logit per key (half of plan v2's BOS LayerNorm
slope); N1 is Welch's test of LayerNorm minus none at held-out loss 4.25. The statements are ours, so a row reads
confirmed, refuted or inconclusive; a quick run decides nothing. The probe's noise per cell, the secondary intervals
and the path decomposition are published with the per-seed rows (docs/thesis_text_v4.json), no verdicts.
"""
from __future__ import annotations

from lnrecency.claims.cached_study import CachedStudy
from lnrecency.claims.catalog import declared, result_source
from lnrecency.claims.declare import claim
from lnrecency.claims.published import plan_rows
from lnrecency.claims.trained_qualifiers import matched_stage, plan_qualifiers
from lnrecency.claims.trained_rules import by_a_hair, not_installed, one_claim_of, plan_levels
from lnrecency.experiments.plans.declared import plan_keys, study
from lnrecency.inference.evidence import Evidence, record

#: claim -> the plan's test
PLAN_KEYS = plan_keys("thesis-text-v4")  # claim -> its test, from the plan's declaration
STATEMENTS = {cid: declared(cid).text("s1") for cid in PLAN_KEYS}


@record
class TextThesisV4Evidence(Evidence):
    test: str
    plan_sha256: str
    decision: dict  # the snapshot's test: verdict, interval, p-values, per-seed values; {} when not decided
    why_not: str
    windows: int
    noise: dict  # cell -> {"probe_se", "seed_sd", "ratio"}
    missed_target: list  # N1 runs that never reached the target loss


#: the experiment's cached runs (lnrecency.claims.cached_study)
STUDY = CachedStudy("lnrecency.experiments.plans.text_arms", "thesis_text_v4", "thesis_text_v4.cached",
                    "thesis_text_v4.run")
available = STUDY.available


def _finding(cid: str, test: dict, quick: bool, level: float | None, missed: list) -> str:
    lead = "quick run: not decisive. " if quick else ""
    key = PLAN_KEYS[cid]
    if not test.get("interval"):
        return f"{lead}Not decided: {test.get('why') or 'no test'} (plan v4's Holm family keeps its three places)."
    lo, hi = test["interval"]
    mean = 0.5 * (lo + hi)
    what = "LayerNorm - none" if key == "N1" else "layer-2 slope"
    seeds = (f"{len(test['values'])} and {len(test['other'])} runs" if test.get("other") else
             f"{len(test['values'])} runs")
    text = (f"{lead}{key}: {what} {mean:+.5f} logit per key, 95% interval [{lo:+.5f}, {hi:+.5f}] over {seeds}; p "
            f"(stated direction) {test['p_confirm']:.2g}, p (opposite) {test['p_refute']:.2g}; Holm over plan v4's 3 "
            f"tests at 0.05; at the measured spread the design detects {test['detectable_effect']:.5f} with power "
            f"0.8.")
    text += by_a_hair(test["p_pair"], level, test["verdict"])
    if key == "N1" and missed:
        text += f" Never reached the target loss: {', '.join(missed)} (left out)."
    return text


def _evaluate_all(quick: bool, progress=None) -> list:
    from lnrecency.inference.verdicts import ClaimResult

    try:
        from lnrecency.experiments.plans.engine import hook
    except ImportError as exc:
        return [not_installed(cid, s, exc) for cid, s in STATEMENTS.items()]
    st, runs = STUDY.runs(quick, progress)
    snap = hook(study("thesis-text-v4").snapshot)(runs, st, {})
    tests = snap["tests"]
    levels = plan_levels("thesis-text-v4", tests)
    ratio = (matched_stage(snap) or (None,))[0]  # N1's counter-row: the tokens each arm took to the matched loss
    out = []
    for cid, statement in STATEMENTS.items():
        key = PLAN_KEYS[cid]
        t = tests[key]
        verdict = "inconclusive" if quick else t["verdict"]
        ev = TextThesisV4Evidence(test=key, plan_sha256=snap["plan_sha256"],
                                  decision={k: v for k, v in t.items() if k not in ("statement", "why")},
                                  why_not=t["why"], windows=st.windows, noise=snap["noise"],
                                  missed_target=list(snap["missed_target"]))
        bos = "no BOS" if key == "N1" else "BOS first"
        setting = {"arch": "attn2 (2 attention-only layers, NoPE, width 64)", "layer": 2,
                   "training_seeds": len(st.n1_seeds if key == "N1" else st.u_seeds),
                   "probe": f"{st.windows} held-out windows, {bos}, first key out; plan v4 {snap['plan_sha256'][:12]}"}
        decided = t if t.get("interval") is not None else None
        out.append(ClaimResult(cid, result_source(cid, statement), statement, setting, verdict, ev,
                               _finding(cid, t, quick, levels.get(key), snap["missed_target"]),
                               plan_qualifiers(key, decided, t.get("why", ""), quick=quick, tokens_ratio=ratio
                                               if key == "N1" else None, level=levels.get(key))))
    return out


def evaluator_for(cid: str):
    return one_claim_of(_evaluate_all, cid)


for _cid in PLAN_KEYS:
    claim(_cid, module=__name__, available=available)(evaluator_for(_cid))


#: the per-run rows this experiment publishes (a file of docs/): a fresh report with nothing cached re-decides this
#: module's rows from them by the plan's own rule (lnrecency.claims.published)
PUBLISHED = "thesis_text_v4.json"


def redecide(snap: dict) -> list[tuple[str, str, str, tuple | None]]:
    """(claim, statement, verdict, interval or None) of every row this module decides, re-decided from the published
    snapshot's per-run rows alone by the plan's own rule (the same code on JSON-exact values gives the same bits)."""
    from lnrecency.experiments.plans.engine import decide

    decided = decide(study("thesis-text-v4"), snap["runs"])
    return plan_rows(decided, [(cid, s, PLAN_KEYS[cid]) for cid, s in STATEMENTS.items()])
