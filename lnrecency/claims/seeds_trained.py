"""S2.1-S2.7 and S3.1-S3.3: the statements of seeds 002 and 003 about trained models, checked on small models
trained here (:mod:`lnrecency.models.seed002`, :mod:`lnrecency.models.seed003`).

A seed's statements are about someone else's model (seed 002: TransformerLens' attn-only-2l; seed 003: the
authors' models), so a row reads **reproduced** or **not reproduced in this setting**, never confirmed or
refuted, with our setting (model, data, tokens seen) and the seed's beside it. Every part is one statistic
per training seed, decided by the rules of :mod:`lnrecency.claims.trained_rules` (learning gate, directional
or equivalence tests, Holm's procedure within this experiment's share of the one family-wise rate); S2.1, a
per-seed property (an induction head forms in every seed), is read seed by seed. The operational
definitions (which positions are "near", the recency slope, the margin of "the law explains it") are our
formulation of the seeds' prose; each is stated with its verdict.
"""
from __future__ import annotations

import math

import matplotlib
import numpy as np
from matplotlib.figure import Figure

from lnrecency.claims._views import not_run_figure, verdict_note
from lnrecency.claims.declare import REGISTERED, FigureOutput, TableOutput, claim
from lnrecency.claims.trained_rules import (QUICK, Part, claim_rows, decide_parts, experiment_alpha, keep_learned,
                                            part_verdict)
from lnrecency.evidence import Evidence, record
from lnrecency.figure import ReportFigure, colour_bar
from lnrecency.models.seeds_config import EXPERIMENTS, is_cached, select
from lnrecency.stats import SeedTest, t_interval
from lnrecency.tables import Table

SOURCE = "trained models, our formulation"
NEAR = (8, 9, 10)  # seed 002: "within 4 tokens of the current token (positions 8 and later)"
FAR = (4, 5, 6, 7)
SELF_ATTENTION = 0.5  # a head "attends strongly to itself": mean P_ii above this
#: "the law explains the shrinkage": its log-log slope within this margin of the measured one (a power of the
#: position that differs by less than 0.1)
LAW_MARGIN = 0.1
#: seed 003: a task counts as learned when every model's accuracy at the training length reaches this
LEARNED = 0.5
LABELS = ("reproduced", "not reproduced in this setting")
SEED002_SETTING = ("TransformerLens attn-only-2l: 2 attention-only layers, width 512, 8 heads of 64, vocabulary "
                   "48262, learned positions added to the stream, LayerNorm; trained on 22B tokens of C4 and code")
SEED003_SETTING = ("Li, Boduljak and Zhou (arXiv 2504.02827): Transformers trained on argmax retrieval and "
                   "dictionary lookup, tested beyond the training length (sizes not stated in the seed's text); "
                   "variance decay also reported in frontier models")

S2 = {
    "S2.1": "Seed 002 (prerequisite): training forms an induction head in layer 1 in every training seed (the "
            "largest induction score among layer-1 heads reaches the stated threshold in each seed; not "
            "reproduced when some seed's does not: the scores are read seed by seed).",
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
            f"measured one within {LAW_MARGIN}: equivalence by two one-sided tests).",
}
S3 = {
    "S3.1": "Seed 003: the variance of the attention output (per coordinate) decays with sequence length in "
            "trained decoders (log-log slope against the test length below 0).",
    "S3.2": "Seed 003: a LayerNorm right after attention reduces the shift of the hidden-state distribution at "
            "lengths beyond training (the next layer's input variance moves less from its training-length "
            "value with post-LN, or with both, than with pre-LN only).",
    "S3.3": "Seed 003: a LayerNorm right after attention improves length extrapolation (accuracy above the "
            "constant-answer baseline at 8x the training length, post-LN (or both) minus pre-LN, above 0; "
            f"decided on the models that learned the task at the training length, accuracy >= {LEARNED}, when at "
            f"least 3 per placement did).",
}
STATEMENTS = {**S2, **S3}


@record
class NotRun(Evidence):
    reason: str


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
    from lnrecency.models.tasks import target_entropy

    return (r["log"][-1]["heldout_loss"] <= target_entropy("repeats", st.n_train, st.vocab) - 1.0
            and r["induction_score"] >= st.threshold)


def seed002_parts(st, runs: list) -> dict:
    """{cid: [(row setting, [Part])]} for S2.2-S2.7 (S2.1 is per seed: :func:`_s21`)."""
    from lnrecency.models.tasks import target_entropy

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


def _s21(st, runs: list, quick: bool):
    from lnrecency.verdicts import ClaimResult

    scores = tuple(float(r["induction_score"]) for r in runs)
    verdict = LABELS[0] if min(scores) >= st.threshold else LABELS[1]  # "in every seed": one seed without decides
    traj = {name: (float(np.mean([r["stages"][name]["step"] for r in runs])),
                   float(np.mean([r["stages"][name]["induction_score"] for r in runs]))) for name in ("quarter", "half")}
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
    return [ClaimResult("S2.1", SOURCE, STATEMENTS["S2.1"], {**_base2(st), "case": ev.statistic}, verdict, ev,
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
    from lnrecency.models.tasks import constant_answer_accuracy

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


def _seed_claim(experiment: str, cid: str):
    """The evaluator of ``cid`` on ``experiment``'s runs (S2.1 is read seed by seed: :func:`_s21`)."""
    def run(*, quick: bool = False, progress=None) -> list:
        st, runs, why = _experiment(experiment, quick, progress)
        if runs is None:
            return _not_run(cid, why)
        if cid == "S2.1":
            return _s21(st, runs, quick)
        base = _base2(st) if experiment == "seed002" else _base3(st)
        return claim_rows(cid, SOURCE, STATEMENTS[cid], base, decided(experiment, st, runs, quick)[cid],
                          quick=quick)
    return run


def available(experiment: str, quick: bool) -> bool:
    """Whether the experiment of this mode is cached (its verdicts then cost no training)."""
    from lnrecency.models.thesis_config import torch_version

    return torch_version() is not None and is_cached(experiment, EXPERIMENTS[experiment].preset(quick))


def evaluate(*, quick: bool = False, progress=None) -> list:
    """S2.1-S2.7 and S3.1-S3.3 (each registered with its own evaluator below)."""
    return [r for cid in STATEMENTS for r in REGISTERED[cid].evaluate(quick=quick, progress=progress)]


__all__ = ["STATEMENTS", "evaluate", "available", "seed002_parts", "seed003_parts", "decided", "S2", "S3",
           "LABELS"]


# ---- the claim's report tables, figures and notebook cells ----------------------------------------

def _seed_statistics_table(data, experiment: str, ids: tuple, title: str) -> Table:
    """One row per (statement, statistic): per-seed values, the interval over seeds, the rule, the verdict;
    computed from the same cached runs as the verdicts (nothing is trained or sampled here)."""
    columns = ["id", "statistic", "per seed", "mean", "95% interval", "rule", "learned / seeds", "trajectory 1/4, "
               "1/2, end", "verdict"]
    cached = data.seed_runs(experiment)
    if cached is None:  # no verdicts either: evaluating them would train (the report never trains)
        cmd = f"lnrecency experiments {experiment}" + (" --quick" if data.settings.quick else "")
        return Table(experiment, f"{title}: not run", f"The experiment is not in the cache: run `{cmd}` (it trains "
                     "and caches the models), then rebuild the report.", columns, [],
                     [f"Verdicts {', '.join(ids)}: not evaluated (the experiment is not cached)."])
    notes = verdict_note(data, *ids)
    st, runs = cached
    quick = data.settings.quick
    parts = decided(experiment, st, runs, quick)
    rows = []
    if experiment == "seed002":
        r21 = _s21(st, runs, quick)[0]
        ev = r21.evidence
        rows.append(["S2.1", ev.statistic, ", ".join(f"{v:.3g}" for v in ev.values), float(np.mean(ev.values)),
                     f"[{min(ev.values):.3g}, {max(ev.values):.3g}] (range)", f"each seed >= {ev.threshold}",
                     f"{ev.learned} / {ev.training_seeds}",
                     ", ".join(f"{ev.trajectory[k]['mean']:.3g}" for k in ("quarter", "half", "final")), r21.verdict])
    for cid in ids:
        for _, ps in parts.get(cid, []):
            for p in ps:
                t = p.test
                lo, hi = t.interval()
                rule = (f"within +-{t.margin:g} of {t.boundary:g}" if t.rule == "equivalence"
                        else f"{t.side} {t.boundary:g}")
                values = t.values if t.other is None else tuple(a - b for a, b in zip(t.values, t.other))
                verdict = p.status if p.status else part_verdict(p)
                rows.append([cid, p.statistic, ", ".join(f"{v:.3g}" for v in values), t.mean,
                             f"[{lo:.3g}, {hi:.3g}]", rule, f"{p.learned} / {p.seeds}",
                             ", ".join(f"{p.trajectory[k][1]:.3g}" for k in ("quarter", "half", "final")), verdict])
    caption = (f"{st.scale()}. Each statistic is computed per training seed; its 95% t-interval (Welch's for a "
               f"difference) is over seeds; verdicts by the rules of lnrecency.claims.trained_rules (learning "
               f"gate, one-sided or equivalence tests, Holm within this experiment's share of the family-wise "
               f"rate 0.05). Trajectory: the mean over seeds at 1/4, 1/2 and the end of training.")
    return Table(experiment, title, caption, columns, rows, notes)


def seed002_table(data) -> Table:
    return _seed_statistics_table(data, "seed002", tuple(S2), "Seed 002 at small scale (S2.1-S2.7)")


def seed003_table(data) -> Table:
    return _seed_statistics_table(data, "seed003", tuple(S3), "Seed 003 at small scale (S3.1-S3.3)")


SEED002_STEMS = ("seed002_figure1", "seed002_figure3", "seed002_figures4_6", "seed002_mechanism")


SEED003_STEMS = ("seed003_variance", "seed003_shift", "seed003_accuracy")


def _band(ax, x, per_seed, colour: str, label: str) -> None:
    """Mean over training seeds with its 95% t-interval as a band, and each seed as a thin line."""

    arr = np.asarray(per_seed, dtype=float)  # (seeds, len(x))
    ivs = [t_interval(arr[:, q]) for q in range(arr.shape[1])]
    ax.plot(x, [m for m, _, _ in ivs], "o-", color=colour, label=label + f" (mean of {len(arr)} seeds)")
    ax.fill_between(x, [lo for _, lo, _ in ivs], [hi for _, _, hi in ivs], color=colour, alpha=0.2, lw=0)
    for row in arr:
        ax.plot(x, row, "-", color=colour, lw=0.6, alpha=0.5)


def _attention_map(fig, ax, att, title: str) -> None:
    att = np.asarray(att)
    shown = np.where(np.tril(np.ones_like(att, dtype=bool)), att, np.nan)
    im = ax.imshow(shown, cmap="viridis", interpolation="nearest")
    ax.set_title(title, fontsize=9)
    ax.set_xlabel("key position")
    ax.set_ylabel("query position")
    colour_bar(ax, im, label="attention weight")


def seed002_figures(data) -> list[ReportFigure]:
    """Seed 002's Figures 1, 3, 4-6 in its style (curves with CI bands over training seeds, attention heatmaps
    with colour bars) and the layer-0 norm mechanism beside the law for an average of uncorrelated vectors."""
    cached = data.seed_runs("seed002")
    titles = ("Seed 002, Figure 1: P([B]) and P([C]) against the second [A]'s position",
              "Seed 002, Figure 3: the induction head's attention to [B] and [C]",
              "Seed 002, Figures 4-6: the induction head's average attention on random sequences",
              "Seed 002, mechanism: layer-0 head output norm against position, beside the law")
    if cached is None:
        other = available("seed002", not data.settings.quick)
        return [not_run_figure(n, t, data.settings.quick, "seed002", other) for n, t in zip(SEED002_STEMS, titles)]
    st, runs = cached
    pos = runs[0]["figure1"]["pos2"]
    out = []
    for name, title, keys, ylabel in (
            (SEED002_STEMS[0], titles[0], (("p_b", "P([B])", "tab:blue"), ("p_c", "P([C])", "tab:orange")),
             "probability of the next token"),
            (SEED002_STEMS[1], titles[1], (("att_b", "attention to [B]", "tab:blue"),
                                            ("att_c", "attention to [C]", "tab:orange")), "attention weight")):
        fig = Figure(figsize=(6.4, 4.0))
        ax = fig.subplots()
        for key, label, colour in keys:
            _band(ax, pos, [r["figure1"][key] for r in runs], colour, label)
        ax.set_xlabel("position of the second [A] (the last [A] is at 12)")
        ax.set_ylabel(ylabel)
        ax.legend(fontsize=8)
        heads = ", ".join(f"L1H{r['head']} (score {r['induction_score']:.2f})" for r in runs)
        out.append(ReportFigure(name, title, f"{st.scale()}. Sequences <BOS> R [A][B] .. [A][C] .. [A] of 13 "
                                f"tokens, {st.samples} random sequences per position and seed; band: 95% t-interval "
                                f"over training seeds, thin lines: each seed. Induction heads: {heads}.", fig))
    r0 = runs[0]
    fig = Figure(figsize=(15.0, 4.6), layout="constrained")
    axes = fig.subplots(1, 3)
    _attention_map(fig, axes[0], r0["attention_short"], f"L1H{r0['head']}, {st.short} random tokens")
    _attention_map(fig, axes[1], r0["attention_long"], f"L1H{r0['head']}, {st.long} random tokens")
    _attention_map(fig, axes[2], r0["ablated_map"], f"{st.long} tokens, no positions, only L0H{r0['ablated_kept']}")
    slopes = "; ".join(f"seed {r['seed']}: {r['slope_short']:.2g} / {r['slope_long']:.2g} / "
                       f"{np.mean(r['ablated_slopes']):.2g}" for r in runs)
    out.append(ReportFigure(SEED002_STEMS[2], titles[2], f"Training seed {r0['seed']}: the induction head's attention "
                            f"averaged over {st.random_sequences} random sequences (BOS at position 0). Recency slopes "
                            f"(short / long / no positions with one layer-0 head kept, mean over the kept head): "
                            f"{slopes}.", fig, tight=False))
    fig = Figure(figsize=(6.4, 4.4))
    ax = fig.subplots()
    mech = r0["mechanism"]
    x = np.arange(1, mech["n"] + 1)
    colours = matplotlib.colormaps["tab10"]
    for h in mech["heads"]:
        c = colours(h["head"] % 10)
        ax.loglog(x, h["measured"], "-", color=c, label=f"L0H{h['head']} (P_ii {h['self_attention']:.2f})")
        ax.loglog(x, h["law"], "--", color=c, lw=0.8)
    ax.set_xlabel("number of tokens averaged (position + 1)")
    ax.set_ylabel("E |z_i|^2 (solid: measured; dashed: law)")
    ax.legend(fontsize=7, ncol=2)
    out.append(ReportFigure(SEED002_STEMS[3], titles[3], f"Training seed {r0['seed']}, {st.random_sequences} random "
                            f"sequences of {mech['n']} tokens: each layer-0 head's output norm (before W_O) and the "
                            f"law for an average of uncorrelated vectors, sum_k P_ik^2 |v_k|^2, from the measured "
                            f"weights and values.", fig))
    return out


def seed003_figures(data) -> list[ReportFigure]:
    """Seed 003: attention-output variance (and sum_k P_ik^2) against the test length, the hidden-state shift,
    accuracy; one panel per task, one colour per LayerNorm placement, CI bands over training seeds."""
    cached = data.seed_runs("seed003")
    titles = ("Seed 003: attention-output variance against the test length",
              "Seed 003: the shift of the hidden state entering layer 2",
              "Seed 003: accuracy against the test length")
    if cached is None:
        other = available("seed003", not data.settings.quick)
        return [not_run_figure(n, t, data.settings.quick, "seed003", other) for n, t in zip(SEED003_STEMS, titles)]
    st, runs = cached
    colours = {"pre": "tab:red", "post": "tab:blue", "both": "tab:green"}
    out = []
    for name, title, key, ylabel, logy in (
            (SEED003_STEMS[0], titles[0], "variance", "layer-1 attention-output variance (per coordinate)", True),
            (SEED003_STEMS[1], titles[1], "shift", "|log(variance / variance at the training length)|", False),
            (SEED003_STEMS[2], titles[2], "accuracy", "accuracy", False)):
        fig = Figure(figsize=(6.0 * len(st.tasks), 4.0))
        axes = np.atleast_1d(fig.subplots(1, len(st.tasks)))
        for ax, task in zip(axes, st.tasks):
            for arch in st.archs:
                rs = select(runs, task, arch)
                vals = [[v[0] for v in r[key]] if key == "variance" else r[key] for r in rs]
                _band(ax, rs[0]["lengths"], vals, colours[arch], f"{arch}-LN")
                if key == "variance":  # the parameter-free law's shape, scaled to the first point
                    p2 = np.mean([[p[0] for p in r["sum_p2"]] for r in rs], axis=0)
                    ax.plot(rs[0]["lengths"], p2 / p2[0] * np.mean(vals, axis=0)[0], ":", color=colours[arch])
            if key == "accuracy":  # the best constant answer at each length (argmax: always the largest token)
                from lnrecency.models.tasks import constant_answer_accuracy

                lengths = select(runs, task, st.archs[0])[0]["lengths"]
                ax.plot(lengths, [constant_answer_accuracy(task, n, st.vocab) for n in lengths], "--", color="black",
                        lw=1.0, label="constant-answer baseline")
            ax.axvline(st.train_length, color="grey", lw=0.8)
            ax.set_xscale("log", base=2)
            if logy:
                ax.set_yscale("log")
            ax.set_title(task, fontsize=9)
            ax.set_xlabel("test length (grey: training length)")
            ax.set_ylabel(ylabel)
            ax.legend(fontsize=7)
        extra = (" Dotted: sum_k P_ik^2 at the last position (the parameter-free identity's shape, scaled to the "
                 "first point)." if key == "variance" else
                 " Dashed: the accuracy of the best constant answer at each length (argmax: always the largest "
                 "value token, 1 - ((V-3)/(V-2))^m; lookup: 1 / the number of value tokens)." if key == "accuracy"
                 else "")
        out.append(ReportFigure(name, title, f"{st.scale()}; {st.test_sequences} test sequences per length; band: "
                                f"95% t-interval over training seeds.{extra}", fig))
    return out


_DESCRIPTIONS = {
    "S2.1": "seed 002: an induction head forms (prerequisite)",
    "S2.2": "seed 002, Figure 1: [C] beats [B] when the second [A] is near the end",
    "S2.3": "seed 002, Figure 3: attention to [C] grows as the second [A] nears the end",
    "S2.4": "seed 002, Figures 4-5: the induction head's recency on random sequences",
    "S2.5": "seed 002, Figure 6: recency without positions, 7 of 8 layer-0 heads ablated",
    "S2.6": "seed 002, mechanism: layer-0 head outputs shrink with position",
    "S2.7": "seed 002, mechanism: the law for an average of uncorrelated vectors",
    "S3.1": "seed 003: attention-output variance decays with length",
    "S3.2": "seed 003: post-attention LN reduces the hidden-state shift",
    "S3.3": "seed 003: post-attention LN improves length extrapolation",
}
_OUTPUTS = {
    "S2.1": dict(tables=(TableOutput("seed002", "seed 002 at small scale: each statistic over training seeds, with its "
                                                "verdict", seed002_table),),
                 figures=(FigureOutput("seed 002 at small scale: Figure 1 (P(B), P(C)), Figure 3 (attention to B, C), "
                                       "Figures 4-6 (the induction head's average attention), the layer-0 norm "
                                       "mechanism", seed002_figures, SEED002_STEMS),),
                 notebook="09_seed_experiments",
                 cells=("Seed 002 on a 2-layer attention-only decoder trained here (`lnrecency experiments seed002`; "
                        "cached): each statement's statistic over training seeds.", seed002_table,
                        seed002_figures)),
    "S3.1": dict(tables=(TableOutput("seed003", "seed 003 at small scale: variance, shift and accuracy per test length "
                                                "over training seeds, with verdicts", seed003_table),),
                 figures=(FigureOutput("seed 003 at small scale: attention-output variance and sum_k P_ik^2 against "
                                       "length, the hidden-state shift, accuracy", seed003_figures, SEED003_STEMS),),
                 notebook="09_seed_experiments",
                 cells=("Seed 003 on decoders with pre-LN, post-attention LN or both, trained here (`lnrecency "
                        "experiments seed003`; cached).", seed003_table, seed003_figures)),
}
# one evaluator per statement: asking for S2.4 decides S2.4 only (the experiment's runs are cached)
for _cid in STATEMENTS:
    claim(_cid, _DESCRIPTIONS[_cid], training=True, **_OUTPUTS.get(_cid, {}))(
        _seed_claim("seed002" if _cid in S2 else "seed003", _cid))
