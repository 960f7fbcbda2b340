"""What C7 shows in the report and the notebooks: tables, figures and notebook cells (the claim:
:mod:`lnrecency.claims.parameter_free.c7_output_norm`)."""
from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from lnrecency.claims.parameter_free.c7_output_norm import ID, N_MC
from lnrecency.files.figure_record import ReportFigure
from lnrecency.files.table_record import Table
from lnrecency.report.views.outputs import FigureOutput, TableOutput, views
from lnrecency.report.views.shared import Curve, finish, means_table, model_config


def output_norm_curves(data) -> list[Curve]:
    """|o_i|^2 of layer 1 against the position i (LayerNorm, alpha = 0): limit, MC at each d."""
    s = data.settings
    c = model_config(norm="layernorm")
    n = max(s.lengths)
    i = np.arange(1, n + 1)
    theory = data.limit(c, n=n, layers=1).layers[0].output_norms ** 2
    curves = []
    for d in (s.ds[0], s.ds[-1]):
        sim = data.sim(c, d, n=n, layers=2, paired=False)
        curves.append(Curve(f"d = {d}", i, theory, i, sim.output_sq_norm_mean[0],
                            sim.output_sq_norm_stderr[0]))
    return curves


def output_norm_table(data) -> Table:
    """C7 (seed 002): the verdict's Monte Carlo means of |o_i|^2 (layer 1) against limit + c/d at each width, beside
    the limit identity sum_k P_ik^2 and the near-uniform reference 1/i."""
    def identity(where: dict, e) -> list:
        cfg = model_config(norm="layernorm", alpha=float(where.get("alpha", 0.0)))
        weights = data.limit(cfg, n=N_MC, layers=1).layers[0].weights
        return [float(np.sum(weights[e.i - 1] ** 2)), 1.0 / e.i]

    return means_table(data, ID, "c7_output_norm", "Seed 002: the attention output gets shorter with position",
                       extra_columns=("sum_k P_ik^2 limit", "1/i"), extra=identity,
                       caption="Here the quantity is |o_i|^2 of the first layer's attention output (LayerNorm, lam = "
                               "1), entry (i, i): its limit equals sum_k P_ik^2 at alpha = 0 (seed 002's identity) and "
                               "exceeds it for alpha > 0, where the output keeps a floor alpha.")


def output_norm_figure(data) -> ReportFigure:
    s = data.settings
    curves = output_norm_curves(data)
    fig = Figure(figsize=(6.4, 4.2))
    ax = fig.subplots()
    ax.plot(curves[0].x, curves[0].y, "-", color="k", lw=1.6, label="limit sum_k P_ik^2")
    for col, cv in zip(("tab:orange", "tab:blue"), curves):
        ax.errorbar(cv.mc_x, cv.mc_mean, yerr=cv.mc_se, fmt="o", ms=3.5, color=col, capsize=2, lw=0.8,
                    label=f"MC {cv.label}")
    x = curves[0].x
    ax.plot(x, 1.0 / x, ":", color="grey", label="1/i (uniform attention)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    title = "Seed 002: the attention output gets shorter with position"
    finish(fig, ax, title, "position i", "|o_i|^2, layer-1 attention output")
    caption = (f"Squared length of the layer-1 attention output o_i against the position i (LayerNorm, alpha = "
               f"0, lam = 1), log-log: the exact limit sum_k P_ik^2, Monte Carlo mean +- SE at d = {s.ds[0]} "
               f"and d = {s.ds[-1]} ({s.samples} samples), and the 1/i of uniform attention. The Monte Carlo points "
               f"are the report's own illustration runs (positions up to {max(s.lengths)}); the verdict's means are "
               f"in the c7_output_norm table.")
    return ReportFigure("seed002_output_norm", title, caption, fig)


def output_norm_figures(data) -> list[ReportFigure]:
    return [output_norm_figure(data)]


views(ID, module=__name__,
      tables=(TableOutput("c7_output_norm", "seed 002: |o_i|^2 against position, limit vs MC", output_norm_table),),
      figures=(FigureOutput("seed 002: output norm against position", output_norm_figures,
                             ("seed002_output_norm",)),),
      notebook="05_seeds_output_norm_and_variance",
      cells=(output_norm_table, output_norm_figures))
