"""TC1-TC5: the thesis on text, plan version 3 (the learned read-out put to causal tests), in plan v2's NoPE language
models (:mod:`lnrecency.experiments.studies.thesis_text_v3`).

The five primary tests A1, B1, C1, A0, C0 of the pre-registered plan (``lnrecency/data/thesis_text_plan_v3.md``; its
SHA-256 is in every row's evidence), decided together by Holm's procedure at 0.05 over these five only: a family of
their own. Each per-seed value is the intervened layer-2 slope minus half the intact one, in the LayerNorm models; the
stated side is below 0 (the intervention removed more than half). The statements are ours (hypotheses about how
layer 2 reads the slope), so a row reads confirmed, refuted or inconclusive; a quick run decides nothing. The path
decomposition of the layer-2 slope and every cell's interventions are secondary: a table, no verdict.
"""
from __future__ import annotations

import numpy as np

from lnrecency.claims.cached_study import CachedStudy
from lnrecency.claims.catalog import declared, result_source
from lnrecency.claims.declare import claim
from lnrecency.claims.published import plan_rows
from lnrecency.claims.trained_qualifiers import plan_qualifiers
from lnrecency.claims.trained_rules import by_a_hair, not_installed, one_claim_of, plan_levels
from lnrecency.experiments.plans.declared import plan_keys
from lnrecency.inference.evidence import Evidence, record

#: claim -> the plan's test
PLAN_KEYS = plan_keys("thesis-text-v3")  # claim -> its test, from the plan's declaration
STATEMENTS = {cid: declared(cid).text("s1") for cid in PLAN_KEYS}
#: what each cell of the evidence keeps: the mean and SE over the cell's learned seeds
CELL_KEYS = ("slope", "qk_identity", "bos_direction", "scale_fixed", "own", "bos", "other", "bias", "bos scale",
             "bos numerator", "scale", "numerator", "interaction")


@record
class TextThesisV3Evidence(Evidence):
    test: str
    plan_sha256: str
    decision: dict  # SeedDecision JSON, or {} when not decided
    why_not: str
    seeds: int
    windows: int
    cells: dict  # "bos layernorm" ... "no bos none" -> CELL_KEYS (mean, SE) pairs


#: the experiment's cached runs (lnrecency.claims.cached_study)
STUDY = CachedStudy("lnrecency.experiments.studies.thesis_text_v3", "V3Settings", "cached_v3", "run_v3")
available = STUDY.available


def _pair(values: list) -> list:
    v = np.asarray(values, dtype=float)
    if v.size < 2:
        return [float(v.mean()) if v.size else None, None]
    return [float(v.mean()), float(v.std(ddof=1) / np.sqrt(v.size))]


def cells_of(table: dict) -> dict:
    """Per cell of the snapshot's per-seed table: each :data:`CELL_KEYS` entry's mean and SE over learned seeds (the
    paths' slopes; "bos scale" / "bos numerator": the BOS path's per-token-scale and own-change parts; "scale",
    "numerator", "interaction": the same parts summed over the paths)."""
    out = {}
    for cell, rows in table.items():
        rows = [r for r in rows if r["learned"]]

        def part(r, which):
            return sum(r["paths"][p][which] for p in r["paths"])
        values = {"slope": [r["slope"] for r in rows],
                  **{k: [r[k] for r in rows] for k in ("qk_identity", "bos_direction", "scale_fixed")},
                  **{p: [r["paths"][p]["slope"] for r in rows] for p in ("own", "bos", "other", "bias")},
                  "bos scale": [r["paths"]["bos"]["scale"] for r in rows],
                  "bos numerator": [r["paths"]["bos"]["numerator"] for r in rows],
                  **{w: [part(r, w) for r in rows] for w in ("scale", "numerator", "interaction")}}
        out[cell] = {k: _pair(values[k]) for k in CELL_KEYS}
    return out


def _finding(cid: str, test: dict, quick: bool, cells: dict, level: float | None) -> str:
    lead = "quick run: not decisive. " if quick else ""
    key = PLAN_KEYS[cid]
    if not test.get("interval"):
        return f"{lead}Not decided: {test.get('why') or 'no test'} (plan v3's Holm family keeps its five places)."
    lo, hi = test["interval"]
    mean = sum(test["values"]) / len(test["values"])
    text = (f"{lead}{key}: {mean:+.5f} (intervened - 0.5 x intact, logit per key), 95% interval [{lo:+.5f}, "
            f"{hi:+.5f}] over {len(test['values'])} learned seeds; p (stated direction) {test['p_confirm']:.2g}, "
            f"p (opposite) {test['p_refute']:.2g}; Holm over plan v3's 5 tests at 0.05.")
    text += by_a_hair(test["p_pair"], level, test["verdict"])
    cell = cells.get("bos layernorm" if key.endswith("1") else "no bos layernorm") or {}
    kind = {"A": "qk_identity", "B": "bos_direction", "C": "scale_fixed"}[key[0]]
    if cell.get("slope") and cell["slope"][0] is not None:
        text += (f" Layer-2 slope {cell['slope'][0]:+.4f} intact, {cell[kind][0]:+.4f} with the intervention "
                 f"(means over seeds).")
    return text


def _evaluate_all(quick: bool, progress=None) -> list:
    from lnrecency.inference.verdicts import ClaimResult

    try:
        from lnrecency.experiments.studies.thesis_text_v2 import cached_v2
        from lnrecency.experiments.studies.thesis_text_v3 import snapshot
    except ImportError as exc:
        return [not_installed(cid, s, exc) for cid, s in STATEMENTS.items()]
    st, runs = STUDY.runs(quick, progress)
    snap = snapshot(runs, cached_v2(st.v2), st)
    tests = snap["tests"]
    levels = plan_levels("thesis-text-v3", tests)
    cells = cells_of(snap["runs"])
    out = []
    for cid, statement in STATEMENTS.items():
        t = tests[PLAN_KEYS[cid]]
        verdict = "inconclusive" if quick else t["verdict"]
        ev = TextThesisV3Evidence(test=PLAN_KEYS[cid], plan_sha256=snap["plan_sha256"],
                                  decision={k: v for k, v in t.items() if k not in ("statement", "why")},
                                  why_not=t["why"], seeds=len(st.v2.seeds), windows=st.windows, cells=cells)
        bos = "BOS first" if PLAN_KEYS[cid].endswith("1") else "no BOS"
        setting = {"arch": "attn2 (2 attention-only layers, NoPE, width 64), LayerNorm", "layer": 2,
                   "training_seeds": len(st.v2.seeds),
                   "probe": f"{st.windows} held-out windows, {bos}, first key out; plan v3 {snap['plan_sha256'][:12]}"}
        out.append(ClaimResult(cid, result_source(cid, statement), statement, setting, verdict, ev,
                               _finding(cid, t, quick, cells, levels.get(PLAN_KEYS[cid])),
                               plan_qualifiers(PLAN_KEYS[cid], t if t.get("interval") is not None else None,
                                               t.get("why", ""), quick=quick, level=levels.get(PLAN_KEYS[cid]))))
    return out


def evaluator_for(cid: str):
    return one_claim_of(_evaluate_all, cid)


for _cid in PLAN_KEYS:
    claim(_cid, module=__name__, available=available)(evaluator_for(_cid))


#: the per-run rows this experiment publishes (a file of docs/): a fresh report with nothing cached re-decides this
#: module's rows from them by the plan's own rule (lnrecency.claims.published)
PUBLISHED = "thesis_text_v3.json"


def redecide(snap: dict) -> list[tuple[str, str, str, tuple | None]]:
    """(claim, statement, verdict, interval or None) of every row this module decides, re-decided from the published
    snapshot's per-run rows alone by the plan's own rule (the same code on JSON-exact values gives the same bits)."""
    from lnrecency.experiments.plans.declared import study
    from lnrecency.experiments.plans.engine import decide

    decided = decide(study("thesis-text-v3"), snap["runs"])
    return plan_rows(decided, [(cid, s, PLAN_KEYS[cid]) for cid, s in STATEMENTS.items()])
