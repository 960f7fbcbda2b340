"""What C5 shows in the report and the notebooks: tables, figures and notebook cells (the claim:
:mod:`lnrecency.claims.parameter_free.c5_amplification`)."""
from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from lnrecency.claims.parameter_free.c5_amplification import ID, RPByAlpha
from lnrecency.files.figure_record import ReportFigure
from lnrecency.files.table_record import Table
from lnrecency.report.views.outputs import FigureOutput, TableOutput, views
from lnrecency.report.views.shared import (
    Curve,
    finish,
    model_config,
    plot_curves,
    records_with_settings,
    verdict_note,
)

GAP_GRID = np.round(np.arange(0.0, 0.951, 0.05), 10)


def gap_curves(data) -> list[Curve]:
    """Layer-2 gap S_{n,n-1} - S_{n,1} against alpha (LayerNorm, lam = 1), without and with residual.

    Theory on a fine alpha grid; Monte Carlo paired differences at d = ds[-1] for ``settings.alphas``.
    """
    s = data.settings
    n, d = s.n, s.ds[-1]
    curves = []
    for residual in (False, True):
        y = []
        for a in GAP_GRID:
            sc = data.limit(model_config(norm="layernorm", residual=residual, alpha=float(a)), layers=2).scores
            y.append(sc[1, n - 1, n - 2] - sc[1, n - 1, 0])
        ests = [data.sim(model_config(norm="layernorm", residual=residual, alpha=a), d).paired_difference(
            2, n, n - 1, 1) for a in s.alphas]
        curves.append(Curve("residual" if residual else "no residual", GAP_GRID, np.array(y),
                            np.array(s.alphas), np.array([e.mean for e in ests]),
                            np.array([e.stderr for e in ests])))
    return curves


def gap_table(data) -> Table:
    """C5: the exact gap S^(2)_{n,n-1} - S^(2)_{n,1} (absolute and relative to S_{n,1}) against alpha."""
    s = data.settings
    n = s.n
    rows = []
    for residual in (False, True):
        for a in s.alphas:
            lim = data.limit_scores(model_config(norm="layernorm", residual=residual, alpha=a))[1, n - 1]
            gap = lim[n - 2] - lim[0]
            rows.append(["yes" if residual else "no", a, lim[0], lim[n - 2], gap, gap / lim[0]])
    columns = ["residual", "alpha", "S_(n,1) limit", "S_(n,n-1) limit", "gap limit", "gap / S_(n,1)"]
    caption = (f"Layer-2 recency gap S_(n,n-1) - S_(n,1) at n = {n} (LayerNorm, lam = 1, gamma = 1) against "
               f"alpha, in the exact limit: absolute and relative to S_(n,1). 'Amplify' can mean a larger absolute "
               f"or a larger relative gap; the table shows both. The verdict decides each sense over all alpha in "
               f"[0, 0.999] by signs and roots (lnrecency.theory.anisotropy.decide_alpha), not on this grid; its "
               f"Monte Carlo (the authors' RP against alpha) is the c5_rp_by_alpha table.")
    return Table("c5_gap_vs_alpha", "C5. Does anisotropy amplify the recency gap?", caption, columns, rows,
                 verdict_note(data, ID))


def rp_table(data) -> Table:
    """C5: the verdict's recency probability RP (the authors' measure and convention) against alpha, with the
    one-sided empirical Bernstein comparison of each pair of adjacent alphas."""
    columns = ["d", "residual", "samples", "alpha", "RP", "SE", "step", "RP step", "Bernstein threshold",
               "step verdict"]
    rows = []
    for r, where, ev in records_with_settings(data.results(ID), RPByAlpha):
        steps = {st.alpha_hi: st for st in ev.steps}
        for a, rp, se in zip(ev.alphas, ev.rp, ev.rp_stderr):
            st = steps.get(a)
            rows.append([ev.d, "yes" if ev.residual else "no", ev.samples, a, rp, se,
                         None if st is None else f"{st.alpha_lo:g} -> {st.alpha_hi:g}",
                         None if st is None else st.difference, None if st is None else st.bernstein_threshold,
                         None if st is None else st.verdict])
    caption = ("The verdict's own Monte Carlo (lnrecency verify): the layer-2 recency probability RP of the authors' "
               "convention (authors-v2, LayerNorm) at width d against alpha, with its SE; each step to the next "
               "alpha is confirmed when it exceeds the sum of the two one-sided empirical Bernstein half-widths "
               "(a non-asymptotic bound), refuted below minus it.")
    return Table("c5_rp_by_alpha", "C5. The authors' RP against alpha", caption, columns, rows,
                 verdict_note(data, ID))


def gap_figure(data) -> ReportFigure:
    s = data.settings
    fig = Figure(figsize=(6.4, 4.2))
    ax = fig.subplots()
    plot_curves(ax, gap_curves(data), mc_label=f"MC d={s.ds[-1]}")
    ax.axhline(0.0, color="grey", lw=0.6)
    title = "Layer-2 recency gap against alpha"
    finish(fig, ax, title, "anisotropy alpha", f"S_(n,n-1) - S_(n,1), layer 2, n = {s.n}", title_size=None)
    caption = (f"Gap S^(2)_(n,n-1) - S^(2)_(n,1) at n = {s.n} (LayerNorm, lam = 1, gamma = 1) against alpha, "
               f"without and with residual. Lines: exact limit on a grid; points: paired Monte Carlo "
               f"difference +- SE at d = {s.ds[-1]} ({s.samples} samples; the report's own illustration runs). A "
               f"positive gap is recency.")
    return ReportFigure("gap_vs_alpha", title, caption, fig)


def gap_figures(data) -> list[ReportFigure]:
    return [gap_figure(data)]


views(ID, module=__name__,
      tables=(TableOutput("c5_gap_vs_alpha", "recency gap S_(n,n-1) - S_(n,1) against alpha, absolute and relative",
                           gap_table),
               TableOutput("c5_rp_by_alpha", "the verdict's recency probability RP against alpha, adjacent alphas "
                                             "compared", rp_table)),
      figures=(FigureOutput("recency gap S_(n,n-1) - S_(n,1) against alpha", gap_figures, ("gap_vs_alpha",)),),
      notebook="03_residual_and_anisotropy",
      cells=("Whether anisotropy amplifies the bias depends on what is measured: compare the absolute gap with the "
              "relative one, with and without residual.", gap_table, gap_figures))
