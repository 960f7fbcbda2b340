"""What W2 shows in the report and the notebooks: tables, figures and notebook cells (the claim:
:mod:`lnrecency.claims.trained.w2_w4_wu_icl`)."""
from __future__ import annotations

from lnrecency.claims.trained.w2_w4_wu_icl import STUDY
from lnrecency.files.figure_record import ReportFigure
from lnrecency.files.table_record import Table
from lnrecency.report.views.outputs import FigureOutput, TableOutput, views

COMMAND = "lnrecency experiments wu-icl"


STEMS = ("wu_icl_gaps",)


def wu_table(data) -> Table:
    """Per cell (arm x normalisation): learned seeds, in-context accuracy, the three gaps beside Wu et al.'s, the
    gaps with the per-token scale fixed, and at the last layer the query row's score slope over item keys and the
    rollout's mass on the first and the last item (mean +- one SE over learned seeds)."""
    columns = ["arm", "norm", "seeds learned", "in-context accuracy", "first-middle", "first-last", "middle-last",
               "Wu et al. (none)", "first-last, scale fixed", "last-layer score slope", "rollout first / last item"]
    runs = STUDY.for_report(data)
    if runs is None:
        return Table("wu_icl", "Wu et al.'s experiment with normalisation inserted (W2-W4): not run",
                     f"The runs are not cached: run `{COMMAND}` (about 30 min on 2 cores), then rebuild the report.",
                     columns, [], ["Verdicts W2-W4: not evaluated (not cached)."])
    from lnrecency.experiments.studies.wu_icl import GATE, PUBLISHED, plan_sha256, summary

    st = STUDY.settings_for(data.settings.quick)

    def pair(p, fmt="+.3f"):
        return "n/a" if p is None or p[0] is None else f"{p[0]:{fmt}} +- {p[1]:{fmt.lstrip('+')}}"
    rows = []
    for c in summary(runs, st).values():
        g = c["gaps"]
        rows.append([c["arm"], c["norm"], f"{len(c['seeds'])} / {len(c['seeds']) + len(c['not_learned'])}",
                     pair(c["plain"], ".3f"), pair(g["first-middle"]), pair(g["first-last"]), pair(g["middle-last"]),
                     " / ".join(f"{v:+.3f}" for v in PUBLISHED[c["arm"]]) if c["norm"] == "none" else "",
                     pair(c["ablated_gaps"]["first-last"]) if c["ablated_gaps"] else "",
                     pair(c["slope"], "+.4f"),
                     f"{pair(c['rollout_first'], '.3f')} / {pair(c['rollout_last'], '.3f')}"])
    caption = (f"Wu et al.'s stack (single-head causal attention, width {st.task.dim}, no positions, MLP head) on "
               f"their in-context classification task ({st.task.items} items, burst {st.task.burst}, "
               f"{st.task.classes} classes, {st.task.labels} labels), {st.steps} steps of batch {st.batch} (theirs: "
               f"50,000), {len(st.seeds)} seeds per cell; gaps: accuracy when the earlier of two identical items is "
               f"the answer minus when the later one is, on {st.test_size} novel-class sequences per test (> 0: the "
               f"earlier wins); the learning gate: in-context accuracy >= {GATE} on novel classes. Plan SHA-256 "
               f"{plan_sha256()}.")
    notes = [f"Verdict {cid}: " + "; ".join(f"{r.setting.case} {r.verdict}" for r in data.verdicts([cid])[cid])
             + "." for cid in ("W2", "W3", "W4")]
    return Table("wu_icl", "Wu et al.'s experiment, reproduced and with normalisation inserted", caption, columns,
                 rows, notes)


def wu_figures(data) -> list[ReportFigure]:
    """The first-vs-last gap along training per arm and normalisation (mean over learned seeds, +- one SE), Wu et
    al.'s published value marked."""
    from lnrecency.report.views.shared import not_run_figure

    title = "Wu et al.'s experiment: the first-vs-last gap with and without normalisation"
    runs = STUDY.for_report(data)
    if runs is None:
        return [not_run_figure(STEMS[0], title, data.settings.quick, experiment="wu-icl")]
    from lnrecency.experiments.studies.wu_icl import gap_figure, summary

    return [ReportFigure(STEMS[0], title, "Accuracy gap acc(first item is the answer) - acc(last item is) on novel "
                         "classes with the two items' contents identical, along training, mean over learned seeds "
                         "(+- one SE); above 0 the earlier item wins (Wu et al.'s primacy), below 0 the later one. "
                         "Dashes: Wu et al.'s published value (no normalisation, 50,000 steps). A cell with no run "
                         "past the learning gate has no line (the table names it).",
                         gap_figure(summary(runs, STUDY.settings_for(data.settings.quick))))]


views("W2", module=__name__,
      tables=(TableOutput("wu_icl", "Wu et al.'s experiment: gaps, accuracy, the scale ablation, slopes and "
                                    "rollouts per arm and normalisation", wu_table),),
      figures=(FigureOutput("Wu et al.'s experiment: the first-vs-last gap along training", wu_figures,
                            STEMS),))
