"""What TM1 shows in the report and the notebooks: tables, figures and notebook cells (the claim:
:mod:`lnrecency.claims.trained.tm1_tm5_trained_decoders`)."""
from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from lnrecency.claims.trained.tm1_tm5_trained_decoders import available, seed_interval
from lnrecency.files.figure_record import ReportFigure, colour_bar
from lnrecency.files.table_record import Table
from lnrecency.report.views.outputs import FigureOutput, TableOutput, views
from lnrecency.report.views.shared import not_run_figure, verdict_note


def trained_table(data) -> Table:
    """TM1-TM5: per architecture, normalisation, stage and layer, the recency slope over training seeds on the
    training distribution (with its 95% t-interval), the random-token slope beside it, the sink and RP."""
    columns = ["arch", "norm", "stage", "layer", "step", "held-out loss", "slope (training dist.)",
               "95% interval", "slope (random tokens)", "BOS sink", "RP (training dist.)", "learned / seeds"]
    res = data.thesis()
    if res is None:  # no verdicts either: evaluating them would train (the report never trains)
        return Table("trained_phases", "Trained decoders (TM1-TM5): not run", "The thesis experiment is not in "
                     "the cache: run `lnrecency experiments thesis" + (" --quick" if data.settings.quick else "")
                     + "` (it trains and caches the models), then rebuild the report.", columns, [],
                     ["Verdicts TM1-TM5: not evaluated (the experiment is not cached)."])
    notes = verdict_note(data, "TM1", "TM2", "TM3", "TM4", "TM5")
    rows = []
    for arch in res.settings.archs:
        for norm in res.settings.norms:
            runs = res.select(arch, norm)
            learned = f"{sum(res.learned(r) for r in runs)} / {len(runs)}"
            for stage in ("init", "quarter", "half", "final", "matched"):
                step = float(np.mean([res.stage_step(r, stage) for r in runs]))
                if stage == "matched":
                    loss = float(np.mean([res.matched(r)["heldout_loss"] for r in runs]))
                else:
                    loss = float(np.mean([min(r["log"], key=lambda e: abs(e["step"] - res.stage_step(r, stage)))
                                          ["heldout_loss"] for r in runs]))
                for layer in range(1, res.n_layers(arch) + 1):
                    m, lo, hi = seed_interval(res.slopes(arch, norm, stage, layer))
                    rnd = float(np.mean(res.slopes(arch, norm, stage, layer, "random")))
                    sinks = [x for x in res.values(arch, norm, stage, layer, "sink")] if stage != "matched" else []
                    sink = float(np.mean(sinks)) if sinks and all(x is not None for x in sinks) else None
                    rp = float(np.mean(res.values(arch, norm, stage, layer, "rp")))
                    rows.append([arch, norm, stage, layer, step, loss, m, f"[{lo:.3g}, {hi:.3g}]", rnd, sink, rp,
                                 learned])
    st = res.settings
    caption = (f"NoPE decoders trained on the induction task (d = {st.d_model}, {st.n_heads} heads, vocabulary "
               f"{st.vocab}, n = {st.n}; trained until the held-out loss improved by less than "
               f"{100 * st.converge:g}% over the last 20% of steps, at least {st.min_steps}, at most {st.steps} "
               f"steps; seeds {list(st.seeds)}). Recency slope: the least-squares slope of the head-mean attention "
               f"logit against the key position, per row over the keys below the query (the BOS key excluded), "
               f"averaged over rows with at least 3 keys weighted by their number of keys; on each run's own "
               f"{st.probe_sequences} sequences of its training distribution ({st.trajectory_sequences} along the "
               f"trajectory), random-token slope beside it. 95% t-interval over training seeds. Stages: init, 1/4 "
               f"and 1/2 of each run's length, final, and matched (the largest final held-out loss of the "
               f"architecture, interpolated between the two evaluations that bracket it). BOS sink: mean attention "
               f"on the BOS key. Learned: final held-out loss <= {st.gate():.3f} (ln({st.vocab - 2}) - 1 nat).")
    return Table("trained_phases", "Trained decoders: recency per layer over training seeds (TM1-TM5)", caption,
                 columns, rows, notes)


TRAINED_STEMS = ("trained_logit_maps", "trained_phases", "trained_norm_profiles", "trained_trajectory")


_NORM_COLOURS = {"layernorm": "tab:blue", "rmsnorm": "tab:green", "none": "tab:red"}


def trained_figures(data) -> list[ReportFigure]:
    """TM1-TM5: the authors' diagonal-normalised logit maps per layer (seed 0, after training), the recency
    slope per layer with its t-interval over seeds, and the head outputs' norm profile beside the law."""

    res = data.thesis()
    titles = ("Trained decoders: the authors' diagonal-normalised logit maps",
              "Trained decoders: recency slope per layer on the training distribution, 95% t-interval over seeds",
              "Trained decoders: head-output norm against position, beside the law of an average",
              "Trained decoders: the layer-2 recency slope along training, training distribution and random tokens")
    if res is None:
        other = available(not data.settings.quick)
        return [not_run_figure(stem, t, data.settings.quick, other_cached=other) for stem, t in zip(TRAINED_STEMS,
                                                                                                    titles)]
    st = res.settings
    arch = max(st.archs, key=res.n_layers)
    L = res.n_layers(arch)
    fig = Figure(figsize=(3.3 * L, 2.9 * len(st.norms)))
    axes = np.atleast_2d(fig.subplots(len(st.norms), L, squeeze=False))
    for r_, norm in enumerate(st.norms):
        run = res.select(arch, norm)[0]
        for c_ in range(L):
            m = np.array(run["final"]["layers"][c_]["diag_normalised"], dtype=float)
            m[np.triu_indices(m.shape[0], k=1)] = np.nan
            m[:, 0] = np.nan  # the BOS key: out of every statistic (its share is the table's sink)
            ax = axes[r_, c_]
            k = m.shape[0]
            lo, hi = (np.nanpercentile(m, [2, 98]) if np.isfinite(m).any() else (0.0, 1.0))
            im = ax.imshow(m, cmap="magma", vmin=lo, vmax=hi if hi > lo else lo + 1e-12,
                           extent=(0.5, k + 0.5, k + 0.5, 0.5))
            colour_bar(ax, im)
            ax.set_title(f"{norm}, layer {c_ + 1}", fontsize=9)
            ax.set_xlabel("key position", fontsize=9)
            ax.set_ylabel("query position", fontsize=9)
    fig.suptitle(f"{titles[0]} ({arch}, seed {st.seeds[0]}, after training)", fontsize=10)
    fig.tight_layout()
    maps = ReportFigure(TRAINED_STEMS[0], titles[0],
                        f"Head-mean attention logits of the {arch} models (seed {st.seeds[0]}, after training) on "
                        f"{st.probe_sequences} sequences of the training distribution (positions from 1 = BOS; "
                        f"the BOS key "
                        f"column is left blank, as in every statistic), colour scale from the 2nd to the 98th "
                        f"percentile of the shown entries, each lower diagonal minus its own mean (the "
                        f"authors' normalize_lower_diagonals, concept/with_params.ipynb): rows are normalisations, "
                        f"columns layers; brighter towards the diagonal within a row = recency.", fig)
    fig = Figure(figsize=(4.2 * len(st.archs), 3.6))
    axes = np.atleast_1d(fig.subplots(1, len(st.archs)))
    for ax, a in zip(axes, st.archs):
        layers = np.arange(1, res.n_layers(a) + 1)
        for q, norm in enumerate(st.norms):
            for stage, marker, shift in (("init", "o", -0.15), ("matched", "s", 0.0), ("final", "D", 0.15)):
                iv = [seed_interval(res.slopes(a, norm, stage, lay)) for lay in layers]
                mean = np.array([v[0] for v in iv])
                err = np.array([[v[0] - v[1] for v in iv], [v[2] - v[0] for v in iv]])
                ax.errorbar(layers + shift + 0.04 * (q - 1), mean, yerr=err, fmt=marker, ms=4, capsize=2, lw=0.8,
                            color=_NORM_COLOURS[norm], mfc="none" if stage == "init" else _NORM_COLOURS[norm],
                            label=f"{norm} {stage}" if a == st.archs[0] else None)
        ax.axhline(0.0, color="grey", lw=0.8)
        ax.set_xticks(layers)
        ax.set_title(a, fontsize=9)
        ax.set_xlabel("layer")
        ax.set_ylabel("recency slope\n(logit per key position)")
    fig.legend(*axes[0].get_legend_handles_labels(), loc="lower center", ncol=3, fontsize=9, frameon=False)
    fig.suptitle(titles[1], fontsize=10)
    fig.tight_layout(rect=(0, 0.2, 1, 1))  # the key below the panels, over none of them
    phases = ReportFigure(TRAINED_STEMS[1], titles[1],
                          "Mean over training seeds of each layer's recency slope with its 95% t-interval, per "
                          "architecture and normalisation, at initialisation (open circles), at matched held-out "
                          "loss (squares) and after training (diamonds). Above 0: recency; below 0: earlier-token "
                          "bias.", fig)
    fig = Figure(figsize=(4.2 * len(st.norms), 4.2))
    axes = np.atleast_1d(fig.subplots(1, len(st.norms)))
    for ax, norm in zip(axes, st.norms):
        run = res.select(st.archs[0], norm)[0]
        for lay in run["final"]["layers"]:
            if lay["norm_profile"] is None:
                continue
            x = np.arange(1, len(lay["norm_profile"]) + 1)
            line, = ax.plot(x, lay["norm_profile"], "-", lw=1.4, label=f"layer {lay['layer']} measured")
            ax.plot(x, lay["norm_law"], ":", lw=1.4, color=line.get_color(), label=f"layer {lay['layer']} law")
        ax.set_yscale("log")
        ax.set_title(f"{st.archs[0]}, {norm}", fontsize=9)
        ax.set_xlabel("position i")
        ax.set_ylabel("E |o_i|^2 (head mean)")
        ax.legend(fontsize=9, ncol=2, loc="upper center", bbox_to_anchor=(0.5, -0.2))  # below: no curve hidden
    fig.suptitle(titles[2], fontsize=10)
    fig.tight_layout()
    norms = ReportFigure(TRAINED_STEMS[2], titles[2],
                         "Squared norm of the head outputs o_i = sum_k P_ik v_k (mean over heads and sequences, "
                         f"seed {st.seeds[0]}, after training) against position, beside the law of an average of "
                         "weakly correlated vectors s2 (rho + (1 - rho) E sum_k P_ik^2) with s2 and rho measured "
                         "from the same value vectors (seed 002's mechanism).", fig)
    return [maps, phases, norms, _trajectory_figure(res, titles[3])]


def _trajectory_figure(res, title: str) -> ReportFigure:
    """Per architecture, each run's layer-2 slope at every evaluation: training distribution (solid) and random
    tokens (dotted), one colour per normalisation; the learning gate's loss is reached where the marker is."""
    st = res.settings
    fig = Figure(figsize=(4.4 * len(st.archs), 3.8))
    axes = np.atleast_1d(fig.subplots(1, len(st.archs)))
    for ax, a in zip(axes, st.archs):
        for norm in st.norms:
            for q, r in enumerate(res.select(a, norm)):
                steps = [e["step"] for e in r["trajectory"]]
                for tokens, style in (("task", "-"), ("random", ":")):
                    ax.plot(steps, [e[tokens][1]["slope"] for e in r["trajectory"]], style, lw=0.9, alpha=0.8,
                            color=_NORM_COLOURS[norm],
                            label=(f"{norm}, "
                                   f"{'training distribution' if tokens == 'task' else 'neutral random control'}"
                                   if q == 0 and a == st.archs[0] else None))
                hit = next((e["step"] for e in r["trajectory"] if e["heldout_loss"] <= st.gate()), None)
                if hit is not None:
                    y = next(e["task"][1]["slope"] for e in r["trajectory"] if e["step"] == hit)
                    ax.plot([hit], [y], "o", ms=3, color=_NORM_COLOURS[norm])
        ax.axhline(0.0, color="grey", lw=0.8)
        ax.set_title(f"{a}, layer 2", fontsize=9)
        ax.set_xlabel("training step")
        ax.set_ylabel("recency slope\n(logit per key position)")
    fig.legend(*axes[0].get_legend_handles_labels(), loc="lower center", ncol=3, fontsize=9, frameon=False)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout(rect=(0, 0.15, 1, 1))  # the key below the panels, over none of their curves
    return ReportFigure(TRAINED_STEMS[3], title,
                        f"Every run's layer-2 recency slope at each held-out evaluation (every {st.eval_every} "
                        f"steps, {st.trajectory_sequences} sequences of its own probe seed): solid on the training "
                        f"distribution (BOS first, BOS key excluded), dotted on the neutral random control; dots: "
                        f"where the run "
                        f"first reached the learning gate (held-out loss <= {st.gate():.3f}). Runs stop at their "
                        f"own convergence step.", fig)


def _identity_probe_cell(data, display):
    # the decoder needs torch (the models extra), so the cell imports it itself
    from lnrecency.experiments.decoders.decoder import build
    from lnrecency.experiments.decoders.decoder_config import DecoderConfig
    from lnrecency.experiments.probes.probe import ProbeSettings
    from lnrecency.experiments.probes.probe_decoder import probe_decoder
    from lnrecency.model.config import ModelConfig

    identity = build(DecoderConfig.identity_of(ModelConfig(norm="layernorm"), d=64, layers=2, n=12), 0)
    pr = probe_decoder(identity, ProbeSettings(n=12, sequences=512))
    display([(lp.layer, lp.phase, round(lp.slope, 4), round(lp.slope_se, 4)) for lp in pr.layers])


def _small_training_cell(data, display):
    from lnrecency.experiments.decoders.decoder_config import DecoderConfig
    from lnrecency.experiments.decoders.train import TrainSettings, train
    from lnrecency.experiments.probes.probe import ProbeSettings
    from lnrecency.experiments.probes.probe_decoder import probe_decoder

    cfg = DecoderConfig(vocab=64, d_model=64, n_layers=2, n_heads=4, context=32)
    run = train(cfg, TrainSettings(steps=300, n=32, eval_every=100))
    pr = probe_decoder(run.model, ProbeSettings(n=32, sequences=128))
    print(run.log[-1])
    display([(lp.layer, lp.phase, round(lp.slope, 4), round(lp.slope_se, 4)) for lp in pr.layers])


views("TM1", module=__name__,
      tables=(TableOutput("trained_phases", "trained NoPE decoders: recency slope per layer with its t-interval over "
                                            "training seeds, on the training distribution with random tokens beside "
                                            "it, at init / 1/4 / 1/2 / end / matched loss",
                          trained_table),),
      figures=(FigureOutput("trained decoders: the authors' diagonal-normalised logit maps, the slope per layer with "
                            "CIs, norm profiles against the law, the slope along training", trained_figures,
                            TRAINED_STEMS),),
      notebook="08_trained_decoders",
      cells=("The parameter-free model is one configuration of the decoder (W = I, the theory's N): its probe "
             "reproduces the theory's layer-2 recency.", _identity_probe_cell,
             "A small NoPE decoder trained here (300 steps, a few seconds), probed the same way:", _small_training_cell,
             "Trained NoPE decoders (`lnrecency experiments thesis`; cached). Each row: an architecture, a "
             "normalisation, a stage, a layer; the recency slope's t-interval over training seeds on the training "
             "distribution, the random-token slope beside it, the BOS sink and RP.", trained_table,
             trained_figures))
