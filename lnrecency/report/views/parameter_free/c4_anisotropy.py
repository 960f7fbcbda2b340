"""What C4 shows in the report and the notebooks: tables, figures and notebook cells (the claim:
:mod:`lnrecency.claims.parameter_free.c4_anisotropy`)."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
from matplotlib.figure import Figure

from lnrecency.claims.parameter_free.c4_anisotropy import ID
from lnrecency.experiments.authors.outputs import heatmap_figures as authors_heatmaps
from lnrecency.experiments.authors.outputs import panel_table
from lnrecency.files.figure_record import ReportFigure
from lnrecency.files.table_record import Table
from lnrecency.report.views.outputs import FigureOutput, TableOutput, views
from lnrecency.report.views.shared import Curve, model_config, plot_curves, score_table, verdict_note


def h_curves(data, residual: bool) -> list[Curve]:
    """h(j)^2 = |x_j^(1)|^2 over j = 1..h_n for every alpha (LayerNorm, lam = 1, gamma = 1).

    Theory: diagonal of the limit's G^(2). Monte Carlo (no residual only, where h(j)^2 = |o_j|^2):
    mean and SE of the layer-1 output's squared length at d = ds[-1].
    """
    s = data.settings
    n = s.h_n
    j = np.arange(1, n + 1)
    curves = []
    for a in s.alphas:
        c = model_config(norm="layernorm", residual=residual, alpha=a)
        h2 = np.diagonal(data.limit(c, n=n, layers=1).layers[0].next_gram).copy()
        if residual:
            curves.append(Curve(f"alpha = {a:g}", j, h2))
            continue
        sim = data.sim(c, s.ds[-1], n=n, layers=1, paired=False)
        curves.append(Curve(f"alpha = {a:g}", j, h2, j, sim.output_sq_norm_mean[0],
                            sim.output_sq_norm_stderr[0]))
    return curves


def h_table(data) -> Table:
    """h(j) = |x_j^(1)| against j for every alpha, without and with residual (exact limit + closed form)."""
    s = data.settings
    n = s.h_n
    js = [j for j in (1, 2, 3, 4, 5, 8, 10, 16, 20, 30, 40, 50) if j <= n]
    rows = []
    for residual in (False, True):
        for a in s.alphas:
            c = model_config(norm="layernorm", residual=residual, alpha=a)
            h = np.sqrt(np.diagonal(data.limit(c, n=n, layers=1).layers[0].next_gram))
            hc = data.closed_form("h", c, 1, np.array(js, dtype=float))
            err = float(np.max(np.abs(np.asarray(hc, dtype=float) - h[np.array(js) - 1])))
            rows.append(["yes" if residual else "no", a, *[h[j - 1] for j in js], err])
    columns = ["residual", "alpha", *[f"h({j})" for j in js], "max |closed form - limit|"]
    caption = ("h(j) = |x_j^(1)|, the length of the first layer's output (plus the input, with the residual) "
               "at key j, from the exact limit (lam = 1, gamma = 1), and the largest difference from the sympy "
               "closed form at the listed j. Layer-2 recency is exactly 'h strictly decreasing in j'; "
               "the second version's Figures 2 and 5 plot these curves.")
    return Table("h_of_j", "h(j) against j for several alpha, without and with residual", caption, columns,
                 rows, verdict_note(data, "C4"))


def h_figure(data) -> ReportFigure:
    s = data.settings
    fig = Figure(figsize=(12, 4.2))
    axes = fig.subplots(1, 2)
    keys = []
    for ax, residual in zip(axes, (False, True)):
        keys.append(plot_curves(ax, h_curves(data, residual), mc_label=f"MC d={s.ds[-1]} +- SE (left panel)",
                                separate_labels=False))
        ax.set_xlabel("key index j")
        ax.set_ylabel("h(j)^2 = |x_j^(1)|^2")
        ax.set_title("residual (gamma = 1)" if residual else "no residual")
    handles = max(keys, key=len)  # the panel whose key names every style drawn (the points: left only)
    fig.legend(handles=handles, loc="center right", fontsize=9)
    title = "h(j)^2 over the key index j for several alpha"
    fig.suptitle(title)
    fig.tight_layout(rect=(0, 0, 0.76, 1))  # the key to the right of both panels, over neither
    caption = (f"Squared length h(j)^2 of the first layer's output (LayerNorm, lam = 1) against j for alpha in "
               f"{list(s.alphas)}; left without, right with residual. Lines: exact limit. Points: Monte Carlo "
               f"mean +- SE of |o_j|^2 at d = {s.ds[-1]} ({s.samples} samples; the report's own illustration runs), "
               f"shown without residual only "
               f"(with residual the simulation does not report |x_j^(1)|). Every curve decreases in j, i.e. "
               f"layer-2 recency.")
    return ReportFigure("h_of_j", title, caption, fig)


def h_figures(data) -> list[ReportFigure]:
    return [h_figure(data)]


def authors_table(data) -> Table:
    """The authors' figure of the report's convention, RP of every panel (lnrecency.experiments.authors.reproduce)."""
    t = panel_table(*data.authors())
    return replace(t, name="authors_panels")


def authors_figures(data) -> list[ReportFigure]:
    """The authors' figure of the report's convention in their style, and our limit beside it."""
    figs, runs = data.authors()
    return [f for fig in figs for f in authors_heatmaps(fig, runs)]


def authors_names(settings) -> list[str]:
    stem = "layernorm" if settings.convention == "authors-v1" else "fig1_d16_d64_L1L2"
    return [stem, f"{stem}_theory"]


def c4_scores(data) -> Table:
    """The verdict's Monte Carlo means (alpha = 0.9, layer 2) against limit + c/d at each width."""
    return score_table(data, ID, "Anisotropic embeddings: layer-2 recency at alpha = 0.9 (the verdict's Monte "
                                 "Carlo, row 8)")


views(ID, module=__name__,
      tables=(TableOutput("c4_scores", "anisotropic embeddings (alpha = 0.9) at layer 2: the verdict's Monte Carlo "
                                        "means against limit + c/d at each width", c4_scores),
               TableOutput("h_of_j", "h(j) against j for several alpha, without and with residual", h_table),
               TableOutput("authors_panels", "the authors' figure in their convention: RP +- SE of every panel, our "
                                             "limit and first-order RP beside it", authors_table)),
      figures=(FigureOutput("h(j) over j for several alpha, without and with residual", h_figures, ("h_of_j",)),
                FigureOutput("the authors' simulation figure in their convention, RP on every panel, beside our "
                             "limit", authors_figures, authors_names)),
      notebook="03_residual_and_anisotropy",
      cells=(c4_scores, h_table, h_figures))
