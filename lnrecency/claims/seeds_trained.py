"""S2.1-S2.7 and S3.1-S3.3: the statements of seeds 002 and 003 about trained models, checked on small models
trained here (:mod:`lnrecency.models.seed002`, :mod:`lnrecency.models.seed003`).

Every verdict rests on at least 3 training seeds: one statistic per seed, and the sign of its 95% t-interval
over seeds decides (above the statement's side: confirmed; on the other side: refuted; containing the
boundary: inconclusive). Each setting states the scale and the theory's assumptions the models break. The
operational definitions (which positions are "near", the recency slope, the margin of "the law explains it")
are our formulation of the seeds' prose; each is stated with its verdict.
"""
from __future__ import annotations

import numpy as np

from lnrecency.claims._common import grouped
from lnrecency.claims.trained import SeedInterval, seed_interval
from lnrecency.evidence import Evidence, record
from lnrecency.models.seeds_config import EXPERIMENTS, is_cached, select

SOURCE = "trained models, our formulation"
NEAR = (8, 9, 10)  # seed 002: "within 4 tokens of the current token (positions 8 and later)"
FAR = (4, 5, 6, 7)
SELF_ATTENTION = 0.5  # a head "attends strongly to itself": mean P_ii above this
LAW_MARGIN = 0.1  # "the law explains the shrinkage": log-log slopes agree within this margin
LEARNED = 0.5  # seed 003: a task counts as learned when every model's accuracy at the training length reaches this

S2 = {
    "S2.1": "Seed 002 (prerequisite): training forms an induction head in layer 1 in every training seed (the "
            "largest induction score among layer-1 heads reaches the stated threshold in each seed; refuted when "
            "it does in none).",
    "S2.2": "Seed 002, Figure 1: after <BOS> R [A][B] .. [A][C] .. [A], [C] is more probable than [B] when the "
            f"second [A] is within 4 tokens of the end (positions {NEAR[0]}-{NEAR[-1]}; statistic: the mean of "
            "P(C) - P(B) over those positions).",
    "S2.3": "Seed 002, Figure 3: the induction head attends more to [C] relative to [B] the closer the second [A] "
            "is to the end (slope of attention(C) - attention(B) against the position of the second [A]).",
    "S2.4": "Seed 002, Figures 4-5: on random sequences the induction head pays more attention to recent tokens "
            "(recency slope of its average attention over keys 1..i-1, mean over rows i >= 3, above 0).",
    "S2.5": "Seed 002, Figure 6: the recency remains with position embeddings removed and all layer-0 heads but "
            "one ablated (the recency slope, averaged over the choices of the kept head, above 0).",
    "S2.6": "Seed 002, mechanism: the output norm of layer-0 heads that do not attend strongly to themselves "
            f"(mean P_ii < {SELF_ATTENTION}) shrinks with position (log-log slope of E|z_i|^2 against i + 1 "
            "below 0).",
    "S2.7": "Seed 002, mechanism: the law for an average of uncorrelated vectors, E sum_k P_ik^2 |v_k|^2 from "
            "the measured weights and values, explains the shrinkage (its log-log slope agrees with the "
            f"measured one within {LAW_MARGIN}).",
}
S3 = {
    "S3.1": "Seed 003: the variance of the attention output (per coordinate) decays with sequence length in "
            "trained decoders (log-log slope against the test length below 0).",
    "S3.2": "Seed 003: a LayerNorm right after attention reduces the shift of the hidden-state distribution at "
            "lengths beyond training (the next layer's input variance moves less from its training-length "
            "value with post-LN, or with both, than with pre-LN only).",
    "S3.3": "Seed 003: a LayerNorm right after attention improves length extrapolation (accuracy at 8x the "
            "training length, post-LN (or both) minus pre-LN, above 0; decided only where every model learned "
            f"the task at the training length, accuracy >= {LEARNED}).",
}
STATEMENTS = {**S2, **S3}


@record
class SeedStatistic(Evidence):
    """One statistic over training seeds (its interval and per-seed values) and what it is."""

    statistic: str
    interval: SeedInterval
    boundary: float = 0.0
    wanted: str = "above"  # "above" / "below" the boundary, "within" +-boundary, or "each above" (every seed)


@record
class NotRun(Evidence):
    reason: str


def _side(iv: SeedInterval, boundary: float, want: str) -> str:
    """confirmed / refuted / inconclusive for 'above' or 'below' ``boundary``."""
    if iv.low > boundary:
        return "confirmed" if want == "above" else "refuted"
    if iv.high < boundary:
        return "confirmed" if want == "below" else "refuted"
    return "inconclusive"


def _text(group) -> str:
    return "; ".join(f"{e.statistic}: {e.interval.mean:.3g} [{e.interval.low:.3g}, "
                     f"{e.interval.high:.3g}] (seeds: {', '.join(f'{v:.3g}' for v in e.interval.values)})"
                     for s, e in group) + "."


def _not_run(cid: str, reason: str) -> list:
    from lnrecency.verdicts import ClaimResult

    return [ClaimResult(cid, SOURCE, STATEMENTS[cid], {}, "inconclusive", NotRun(reason=reason),
                        f"Not evaluated: {reason}")]


def _experiment(experiment: str, quick: bool, progress=None):
    """(settings, runs, "") of the experiment's preset, or (None, None, why) without torch."""
    try:
        from lnrecency.models.seeds import run_experiment
    except ImportError as exc:
        return None, None, f"needs the models extra (python3 -m pip install -e '.[models]'): {exc}"
    st = EXPERIMENTS[experiment].preset(quick)
    return st, run_experiment(experiment, st, progress=bool(progress)), ""


def _base2(st) -> dict:
    return {"scale": st.scale(), "breaks": "W_Q, W_K, W_V, W_O, embeddings and positions learned (theory: W = I, "
            "no positions); trained on random-period repeats, not natural text (seed 002's model)",
            "training_seeds": len(st.seeds)}


def seed002_statistics(st, runs: list) -> dict:
    """Per statement: (statistic name, per-seed values, boundary, side wanted)."""
    out = {}
    out["S2.1"] = [("largest layer-1 induction score", [r["induction_score"] for r in runs], st.threshold,
                    "each above")]
    d_near = []
    for r in runs:
        f = r["figure1"]
        idx = [f["pos2"].index(p) for p in NEAR]
        d_near.append(float(np.mean([f["p_c"][q] - f["p_b"][q] for q in idx])))
    out["S2.2"] = [("mean P(C) - P(B), second [A] at 8-10", d_near, 0.0, "above")]
    att = [float(np.polyfit(r["figure1"]["pos2"], np.subtract(r["figure1"]["att_c"], r["figure1"]["att_b"]), 1)[0])
           for r in runs]
    out["S2.3"] = [("slope of attention(C) - attention(B) per position", att, 0.0, "above")]
    out["S2.4"] = [(f"recency slope, {st.short} tokens", [r["slope_short"] for r in runs], 0.0, "above"),
                   (f"recency slope, {st.long} tokens", [r["slope_long"] for r in runs], 0.0, "above")]
    out["S2.5"] = [(f"recency slope, {st.long} tokens, no positions, one layer-0 head kept (mean over the kept "
                    f"head)", [float(np.mean(r["ablated_slopes"])) for r in runs], 0.0, "above")]
    shrink, gap = [], []
    for r in runs:
        weak = [h for h in r["mechanism"]["heads"] if h["self_attention"] < SELF_ATTENTION]
        shrink.append(float(np.mean([h["measured_slope"] for h in weak])) if weak else float("nan"))
        gap.append(float(np.mean([h["law_slope"] - h["measured_slope"] for h in weak])) if weak else float("nan"))
    out["S2.6"] = [("log-log slope of E|z_i|^2, heads with P_ii < 0.5 (mean over heads)", shrink, 0.0, "below")]
    out["S2.7"] = [("law slope - measured slope (mean over those heads)", gap, LAW_MARGIN, "within")]
    return out


def decide_statistic(values, boundary, want) -> tuple[str, SeedInterval]:
    iv = seed_interval(values)
    if want == "each above":  # a per-seed property (an induction head formed in every training seed)
        vals = list(iv.values)
        return ("confirmed" if min(vals) >= boundary else "refuted" if max(vals) < boundary
                else "inconclusive"), iv
    if want == "within":  # equivalence within +-boundary
        if -boundary < iv.low and iv.high < boundary:
            return "confirmed", iv
        if iv.low > boundary or iv.high < -boundary:
            return "refuted", iv
        return "inconclusive", iv
    return _side(iv, boundary, want), iv


def _results_for(cid: str, stats: dict, base: dict) -> list:
    items = []
    for name, values, boundary, want in stats[cid]:
        if not np.all(np.isfinite(values)):
            reason = name if "not decided" in name else f"{name}: undefined in some seed"
            items.append(({"case": name}, "inconclusive", NotRun(reason=reason)))
            continue
        verdict, iv = decide_statistic(values, boundary, want)
        items.append(({"case": name}, verdict, SeedStatistic(statistic=name, interval=iv, boundary=boundary,
                                                                wanted=want)))
    return grouped(cid, SOURCE, STATEMENTS[cid], base, items, _finding)


def _finding(verdict: str, group) -> str:
    done = [(s, e) for s, e in group if isinstance(e, SeedStatistic)]
    undecided = [e.reason for _, e in group if isinstance(e, NotRun)]
    return " ".join(([_text(done)] if done else []) + [r + "." for r in undecided])


def _s2(cid: str):
    def run(*, quick: bool = False, progress=None) -> list:
        st, runs, why = _experiment("seed002", quick, progress)
        if runs is None:
            return _not_run(cid, why)
        return _results_for(cid, seed002_statistics(st, runs), _base2(st))
    return run


def _base3(st) -> dict:
    return {"scale": st.scale(), "breaks": "W_Q, W_K, W_V, W_O, embeddings and positions learned (theory: W = I); "
            "trained on argmax retrieval and dictionary lookup", "training_seeds": len(st.seeds)}


def seed003_statistics(st, runs: list) -> dict:
    """Per statement: (statistic, per-seed values, boundary, side) per task (and architecture for S3.1)."""
    out = {"S3.1": [], "S3.2": [], "S3.3": []}
    top = max(st.test_factors)
    for task in st.tasks:
        for arch in st.archs:
            out["S3.1"].append((f"{task}/{arch}: log-log slope of the layer-1 attention-output variance against "
                                f"length", [r["variance_slope"] for r in select(runs, task, arch)], 0.0, "below"))
        pre = {r["seed"]: r for r in select(runs, task, "pre")}
        for arch in [a for a in st.archs if a != "pre"]:
            other = {r["seed"]: r for r in select(runs, task, arch)}
            seeds = sorted(set(pre) & set(other))
            out["S3.2"].append((f"{task}: |log shift| pre-LN minus {arch}-LN at {top}x (layer-2 input variance "
                                f"vs training length)", [pre[s]["shift"][-1] - other[s]["shift"][-1] for s in seeds],
                                0.0, "above"))
            learned = min(r["accuracy"][0] for r in (*pre.values(), *other.values()))
            name = f"{task}: accuracy at {top}x, {arch}-LN minus pre-LN"
            if learned < LEARNED:  # extrapolation is not defined for a task not learned at the training length
                name += (f" (not decided: the task is not learned at the training length, lowest accuracy "
                         f"{learned:.2f} < {LEARNED})")
                values = [float("nan")] * len(seeds)
            else:
                values = [other[s]["accuracy"][-1] - pre[s]["accuracy"][-1] for s in seeds]
            out["S3.3"].append((name, values, 0.0, "above"))
    return out


def _s3(cid: str):
    def run(*, quick: bool = False, progress=None) -> list:
        st, runs, why = _experiment("seed003", quick, progress)
        if runs is None:
            return _not_run(cid, why)
        return _results_for(cid, seed003_statistics(st, runs), _base3(st))
    return run


def available(experiment: str, quick: bool) -> bool:
    """Whether the experiment of this mode is cached (its verdicts then cost no training)."""
    from lnrecency.models.thesis_config import torch_version

    return torch_version() is not None and is_cached(experiment, EXPERIMENTS[experiment].preset(quick))


def evaluate(*, quick: bool = False, progress=None) -> list:
    return [r for cid in BY_ID for r in BY_ID[cid](quick=quick, progress=progress)]


BY_ID = {**{cid: _s2(cid) for cid in S2}, **{cid: _s3(cid) for cid in S3}}
__all__ = ["STATEMENTS", "BY_ID", "evaluate", "available", "seed002_statistics", "seed003_statistics",
           "decide_statistic", "S2", "S3"]
