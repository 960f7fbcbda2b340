"""What S2.1-S3.3 show in the report and the notebooks: seed 002's and seed 003's tables and figures (the claims:
:mod:`lnrecency.claims.trained.s2_s3_seed_experiments`)."""
from __future__ import annotations

import matplotlib
import numpy as np
from matplotlib.figure import Figure

from lnrecency.claims.trained.s2_s3_seed_experiments import (
    S2,
    S3,
    SEED002_STEMS,
    SEED003_STEMS,
    available,
    decided,
    s21_rows,
)
from lnrecency.claims.trained_rules import (
    part_verdict,
)
from lnrecency.experiments.studies.seeds_config import select
from lnrecency.files.figure_record import ReportFigure, colour_bar
from lnrecency.files.table_record import Table
from lnrecency.inference.stats import t_interval
from lnrecency.report.views.outputs import FigureOutput, TableOutput, views
from lnrecency.report.views.shared import not_run_figure, verdict_note

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
        r21 = s21_rows(st, runs, quick)[0]
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
        ax.legend(fontsize=9)
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
    ax.legend(fontsize=9, ncol=2)
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
                from lnrecency.experiments.decoders.tasks import constant_answer_accuracy

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
            ax.legend(fontsize=9)
        extra = (" Dotted: sum_k P_ik^2 at the last position (the parameter-free identity's shape, scaled to the "
                 "first point)." if key == "variance" else
                 " Dashed: the accuracy of the best constant answer at each length (argmax: always the largest "
                 "value token, 1 - ((V-3)/(V-2))^m; lookup: 1 / the number of value tokens)." if key == "accuracy"
                 else "")
        out.append(ReportFigure(name, title, f"{st.scale()}; {st.test_sequences} test sequences per length; band: "
                                f"95% t-interval over training seeds.{extra}", fig))
    return out


views("S2.1", module=__name__,
      tables=(TableOutput("seed002", "seed 002 at small scale: each statistic over training seeds, with its verdict",
                          seed002_table),),
      figures=(FigureOutput("seed 002 at small scale: Figure 1 (P(B), P(C)), Figure 3 (attention to B, C), "
                            "Figures 4-6 (the induction head's average attention), the layer-0 norm mechanism",
                            seed002_figures, SEED002_STEMS),),
      notebook="09_seed_experiments",
      cells=("Seed 002 on a 2-layer attention-only decoder trained here (`lnrecency experiments seed002`; "
             "cached): each statement's statistic over training seeds.", seed002_table, seed002_figures))
views("S3.1", module=__name__,
      tables=(TableOutput("seed003", "seed 003 at small scale: variance, shift and accuracy per test length "
                                     "over training seeds, with verdicts", seed003_table),),
      figures=(FigureOutput("seed 003 at small scale: attention-output variance and sum_k P_ik^2 against "
                            "length, the hidden-state shift, accuracy", seed003_figures, SEED003_STEMS),),
      notebook="09_seed_experiments",
      cells=("Seed 003 on decoders with pre-LN, post-attention LN or both, trained here (`lnrecency "
             "experiments seed003`; cached).", seed003_table, seed003_figures))
