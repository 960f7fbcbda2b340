"""What TC1-TC5 show in the report and the notebooks: plan v3's interventions and the path decomposition of the layer-2
slope, per cell (the claims: :mod:`lnrecency.claims.trained.tc1_tc5_thesis_text_v3`)."""
from __future__ import annotations

from lnrecency.claims.trained.tc1_tc5_thesis_text_v3 import STATEMENTS, STUDY, cells_of
from lnrecency.files.figure_record import ReportFigure
from lnrecency.files.table_record import Table
from lnrecency.report.views.outputs import FigureOutput, TableOutput, views

COMMAND = "lnrecency experiments thesis-text-v3"
STEMS = ("thesis_text_v3_theory",)


def _pm(p, fmt: str = "+.4f") -> str:
    """A (mean, SE) over seeds as "mean +- SE", "n/a" when not measured."""
    return "n/a" if p is None or p[0] is None else (f"{p[0]:{fmt}}" if p[1] is None else
                                                    f"{p[0]:{fmt}} +- {p[1]:{fmt.lstrip('+')}}")


def v3_table(data) -> Table:
    """Per cell (BOS x normalisation): the layer-2 slope on the plan's windows, under each intervention, and its
    exact path decomposition (mean +- SE over the cell's learned seeds)."""
    columns = ["cell", "seeds", "layer-2 slope", "QK = c I", "BOS direction removed", "scale fixed", "own path",
               "BOS path", "other content", "BOS path: scale part", "BOS path: own-change part",
               "all paths: scale part", "all paths: own-change part", "interaction"]
    runs = STUDY.for_report(data)
    if runs is None:
        return Table("thesis_text_v3", "The thesis on text, plan v3 (TC1-TC5): not run",
                     f"Plan v3's probes are not cached: run `{COMMAND}` (about 35 min on 2 cores the first time, to "
                     f"keep plan v2's no-BOS weights), then rebuild the report.", columns, [],
                     ["Verdicts TC1-TC5: not evaluated (not cached)."])
    from lnrecency.experiments.studies.thesis_text_v2 import cached_v2
    from lnrecency.experiments.studies.thesis_text_v3 import plan_sha256, snapshot

    st = STUDY.settings_for(data.settings.quick)
    snap = snapshot(runs, cached_v2(st.v2), st)
    rows = []
    for cell, c in cells_of(snap["runs"]).items():
        learned = sum(r["learned"] for r in snap["runs"][cell])
        rows.append([cell, f"{learned} / {len(snap['runs'][cell])}",
                     *(_pm(c[k]) for k in ("slope", "qk_identity", "bos_direction", "scale_fixed", "own", "bos",
                                           "other", "bos scale", "bos numerator", "scale", "numerator",
                                           "interaction"))])
    caption = (f"Plan v2's attn2 models (NoPE, width 64, 3M tokens), {len(st.v2.seeds)} seeds per cell, each probed "
               f"on {st.windows} held-out windows of its own kind, the first key out; logit per key, mean +- SE over "
               f"learned seeds. Interventions at layer 2: QK = c I (c matching the intact logits' RMS per head), the "
               f"keys' component along layer 1's BOS value direction removed (after the normalisation's map), the "
               f"per-token scale fixed at its mean over tokens 2..n. Paths: each key's own embedding, the BOS path "
               f"(layer 1's weight on the first token times its value; without BOS, the first text token), the other "
               f"content, and the bias (its slope is 0: a constant key); they sum to the slope to float rounding. A "
               f"normalised path's logit u_ij / sigma_j splits within each row into the part of the per-token scale's "
               f"decay (the paper's mechanism), the part of the path's own change along the keys, and their "
               f"interaction. Plan v3 SHA-256 {plan_sha256()}.")
    notes = [f"Verdict {cid}: {r.verdict}." for cid in STATEMENTS for r in data.verdicts([cid])[cid]]
    return Table("thesis_text_v3", "The thesis on text, plan v3: which part of layer 2 carries its recency slope?",
                 caption, columns, rows, notes)


def v3_figures(data) -> list[ReportFigure]:
    """Per cell: the trained layer-2 slope (mean +- SE over learned seeds) and its BOS path beside the sink theory
    in the models' own setting (with the residual), parameter-free and with each model's measured read-out gain."""
    from lnrecency.report.views.shared import not_run_figure

    title = "Plan v3: layer-2 slope per cell, trained and the sink theory with the residual"
    runs = STUDY.for_report(data)
    if runs is None:
        return [not_run_figure(STEMS[0], title, data.settings.quick, experiment="thesis-text-v3")]
    import numpy as np
    from matplotlib.figure import Figure

    from lnrecency.experiments.studies.thesis_text_v2 import cached_v2
    from lnrecency.experiments.studies.thesis_text_v3 import snapshot

    st = STUDY.settings_for(data.settings.quick)
    snap = snapshot(runs, cached_v2(st.v2), st)
    cells, theory = cells_of(snap["runs"]), snap["theory"]
    fig = Figure(figsize=(11.0, 4.2))
    axes = fig.subplots(1, 2)
    for ax, arm in zip(axes, ("bos", "no bos")):  # each arm on its own scale: the slopes differ 20-fold
        names = [c for c in cells if c in theory and c.rsplit(" ", 1)[0] == arm]
        x = np.arange(len(names))
        series = (("trained", [cells[c]["slope"][0] for c in names], [cells[c]["slope"][1] or 0 for c in names]),
                  ("trained, BOS path", [cells[c]["bos"][0] for c in names],
                   [cells[c]["bos"][1] or 0 for c in names]),
                  ("theory with the read-out", [theory[c]["predicted"] for c in names], None),
                  ("theory, parameter-free", [theory[c]["parameter_free"] for c in names], None))
        for k, (label, y, err) in enumerate(series):
            ax.bar(x + (k - 1.5) * 0.2, y, 0.2, yerr=err, capsize=2, label=label)
        ax.axhline(0.0, color="grey", lw=0.6)
        ax.set_xticks(x, labels=names, fontsize=9)
        ax.set_ylabel("layer-2 slope (logit per key)", fontsize=9)
        ax.set_title("with BOS first" if arm == "bos" else "without BOS", fontsize=9)
    axes[0].legend(fontsize=9)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    caption = ("Each cell's layer-2 recency slope on the plan's held-out windows (mean over learned seeds, error bar "
               "one SE) and the part its BOS path carries, beside the sink theory in the models' own setting: the "
               "limit with the residual, alpha = 0, n = 64, the bonus b fitted to the cell's layer-1 first-key share "
               "(plan v2), parameter-free and with a read-out of the first token at the gain measured from each "
               "model's logit level (never from its slope). With BOS the read-out gives most of the slope; without "
               "BOS the theory predicts almost nothing (docs/thesis-text-v3.md).")
    return [ReportFigure(STEMS[0], title, caption, fig)]


views("TC1", module=__name__,
      tables=(TableOutput("thesis_text_v3", "NoPE language models: layer 2's interventions and the path decomposition "
                                            "of its slope (plan v3)", v3_table),),
      figures=(FigureOutput("Plan v3: layer-2 slope per cell, trained and the sink theory with the residual",
                            v3_figures, STEMS),))
