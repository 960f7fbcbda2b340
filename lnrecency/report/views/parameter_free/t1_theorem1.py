"""What T1 shows in the report and the notebooks: tables, figures and notebook cells (the claim:
:mod:`lnrecency.claims.parameter_free.t1_theorem1`)."""
from __future__ import annotations

import math

import numpy as np
from matplotlib.figure import Figure

from lnrecency.claims.parameter_free.t1_theorem1 import ID
from lnrecency.files.figure_record import ReportFigure, colour_bar
from lnrecency.files.table_record import Table
from lnrecency.model.config import ModelConfig
from lnrecency.report.views.outputs import FigureOutput, TableOutput, views
from lnrecency.report.views.shared import LN, model_config, score_table, show_figures, slug, verdict_note
from lnrecency.theory.closed_forms import closed_forms


def HEATMAP_NORMS(d: int) -> list[tuple[str, dict]]:
    """The four normalisation variants of the heatmaps (LayerNorm at lam = 1 and lam = sqrt(d))."""
    return [("no normalisation", dict(norm="none")), ("l2", dict(norm="l2")),
            ("LayerNorm, lam = 1", dict(norm="layernorm", lam=1.0)),
            (f"LayerNorm, lam = sqrt({d})", dict(norm="layernorm", lam=float(np.sqrt(d))))]


def heatmap_configs(data, variant: dict, residual: bool) -> list[ModelConfig]:
    return [model_config(residual=residual, alpha=a, **variant) for a in data.settings.alphas]


NOISE_SPAN = 20.0  # the colour scale spans at least this many Monte Carlo SEs


def _colour_range(theory: np.ndarray, off: np.ndarray, se: float = 0.0) -> tuple[float, float]:
    """Colour limits: the range of the limit's off-diagonal entries, widened about its centre to at
    least 2% of the largest |entry| and to at least NOISE_SPAN standard errors of the Monte Carlo means
    (``se``, the largest off-diagonal SE): noise of +-2 SE then covers at most a fifth of the scale and
    does not read as structure where the limit is flat."""
    vals = theory[off] if off.any() else np.diagonal(theory)
    lo, hi = float(np.min(vals)), float(np.max(vals))
    span = max(0.02 * max(float(np.nanmax(np.abs(theory))), 1e-12), NOISE_SPAN * se)
    if hi - lo < span:
        mid = 0.5 * (lo + hi)
        lo, hi = mid - span / 2, mid + span / 2
    return lo, hi


def heatmap_figure(data, variant_label: str, variant: dict, residual: bool) -> ReportFigure:
    """Rows: alpha; columns: layers; each panel shows the exact limit (left) beside the Monte Carlo mean
    at d = heat_d (right), on one colour scale."""
    s = data.settings
    d, n, L = s.heat_d, s.n, s.layers
    configs = heatmap_configs(data, variant, residual)
    fig = Figure(figsize=(3.9 * L, 1.85 * len(configs) + 0.9))
    axes = fig.subplots(len(configs), L, squeeze=False)
    off = np.tril(np.ones((n, n), dtype=bool), k=-1)
    gap = np.full((n, 1), np.nan)
    for r, c in enumerate(configs):
        theory = data.limit_scores(c)
        run = data.sim(c, d)
        for layer in range(L):
            t, m = theory[layer], run.mean[layer]
            se = float(np.max(run.stderr[layer][off])) if off.any() else 0.0
            lo, hi = _colour_range(t, off, se)
            ax = axes[r, layer]
            im = ax.imshow(np.hstack([t, gap, m]), cmap="viridis", vmin=lo, vmax=hi, interpolation="nearest")
            ax.set_xticks([0, n - 1, n + 1, 2 * n], labels=["1", str(n), "1", str(n)], fontsize=9)
            ax.set_yticks([0, n - 1], labels=["1", str(n)], fontsize=9)
            colour_bar(ax, im)
            if r == 0:
                ax.set_title(f"layer {layer + 1}: limit | MC d={d}", fontsize=9)
            if layer == 0:
                ax.set_ylabel(f"alpha = {float(c.alpha):g}\nquery i", fontsize=9)
            if r == len(configs) - 1:
                ax.set_xlabel("key j (limit)      key j (MC)", fontsize=9)
    res = f"residual (gamma = {float(configs[0].gamma):g})" if residual else "no residual"
    title = f"Expected scores E[S^(l)_ij], {variant_label}, {res}"
    fig.suptitle(title, fontsize=12)
    fig.subplots_adjust(left=0.05, right=0.955, bottom=0.05, top=0.9, wspace=0.4, hspace=0.25)
    caption = (f"{title}, n = {n}: for each alpha (rows) and layer (columns) the exact d -> infinity limit "
               f"(left half of a panel) beside the Monte Carlo mean at d = {d} ({s.samples} samples, the report's "
               f"own illustration runs; right half). Colour scale per panel (colour bar beside it): the range of "
               f"the limit's off-diagonal entries, widened to at least 2% of the largest entry and to at least "
               f"{NOISE_SPAN:g} Monte Carlo standard errors, so that sampling noise (+-2 SE) covers at most a fifth "
               f"of the scale; the diagonal and values outside the range are clipped. Ticks: query i and key j "
               f"(1-indexed). Recency shows as colour increasing left to right along a row; earlier-token bias as "
               f"colour decreasing.")
    name = f"heatmap_{slug(variant_label)}_{'res' if residual else 'nores'}"
    return ReportFigure(name, title, caption, fig, tight=False)


def heatmap_figures(data, part: int | None = None) -> list[ReportFigure]:
    """The eight score heatmaps (four normalisations, without and with residual); ``part`` k: only the
    k-th normalisation's two (the report's drawing processes share the heatmaps part by part)."""
    norms = HEATMAP_NORMS(data.settings.heat_d)
    if part is not None:
        norms = norms[part:part + 1]
    return [heatmap_figure(data, label, variant, residual) for label, variant in norms for residual in (False, True)]


def heatmap_names(settings) -> list[str]:
    return [f"heatmap_{slug(label)}_{'res' if residual else 'nores'}"
            for label, _ in HEATMAP_NORMS(settings.heat_d) for residual in (False, True)]


LAST_ROW_CONFIGS = [
    ("none", model_config(norm="none")), ("l2", model_config(norm="l2")), ("layernorm lam=1", LN),
    ("none + res", model_config(norm="none", residual=True)), ("l2 + res", model_config(norm="l2", residual=True)),
    ("layernorm + res", model_config(norm="layernorm", residual=True)),
]


def last_row_table(data) -> Table:
    """S^(2)_{n,j} for j = 1..n, exact limit, for each normalisation with and without residual."""
    s = data.settings
    n = s.n
    lam_d = math.sqrt(s.heat_d)
    configs = LAST_ROW_CONFIGS + [(f"layernorm lam=sqrt({s.heat_d})", model_config(norm="layernorm", lam=lam_d))]
    cols = {label: data.limit_scores(c)[1, n - 1] for label, c in configs}
    rows = [[j, *[cols[label][j - 1] for label, _ in configs]] for j in range(1, n + 1)]
    caption = (f"Exact d -> infinity layer-2 scores of the last row i = n = {n} against the key j, alpha = 0, "
               f"gamma = 1. l2, rmsnorm and LayerNorm share this limit. Without normalisation the "
               f"off-diagonal entries are equal (flat); with normalisation they increase with j (recency).")
    return Table("layer2_last_row", "Layer-2 scores of the last row", caption, ["j", *cols], rows,
                 verdict_note(data, "T1", "C2"))


def t1_scores(data) -> Table:
    """The verdict's Monte Carlo means (row 8, layer 2) against limit + c/d at d = 16, 64, 256, 10^12."""
    return score_table(data, ID, "Theorem 1: layer-2 recency with normalisation (the verdict's Monte Carlo, row 8)")


def _closed_forms_cell(data, display):
    cf = closed_forms(ModelConfig(norm="layernorm"))
    display(cf.g, cf.h2, cf.score)


def _heatmap_cell(data, display):
    show_figures(display, heatmap_figure(data, "LayerNorm, lam = 1", dict(norm="layernorm"), residual=False))


views(ID, module=__name__,
      tables=(TableOutput("t1_scores", "Theorem 1: the verdict's Monte Carlo means (row 8, layer 2) against "
                                        "limit + c/d at d = 16, 64, 256, 10^12", t1_scores),
               TableOutput("layer2_last_row", "layer-2 scores of the last row for every normalisation",
                           last_row_table)),
      figures=(FigureOutput("expected-score heatmaps, layers 1-4, limit beside MC", heatmap_figures, heatmap_names,
                             parts=len(HEATMAP_NORMS(1))),),
      notebook="01_theorem1_layernorm_recency",
      cells=("The closed forms, derived by sympy from the limit recursion (no residual, LayerNorm):",
              _closed_forms_cell,
              "The verdict's own Monte Carlo (row 8 of layer 2): exact limit, first-order coefficient c, and per "
              "width (16, 64, 256, 10^12) the mean +- SE against limit + c/d:",
              t1_scores,
              "Expected scores per layer, limit beside simulation, for every alpha:",
              _heatmap_cell))
