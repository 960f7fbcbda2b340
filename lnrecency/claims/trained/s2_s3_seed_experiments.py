"""S2.1-S2.7 and S3.1-S3.3: the statements of seeds 002 and 003 about trained models, checked on small models
trained here (:mod:`lnrecency.experiments.studies.seed002`, :mod:`lnrecency.experiments.studies.seed003`).

A seed's statements are about someone else's model (seed 002: TransformerLens' attn-only-2l; seed 003: the
authors' models), so a row reads **reproduced** or **the opposite shown**, never confirmed or
refuted, with our setting (model, data, tokens seen) and the seed's beside it. Every part is one statistic
per training seed, decided by the rules of :mod:`lnrecency.claims.trained_rules` (learning gate, directional
or equivalence tests, Holm's procedure within this experiment's share of the one family-wise rate); S2.1, a
per-seed property (an induction head forms in every seed), is read seed by seed. The operational
definitions (which positions are "near", the recency slope, the margin of "the law explains it") are our
formulation of the seeds' prose; each is stated with its verdict.
"""
from __future__ import annotations

import math
from functools import partial

import numpy as np

from lnrecency.claims.catalog import declared, result_source
from lnrecency.claims.declare import REGISTERED, claim
from lnrecency.claims.trained_rules import (
    QUICK,
    Part,
    claim_rows,
    decide_parts,
    experiment_alpha,
    keep_learned,
)
from lnrecency.experiments.studies.seeds_config import EXPERIMENTS, is_cached, select
from lnrecency.inference.evidence import Evidence, NotRun, record
from lnrecency.inference.stats import SeedTest

NEAR = (8, 9, 10)  # seed 002: "within 4 tokens of the current token (positions 8 and later)"


FAR = (4, 5, 6, 7)


SELF_ATTENTION = 0.5  # a head "attends strongly to itself": mean P_ii above this


#: "the law explains the shrinkage": its log-log slope within this margin of the measured one (a power of the
#: position that differs by less than 0.1)
LAW_MARGIN = 0.1


#: seed 003: a task counts as learned when every model's accuracy at the training length reaches this
LEARNED = 0.5


LABELS = ("reproduced", "the opposite shown")


SEED002_SETTING = ("TransformerLens attn-only-2l: 2 attention-only layers, width 512, 8 heads of 64, vocabulary "
                   "48262, learned positions added to the stream, LayerNorm; trained on 22B tokens of C4 and code")


SEED003_SETTING = ("Li, Boduljak and Zhou (arXiv 2504.02827): Transformers trained on argmax retrieval and "
                   "dictionary lookup, tested beyond the training length (sizes not stated in the seed's text); "
                   "variance decay also reported in frontier models")


S2 = {
    "S2.1": declared("S2.1").text("s1"),
    "S2.2": declared("S2.2").text("s1"),
    "S2.3": declared("S2.3").text("s1"),
    "S2.4": declared("S2.4").text("s1"),
    "S2.5": declared("S2.5").text("s1"),
    "S2.6": declared("S2.6").text("s1"),
    "S2.7": declared("S2.7").text("s1"),
}


S3 = {
    "S3.1": declared("S3.1").text("s1"),
    "S3.2": declared("S3.2").text("s1"),
    "S3.3": declared("S3.3").text("s1"),
}
# the statements are typed once, in the catalogue; the constants this module decides with must be the ones they state
for _cid, _said in (("S2.2", f"positions {NEAR[0]}-{NEAR[-1]}"), ("S2.6", f"mean P_ii < {SELF_ATTENTION}"),
                    ("S2.7", f"within {LAW_MARGIN}"), ("S3.3", f"accuracy >= {LEARNED}")):
    if _said not in declared(_cid).text("s1"):
        raise ValueError(f"{_cid}'s statement in lnrecency/claims/catalog.py must state {_said!r} (the constant "
                         f"this module decides with)")


STATEMENTS = {**S2, **S3}


@record
class PerSeedEvidence(Evidence):
    """S2.1: a per-seed property, read seed by seed."""

    statistic: str
    values: tuple
    threshold: float
    training_seeds: int
    learned: int
    trajectory: dict

    def top_level(self) -> dict:
        return {"training_seeds": self.training_seeds, "learned": self.learned,
                "interval": [min(self.values), max(self.values)],
                "rule": {"rule": "per seed", "margin": None, "side": "each above", "boundary": self.threshold},
                "probe": {"task": {"values": list(self.values)}, "random": None}, "trajectory": self.trajectory}


def _not_run(cid: str, reason: str) -> list:
    from lnrecency.inference.verdicts import ClaimResult

    return [ClaimResult(cid, result_source(cid, STATEMENTS[cid]),
                        STATEMENTS[cid], {}, "inconclusive", NotRun(reason=reason),
                        f"Not evaluated: {reason}")]


def _experiment(experiment: str, quick: bool, progress=None):
    """(settings, runs, "") of the experiment's preset, or (None, None, why) without torch."""
    try:
        from lnrecency.experiments.studies.seeds import run_experiment
    except ImportError as exc:
        return None, None, f"needs the models extra (python3 -m pip install -e '.[models]'): {exc}"
    st = EXPERIMENTS[experiment].preset(quick)
    return st, run_experiment(experiment, st, progress=progress), ""


def _base2(st) -> dict:
    return {"scale": st.scale() + f", {_tokens_seen(st)} training tokens",
            "breaks": "W_Q, W_K, W_V, W_O, embeddings and positions learned (theory: W = I, no positions); "
                      "trained on random-period repeats, not natural text", "seed_setting": SEED002_SETTING,
            "training_seeds": len(st.seeds)}


def _tokens_seen(st) -> str:
    if hasattr(st, "n_train"):
        return f"{st.steps * st.batch * st.n_train:.3g}"
    return f"{st.steps * st.batch * st.train_length:.3g} (at most)"


def _s002_one(st, m: dict) -> dict:
    """One measurement's statistics: {cid: [(name, value, boundary, side, rule)]}."""
    f = m["figure1"]
    idx = [f["pos2"].index(p) for p in NEAR]
    weak = [h for h in m["mechanism"]["heads"] if h["self_attention"] < SELF_ATTENTION]
    return {
        "S2.2": [("mean P(C) - P(B), second [A] at 8-10", float(np.mean([f["p_c"][q] - f["p_b"][q] for q in idx])),
                  0.0, "above", "directional")],
        "S2.3": [("slope of attention(C) - attention(B) per position",
                  float(np.polyfit(f["pos2"], np.subtract(f["att_c"], f["att_b"]), 1)[0]), 0.0, "above",
                  "directional")],
        "S2.4": [(f"recency slope, {st.short} tokens", m["slope_short"], 0.0, "above", "directional"),
                 (f"recency slope, {st.long} tokens", m["slope_long"], 0.0, "above", "directional")],
        "S2.5": [(f"recency slope, {st.long} tokens, no positions, one layer-0 head kept (mean over the kept head)",
                  float(np.mean(m["ablated_slopes"])), 0.0, "above", "directional")],
        "S2.6": [("log-log slope of E|z_i|^2, heads with P_ii < 0.5 (mean over heads)",
                  float(np.mean([h["measured_slope"] for h in weak])) if weak else math.nan, 0.0, "below",
                  "directional")],
        "S2.7": [("law slope - measured slope (mean over those heads)",
                  float(np.mean([h["law_slope"] - h["measured_slope"] for h in weak])) if weak else math.nan,
                  0.0, "within", "equivalence")],
    }


def _gate002(st, r) -> bool:
    from lnrecency.experiments.decoders.tasks import target_entropy

    return (r["log"][-1]["heldout_loss"] <= target_entropy("repeats", st.n_train, st.vocab) - 1.0
            and r["induction_score"] >= st.threshold)


def seed002_parts(st, runs: list) -> dict:
    """{cid: [(row setting, [Part])]} for S2.2-S2.7 (S2.1 is per seed: :func:`s21_rows`)."""
    from lnrecency.experiments.decoders.tasks import target_entropy

    per = [_s002_one(st, r) for r in runs]
    stages = {name: [_s002_one(st, r["stages"][name]) for r in runs] for name in ("quarter", "half")}
    ok = [_gate002(st, r) for r in runs]
    learned = sum(ok)
    losses = ", ".join(f"{r['log'][-1]['heldout_loss']:.2f}" for r in runs)
    scores = ", ".join(f"{r['induction_score']:.2f}" for r in runs)
    gate = (f"held-out loss <= ln({st.vocab - 2}) - 1 = {target_entropy('repeats', st.n_train, st.vocab) - 1:.3f} "
            f"and an induction head (score >= {st.threshold}); measured losses {losses}, scores {scores}")
    out = {}
    for cid in S2:
        if cid == "S2.1":
            continue
        rows = []
        for q, (name, _, boundary, side, rule) in enumerate(per[0][cid]):
            values = [p[cid][q][1] for p in per]
            kw = dict(side=side, boundary=boundary, rule=rule, margin=LAW_MARGIN if rule == "equivalence" else None)
            traj = {"final": (float(np.mean([r["log"][-1]["step"] for r in runs])), float(np.nanmean(values)))}
            for sname, ps in stages.items():
                traj[sname] = (float(np.mean([r["stages"][sname]["step"] for r in runs])),
                               float(np.nanmean([p[cid][q][1] for p in ps])))
            rows.append(({"case": name}, [Part(name, name, SeedTest(keep_learned(values, ok), **kw), None,
                                               learned=learned,
                                               seeds=len(runs), gate=gate, trajectory=traj, labels=LABELS)]))
        out[cid] = rows
    return out


def s21_rows(st, runs: list, quick: bool):
    from lnrecency.inference.verdicts import ClaimResult

    scores = tuple(float(r["induction_score"]) for r in runs)
    verdict = LABELS[0] if min(scores) >= st.threshold else LABELS[1]  # "in every seed": one seed without decides
    traj = {name: (float(np.mean([r["stages"][name]["step"] for r in runs])),
                   float(np.mean([r["stages"][name]["induction_score"] for r in runs]))) for name in ("quarter",
                                                                                                      "half")}
    traj["final"] = (float(np.mean([r["log"][-1]["step"] for r in runs])), float(np.mean(scores)))
    ev = PerSeedEvidence(statistic="largest layer-1 induction score", values=scores, threshold=st.threshold,
                         training_seeds=len(runs), learned=sum(_gate002(st, r) for r in runs),
                         trajectory={k: {"step": v[0], "mean": v[1]} for k, v in traj.items()})
    below = [str(r["seed"]) for r in runs if r["induction_score"] < st.threshold]
    text = (f"largest layer-1 induction score per seed {', '.join(f'{x:.3g}' for x in scores)} against the "
            f"threshold {st.threshold} (a per-seed property, read seed by seed; no test over seeds"
            + (f"; no induction head in seed {', '.join(below)}, which the other statements leave out"
               if below else "") + "); trajectory "
            + ", ".join(f"{k} (step {v[0]:.0f}) {v[1]:.3g}" for k, v in traj.items()))
    if quick:
        verdict, text = "inconclusive", QUICK + ". " + text
    return [ClaimResult("S2.1", result_source("S2.1", STATEMENTS["S2.1"]),
                        STATEMENTS["S2.1"], {**_base2(st), "case": ev.statistic}, verdict, ev,
                        text + ".")]


def _base3(st) -> dict:
    return {"scale": st.scale() + f", {_tokens_seen(st)} training tokens",
            "breaks": "W_Q, W_K, W_V, W_O, embeddings and positions learned (theory: W = I); trained on argmax "
                      "retrieval and dictionary lookup", "seed_setting": SEED003_SETTING,
            "training_seeds": len(st.seeds)}


def _s003_gate(st, rs: list) -> int:
    return sum(r["accuracy"][0] >= LEARNED for r in rs)


def _kept3(rs: list, fn) -> tuple:
    """fn(run) over the runs that learned the task at the training length (trained_rules.keep_learned)."""
    return keep_learned([fn(r) for r in rs], [r["accuracy"][0] >= LEARNED for r in rs])


def seed003_parts(st, runs: list) -> dict:
    """{cid: [(row setting, [Part])]} for S3.1-S3.3 per task (and architecture)."""
    from lnrecency.experiments.decoders.tasks import constant_answer_accuracy

    top = max(st.test_factors)
    out = {"S3.1": [], "S3.2": [], "S3.3": []}

    def traj_of(fn, groups):
        res = {}
        for stage in ("quarter", "half", "final"):
            vals, steps = [], []
            for rs in zip(*groups):
                recs = [r if stage == "final" else r["stages"][stage] for r in rs]
                vals.append(fn(*recs))
                steps.append(rs[0]["log"][-1]["step"] if stage == "final" else rs[0]["stages"][stage]["step"])
            res[stage] = (float(np.mean(steps)), float(np.mean(vals)))
        return res

    def gate_text(task, groups):
        accs = ", ".join(f"{r['accuracy'][0]:.2f}" for rs in groups for r in rs)
        return f"a model learned {task} when its accuracy at the training length is >= {LEARNED}; measured {accs}"

    for task in st.tasks:
        base = constant_answer_accuracy(task, st.length(task, top), st.vocab)
        pre = select(runs, task, "pre")
        for arch in st.archs:
            rs = select(runs, task, arch)
            name = f"{task}/{arch}-LN: log-log slope of the layer-1 attention-output variance against length"
            out["S3.1"].append(({"case": name}, [Part(
                f"{task}/{arch}", name, SeedTest(_kept3(rs, lambda r: r["variance_slope"]), side="below"),
                learned=_s003_gate(st, rs), seeds=len(rs), gate=gate_text(task, [rs]),
                trajectory=traj_of(lambda r: r["variance_slope"], [rs]), labels=LABELS)]))
        for arch in [a for a in st.archs if a != "pre"]:
            other = select(runs, task, arch)
            learned = min(_s003_gate(st, pre), _s003_gate(st, other))
            name = (f"{task}: |log shift| pre-LN minus {arch}-LN at {top}x (layer-2 input variance vs training "
                    f"length)")
            out["S3.2"].append(({"case": name}, [Part(
                f"{task}/{arch}", name, SeedTest(_kept3(pre, lambda r: r["shift"][-1]), side="above",
                                                 other=_kept3(other, lambda r: r["shift"][-1])),
                learned=learned, seeds=len(pre), gate=gate_text(task, [pre, other]),
                trajectory=traj_of(lambda a, b: a["shift"][-1] - b["shift"][-1], [pre, other]), labels=LABELS)]))
            name = (f"{task}: accuracy above the constant-answer baseline ({base:.3f}) at {top}x, {arch}-LN minus "
                    f"pre-LN (excess: {arch} {np.mean([r['accuracy'][-1] for r in other]) - base:+.3f}, pre "
                    f"{np.mean([r['accuracy'][-1] for r in pre]) - base:+.3f})")
            out["S3.3"].append(({"case": name}, [Part(
                f"{task}/{arch}", name, SeedTest(_kept3(other, lambda r: r["accuracy"][-1] - base), side="above",
                                                 other=_kept3(pre, lambda r: r["accuracy"][-1] - base)),
                learned=learned, seeds=len(pre), gate=gate_text(task, [pre, other]),
                trajectory=traj_of(lambda a, b: b["accuracy"][-1] - a["accuracy"][-1], [pre, other]),
                labels=LABELS)]))
    return out


def decided(experiment: str, st, runs: list, quick: bool) -> dict:
    parts = (seed002_parts if experiment == "seed002" else seed003_parts)(st, runs)
    flat = [p for rows in parts.values() for _, ps in rows for p in ps]
    decide_parts(flat, experiment_alpha(experiment, quick), quick=quick)
    return parts


def seed_claim_evaluator(experiment: str, cid: str):
    """The evaluator of ``cid`` on ``experiment``'s runs (S2.1 is read seed by seed: :func:`s21_rows`)."""
    def run(*, quick: bool = False, progress=None) -> list:
        st, runs, why = _experiment(experiment, quick, progress)
        if runs is None:
            return _not_run(cid, why)
        if cid == "S2.1":
            return s21_rows(st, runs, quick)
        base = _base2(st) if experiment == "seed002" else _base3(st)
        return claim_rows(cid, STATEMENTS[cid], base, decided(experiment, st, runs, quick)[cid],
                          quick=quick)
    return run


def available(experiment: str, quick: bool) -> bool:
    """Whether the experiment of this mode is cached (its verdicts then cost no training)."""
    from lnrecency.experiments.studies.thesis_config import torch_version

    return torch_version() is not None and is_cached(experiment, EXPERIMENTS[experiment].preset(quick))


def evaluate(*, quick: bool = False, progress=None) -> list:
    """S2.1-S2.7 and S3.1-S3.3 (each registered with its own evaluator below)."""
    return [r for cid in STATEMENTS for r in REGISTERED[cid].evaluate(quick=quick, progress=progress)]


SEED002_STEMS = ("seed002_figure1", "seed002_figure3", "seed002_figures4_6", "seed002_mechanism")


SEED003_STEMS = ("seed003_variance", "seed003_shift", "seed003_accuracy")




# one evaluator per statement: asking for S2.4 decides S2.4 only (the experiment's runs are cached)
for _cid in STATEMENTS:
    _seed = "seed002" if _cid in S2 else "seed003"
    claim(_cid, module=__name__, available=partial(available, _seed))(seed_claim_evaluator(_seed, _cid))
