"""The report's figures (matplotlib, PNG and PDF): theory beside simulation with error bars.

Figures are ``matplotlib.figure.Figure`` objects (no pyplot state): saving renders them with the Agg
(PNG) and PDF canvases whatever the interactive backend is, and a notebook can ``display`` them.

Builders take a :class:`~lnrecency.report.data.ReportData` and return :class:`ReportFigure` records;
their numbers come from :mod:`lnrecency.report.series` (i.e. from the library), never from here.
"""
from __future__ import annotations

import re
from functools import partial
from typing import Callable

import matplotlib
import matplotlib.ticker
import numpy as np
from matplotlib.figure import Figure

from lnrecency.claims.catalog import CATALOG, FigureOutput
from lnrecency.report import series
from lnrecency.figure import ReportFigure, colour_bar
from lnrecency.models.seeds_config import select
from lnrecency.report.data import ReportData

__all__ = ["ReportFigure", "FIGURES", "build_figures", "figure_names", "heatmap_figure", "heatmap_figures"]

def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


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


def heatmap_figure(data: ReportData, variant_label: str, variant: dict, residual: bool) -> ReportFigure:
    """Rows: alpha; columns: layers; each panel shows the exact limit (left) beside the Monte Carlo mean
    at d = heat_d (right), on one colour scale."""
    s = data.settings
    d, n, L = s.heat_d, s.n, s.layers
    configs = series.heatmap_configs(data, variant, residual)
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
            ax.set_xticks([0, n - 1, n + 1, 2 * n], labels=["1", str(n), "1", str(n)], fontsize=7)
            ax.set_yticks([0, n - 1], labels=["1", str(n)], fontsize=7)
            colour_bar(ax, im)
            if r == 0:
                ax.set_title(f"layer {layer + 1}: limit | MC d={d}", fontsize=9)
            if layer == 0:
                ax.set_ylabel(f"alpha = {float(c.alpha):g}\nquery i", fontsize=9)
            if r == len(configs) - 1:
                ax.set_xlabel("key j (limit)      key j (MC)", fontsize=8)
    res = f"residual (gamma = {float(configs[0].gamma):g})" if residual else "no residual"
    title = f"Expected scores E[S^(l)_ij], {variant_label}, {res}"
    fig.suptitle(title, fontsize=12)
    fig.subplots_adjust(left=0.05, right=0.955, bottom=0.05, top=0.9, wspace=0.4, hspace=0.25)
    caption = (f"{title}, n = {n}: for each alpha (rows) and layer (columns) the exact d -> infinity limit "
               f"(left half of a panel) beside the Monte Carlo mean at d = {d} ({s.samples} samples; right "
               f"half). Colour scale per panel (colour bar beside it): the range of the limit's off-diagonal "
               f"entries, widened to at least 2% of the largest entry and to at least {NOISE_SPAN:g} Monte Carlo "
               f"standard errors, so that sampling noise (+-2 SE) covers at most a fifth of the scale; the "
               f"diagonal and values outside the range are clipped. Ticks: query i and key j (1-indexed). Recency shows as colour increasing "
               f"left to right along a row; earlier-token bias as colour decreasing.")
    name = f"heatmap_{_slug(variant_label)}_{'res' if residual else 'nores'}"
    return ReportFigure(name, title, caption, fig, tight=False)


def _plot_curves(ax, curves: list[series.Curve], *, marker: str = "o", mc_label: str = "MC",
                 separate_labels: bool = True) -> list:
    """Lines for the limit, error bars for the Monte Carlo; returns legend handles (colour = curve)."""
    from matplotlib.lines import Line2D
    colors = matplotlib.colormaps["viridis"](np.linspace(0.0, 0.85, max(len(curves), 1)))
    handles = []
    for col, cv in zip(colors, curves):
        line, = ax.plot(cv.x, cv.y, "-", color=col, lw=1.6,
                        label=f"{cv.label} (limit)" if separate_labels else cv.label)
        handles.append(line)
        if cv.mc_x is not None:
            ax.errorbar(cv.mc_x, cv.mc_mean, yerr=cv.mc_se, fmt=marker, ms=3.5, color=col, capsize=2,
                        lw=0.8, label=f"{cv.label} ({mc_label})" if separate_labels else None)
    if not separate_labels:
        handles += [Line2D([], [], color="k", lw=1.6, label="line: exact limit"),
                    Line2D([], [], color="k", marker=marker, ls="none", ms=4, label=f"points: {mc_label}")]
    return handles


def h_figure(data: ReportData) -> ReportFigure:
    s = data.settings
    fig = Figure(figsize=(12, 4.2))
    axes = fig.subplots(1, 2)
    for ax, residual in zip(axes, (False, True)):
        handles = _plot_curves(ax, series.h_curves(data, residual), mc_label=f"MC d={s.ds[-1]} +- SE",
                               separate_labels=False)
        ax.set_xlabel("key index j")
        ax.set_ylabel("h(j)^2 = |x_j^(1)|^2")
        ax.set_title("residual (gamma = 1)" if residual else "no residual")
    fig.legend(handles=handles, loc="center right", fontsize=8)
    title = "h(j)^2 over the key index j for several alpha"
    fig.suptitle(title)
    fig.tight_layout(rect=(0, 0, 0.83, 1))
    caption = (f"Squared length h(j)^2 of the first layer's output (LayerNorm, lam = 1) against j for alpha in "
               f"{list(s.alphas)}; left without, right with residual. Lines: exact limit. Points: Monte Carlo "
               f"mean +- SE of |o_j|^2 at d = {s.ds[-1]} ({s.samples} samples), shown without residual only "
               f"(with residual the simulation does not report |x_j^(1)|). Every curve decreases in j, i.e. "
               f"layer-2 recency.")
    return ReportFigure("h_of_j", title, caption, fig)


def _finish(fig, ax, title: str, xlabel: str, ylabel: str, *, title_size: int | None = 10) -> None:
    """Axis labels, legend, title and layout of a one-panel figure."""
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=8)
    ax.set_title(title) if title_size is None else ax.set_title(title, fontsize=title_size)
    fig.tight_layout()


def gap_figure(data: ReportData) -> ReportFigure:
    s = data.settings
    fig = Figure(figsize=(6.4, 4.2))
    ax = fig.subplots()
    _plot_curves(ax, series.gap_curves(data), mc_label=f"MC d={s.ds[-1]}")
    ax.axhline(0.0, color="grey", lw=0.6)
    title = "Layer-2 recency gap against alpha"
    _finish(fig, ax, title, "anisotropy alpha", f"S_(n,n-1) - S_(n,1), layer 2, n = {s.n}", title_size=None)
    caption = (f"Gap S^(2)_(n,n-1) - S^(2)_(n,1) at n = {s.n} (LayerNorm, lam = 1, gamma = 1) against alpha, "
               f"without and with residual. Lines: exact limit on a grid; points: paired Monte Carlo "
               f"difference +- SE at d = {s.ds[-1]} ({s.samples} samples). A positive gap is recency.")
    return ReportFigure("gap_vs_alpha", title, caption, fig)


def output_norm_figure(data: ReportData) -> ReportFigure:
    s = data.settings
    curves = series.output_norm_curves(data)
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
    _finish(fig, ax, title, "position i", "|o_i|^2, layer-1 attention output")
    caption = (f"Squared length of the layer-1 attention output o_i against the position i (LayerNorm, alpha = "
               f"0, lam = 1), log-log: the exact limit sum_k P_ik^2, Monte Carlo mean +- SE at d = {s.ds[0]} "
               f"and d = {s.ds[-1]} ({s.samples} samples), and the 1/i of uniform attention.")
    return ReportFigure("seed002_output_norm", title, caption, fig)


def variance_figure(data: ReportData) -> ReportFigure:
    s = data.settings
    v = series.variance_curve(data, s.ds[0])
    fig = Figure(figsize=(6.4, 4.2))
    ax = fig.subplots()
    ax.plot(v.lengths, v.limit_plain, "-", color="tab:red", label="no post-attention norm (limit)")
    ax.errorbar(v.lengths, v.mc_plain, yerr=v.se_plain, fmt="o", color="tab:red", ms=4, capsize=2,
                label=f"no post-attention norm (MC d={v.d})")
    ax.plot(v.lengths, v.limit_post, "-", color="tab:blue", label="LayerNorm after attention (limit)")
    ax.errorbar(v.lengths, v.mc_post, yerr=v.se_post, fmt="s", color="tab:blue", ms=4, capsize=2,
                label=f"LayerNorm after attention (MC d={v.d})")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    title = "Seed 003: output variance against sequence length"
    _finish(fig, ax, title, "sequence length n", "d x per-coordinate variance of the output")
    caption = (f"d times the per-coordinate variance of the layer-1 attention output at the last position, "
               f"against the sequence length n (LayerNorm before attention, alpha = 0, lam = 1): without a "
               f"normalisation after attention it decays with n; with a LayerNorm right after attention it "
               f"stays at 1. Lines: exact limit; points: Monte Carlo mean +- SE at d = {v.d} "
               f"({s.samples} samples).")
    return ReportFigure("seed003_output_variance", title, caption, fig)


def convergence_figure(data: ReportData) -> ReportFigure:
    conv = series.convergence_curve(data)
    fig = Figure(figsize=(6.4, 4.2))
    ax = fig.subplots()
    for col, (j, (b, se)) in zip(("tab:blue", "tab:orange"), conv.entries.items()):
        ax.errorbar(conv.ds, np.abs(b), yerr=se, fmt="o", color=col, capsize=2, ms=4,
                    label=f"|E_d[S] - S_limit|, S^(2)_({conv.n},{j}) (MC +- SE)")
        ax.plot(conv.ds, conv.fitted[j], "-", color=col, lw=1.0)
        ax.plot(conv.ds, np.abs(conv.c[j]) / conv.ds, "--", color=col, lw=1.2)
    ax.plot([], [], "-", color="grey", label=f"fitted slope {conv.slope:.3f} +- {conv.slope_se:.3f}")
    ax.plot([], [], "--", color="grey", label="predicted |c|/d (finite-width theory, no fit)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xticks(conv.ds, labels=[f"{d:g}" for d in conv.ds])
    ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
    title = "Finite-width expectation converges to the limit"
    _finish(fig, ax, title, "width d", "|E_d[S] - S_limit|")
    caption = (f"Log-log plot of the finite-width bias |E_d[S] - S_limit| of two layer-2 scores of the last row "
               f"({conv.label}, n = {conv.n}) against d: Monte Carlo mean +- SE ({data.settings.conv_samples} "
               f"samples per d). Lines: the common slope fitted over {conv.fit_entries} resolved layer-2 "
               f"entries ({conv.fit_points} points), {conv.slope:.3f} +- {conv.slope_se:.3f}, drawn through "
               f"each entry's best-resolved point; O(1/d) means slope -1. Dashed: the bias |c|/d predicted "
               f"by the finite-width theory (lnrecency finite-width), not fitted to the points.")
    return ReportFigure("convergence_in_d", title, caption, fig)


def heatmap_figures(data: ReportData, part: int | None = None) -> list[ReportFigure]:
    """The eight score heatmaps (four normalisations, without and with residual); ``part`` k: only the
    k-th normalisation's two (the report's drawing processes share the heatmaps part by part)."""
    norms = series.HEATMAP_NORMS(data.settings.heat_d)
    if part is not None:
        norms = norms[part:part + 1]
    return [heatmap_figure(data, label, variant, residual) for label, variant in norms for residual in (False, True)]


heatmap_figures.parts = len(series.HEATMAP_NORMS(1))  # type: ignore[attr-defined]


def heatmap_names(settings) -> list[str]:
    return [f"heatmap_{_slug(label)}_{'res' if residual else 'nores'}"
            for label, _ in series.HEATMAP_NORMS(settings.heat_d) for residual in (False, True)]


def h_figures(data: ReportData) -> list[ReportFigure]:
    return [h_figure(data)]


def gap_figures(data: ReportData) -> list[ReportFigure]:
    return [gap_figure(data)]


def convergence_figures(data: ReportData) -> list[ReportFigure]:
    return [convergence_figure(data)]


def output_norm_figures(data: ReportData) -> list[ReportFigure]:
    return [output_norm_figure(data)]


def variance_figures(data: ReportData) -> list[ReportFigure]:
    return [variance_figure(data)]


def authors_figures(data: ReportData) -> list[ReportFigure]:
    """The authors' figure of the report's convention in their style, and our limit beside it."""
    from lnrecency.reproduce import heatmap_figures as authors_heatmaps

    figs, runs = data.authors()
    return [f for fig in figs for f in authors_heatmaps(fig, runs)]


def authors_names(settings) -> list[str]:
    stem = "layernorm" if settings.convention == "authors-v1" else "fig1_d16_d64_L1L2"
    return [stem, f"{stem}_theory"]


def phase_figures(data: ReportData) -> list[ReportFigure]:
    from lnrecency.sweep import phase_figure

    return [phase_figure(*data.phase())]


# (one line for the index, builder returning one or more figures): derived from the claim catalog
TRAINED_STEMS = ("trained_logit_maps", "trained_phases", "trained_norm_profiles")
_NORM_COLOURS = {"layernorm": "tab:blue", "rmsnorm": "tab:green", "none": "tab:red"}


def trained_names(settings) -> list[str]:
    return list(TRAINED_STEMS)


def _not_run(name: str, title: str, quick: bool, experiment: str = "thesis") -> ReportFigure:
    fig = Figure(figsize=(6.4, 1.6))
    ax = fig.subplots()
    ax.axis("off")
    cmd = f"lnrecency experiments {experiment}" + (" --quick" if quick else "")
    ax.text(0.5, 0.5, f"Not run: `{cmd}` trains and caches the models;\nthe report then draws this figure.",
            ha="center", va="center", fontsize=10)
    return ReportFigure(name, title + " (not run)", f"The {experiment} experiment is not in the cache; run `{cmd}`.",
                        fig)


def trained_figures(data: ReportData) -> list[ReportFigure]:
    """TM1-TM5: the authors' diagonal-normalised logit maps per layer (seed 0, after training), the recency
    slope per layer with its t-interval over seeds, and the head outputs' norm profile beside the law."""
    from lnrecency.claims.trained import seed_interval

    res = data.thesis()
    titles = ("Trained decoders: the authors' diagonal-normalised logit maps",
              "Trained decoders: recency slope per layer, 95% t-interval over training seeds",
              "Trained decoders: head-output norm against position, beside the law of an average")
    if res is None:
        return [_not_run(stem, t, data.settings.quick) for stem, t in zip(TRAINED_STEMS, titles)]
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
            ax = axes[r_, c_]
            im = ax.imshow(m, cmap="magma")
            colour_bar(ax, im)
            ax.set_title(f"{norm}, layer {c_ + 1}", fontsize=9)
            ax.set_xlabel("key position", fontsize=8)
            ax.set_ylabel("query position", fontsize=8)
    fig.suptitle(f"{titles[0]} ({arch}, seed {st.seeds[0]}, after {st.steps} steps)", fontsize=10)
    fig.tight_layout()
    maps = ReportFigure(TRAINED_STEMS[0], titles[0],
                        f"Head-mean attention logits of the {arch} models (seed {st.seeds[0]}, after training) on "
                        f"{st.probe_sequences} random-token sequences, each lower diagonal minus its own mean (the "
                        f"authors' normalize_lower_diagonals, concept/with_params.ipynb): rows are normalisations, "
                        f"columns layers; brighter towards the diagonal within a row = recency.", fig)
    fig = Figure(figsize=(4.2 * len(st.archs), 3.6))
    axes = np.atleast_1d(fig.subplots(1, len(st.archs)))
    for ax, a in zip(axes, st.archs):
        layers = np.arange(1, res.n_layers(a) + 1)
        for q, norm in enumerate(st.norms):
            for stage, marker, shift in (("init", "o", -0.15), ("matched", "s", 0.0), ("final", "D", 0.15)):
                iv = [seed_interval(res.slopes(a, norm, stage, lay)) for lay in layers]
                mean = np.array([v.mean for v in iv])
                err = np.array([[v.mean - v.low for v in iv], [v.high - v.mean for v in iv]])
                ax.errorbar(layers + shift + 0.04 * (q - 1), mean, yerr=err, fmt=marker, ms=4, capsize=2, lw=0.8,
                            color=_NORM_COLOURS[norm], mfc="none" if stage == "init" else _NORM_COLOURS[norm],
                            label=f"{norm} {stage}" if a == st.archs[0] else None)
        ax.axhline(0.0, color="grey", lw=0.8)
        ax.set_xticks(layers)
        ax.set_title(a, fontsize=9)
        ax.set_xlabel("layer")
        ax.set_ylabel("recency slope (logit per key position)")
    axes[0].legend(fontsize=6, ncol=1)
    fig.suptitle(titles[1], fontsize=10)
    fig.tight_layout()
    phases = ReportFigure(TRAINED_STEMS[1], titles[1],
                          "Mean over training seeds of each layer's recency slope with its 95% t-interval, per "
                          "architecture and normalisation, at initialisation (open circles), at matched held-out "
                          "loss (squares) and after training (diamonds). Above 0: recency; below 0: earlier-token "
                          "bias.", fig)
    fig = Figure(figsize=(4.2 * len(st.norms), 3.4))
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
        ax.legend(fontsize=7)
    fig.suptitle(titles[2], fontsize=10)
    fig.tight_layout()
    norms = ReportFigure(TRAINED_STEMS[2], titles[2],
                         "Squared norm of the head outputs o_i = sum_k P_ik v_k (mean over heads and sequences, "
                         f"seed {st.seeds[0]}, after training) against position, beside the law of an average of "
                         "weakly correlated vectors s2 (rho + (1 - rho) E sum_k P_ik^2) with s2 and rho measured "
                         "from the same value vectors (seed 002's mechanism).", fig)
    return [maps, phases, norms]


SEED002_STEMS = ("seed002_figure1", "seed002_figure3", "seed002_figures4_6", "seed002_mechanism")
SEED003_STEMS = ("seed003_variance", "seed003_shift", "seed003_accuracy")


def seed002_names(settings) -> list[str]:
    return list(SEED002_STEMS)


def seed003_names(settings) -> list[str]:
    return list(SEED003_STEMS)


def _band(ax, x, per_seed, colour: str, label: str) -> None:
    """Mean over training seeds with its 95% t-interval as a band, and each seed as a thin line."""
    from lnrecency.stats import t_interval

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


def seed002_figures(data: ReportData) -> list[ReportFigure]:
    """Seed 002's Figures 1, 3, 4-6 in its style (curves with CI bands over training seeds, attention heatmaps
    with colour bars) and the layer-0 norm mechanism beside the law for an average of uncorrelated vectors."""
    cached = data.seed_runs("seed002")
    titles = ("Seed 002, Figure 1: P([B]) and P([C]) against the second [A]'s position",
              "Seed 002, Figure 3: the induction head's attention to [B] and [C]",
              "Seed 002, Figures 4-6: the induction head's average attention on random sequences",
              "Seed 002, mechanism: layer-0 head output norm against position, beside the law")
    if cached is None:
        return [_not_run(n, t, data.settings.quick, "seed002") for n, t in zip(SEED002_STEMS, titles)]
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


def seed003_figures(data: ReportData) -> list[ReportFigure]:
    """Seed 003: attention-output variance (and sum_k P_ik^2) against the test length, the hidden-state shift,
    accuracy; one panel per task, one colour per LayerNorm placement, CI bands over training seeds."""
    cached = data.seed_runs("seed003")
    titles = ("Seed 003: attention-output variance against the test length",
              "Seed 003: the shift of the hidden state entering layer 2",
              "Seed 003: accuracy against the test length")
    if cached is None:
        return [_not_run(n, t, data.settings.quick, "seed003") for n, t in zip(SEED003_STEMS, titles)]
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
            ax.axvline(st.train_length, color="grey", lw=0.8)
            ax.set_xscale("log", base=2)
            if logy:
                ax.set_yscale("log")
            ax.set_title(task, fontsize=9)
            ax.set_xlabel("test length (grey: training length)")
            ax.set_ylabel(ylabel)
            ax.legend(fontsize=7)
        extra = (" Dotted: sum_k P_ik^2 at the last position (the parameter-free identity's shape, scaled to the "
                 "first point)." if key == "variance" else "")
        out.append(ReportFigure(name, title, f"{st.scale()}; {st.test_sequences} test sequences per length; band: "
                                f"95% t-interval over training seeds.{extra}", fig))
    return out


FIGURES: list[tuple[str, Callable[[ReportData], list[ReportFigure]]]] = [
    (f.line, f.build) for c in CATALOG for f in c.figures]


def drawing_units(builders: list | None = None) -> list[tuple[str, Callable[[ReportData], list[ReportFigure]]]]:
    """:data:`FIGURES` (or ``builders``) as units of drawing work, in order: a builder whose function declares
    ``parts`` (the score heatmaps) becomes one unit per part, so that two processes can share it."""
    units = []
    for line, build in FIGURES if builders is None else builders:
        output = getattr(build, "__self__", None)  # the catalog's FigureOutput behind a builder of FIGURES
        fn = globals()[output.builder] if isinstance(output, FigureOutput) else None
        parts = getattr(fn, "parts", 1)
        units += [(line, partial(fn, part=k)) for k in range(parts)] if parts > 1 else [(line, build)]
    return units


def figure_names(settings) -> list[str]:
    """File stems of every figure :data:`FIGURES` draws for these report settings."""
    return [name for c in CATALOG for f in c.figures for name in f.names(settings)]


def build_figures(data: ReportData) -> list[ReportFigure]:
    return [f for _, builder in FIGURES for f in builder(data)]
