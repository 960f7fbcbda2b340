"""The tables and figures of ``lnrecency reproduce``: panels against the printed values and our theory, the
ceiling, the h(j) curves, and the heatmaps in the authors' layout."""
from __future__ import annotations

import itertools
import math
from typing import Any

import matplotlib
import numpy as np
from matplotlib.figure import Figure
from scipy.stats import t as _student

from lnrecency.experiments.authors.catalogue import (
    PRINTED_DRAWS,
    PRINTED_ROUNDING,
    CurveFigure,
    HeatmapFigure,
    N,
    printed_rp,
)
from lnrecency.experiments.authors.ceiling import CEILING_BATCHES, EXPANSIONS
from lnrecency.experiments.authors.theory_columns import authors_h, limit_h
from lnrecency.files.figure_record import ReportFigure, colour_bar
from lnrecency.files.table_record import Table
from lnrecency.inference.stats import k_for
from lnrecency.model.config import ModelConfig


def panel_table(figs: list, runs: dict):
    cols = ("figure", "authors_file", "row", "d", "layer", "alpha", "layernorm", "residual", "lam", "gamma",
            "RP", "RP SE", "samples", "RP printed", "RP limit", "RP first order", "RP Edgeworth",
            "RP Edgeworth (Fisher z)", "z (MC - first order)", "z (MC - Edgeworth)")
    printed = printed_rp()
    rows = []
    for f in figs:
        if not isinstance(f, HeatmapFigure):
            continue
        theirs = printed.get(f.file) if f.rows[0].convention == "authors-v2" else None
        for q, (row, d, layer) in enumerate(itertools.product(f.rows, f.dims, f.layers)):
            run = runs[(row, d)]
            p = run.panel(layer)
            rows.append((f.key, f.file, row.label, d, layer, row.alpha, row.layernorm, row.residual, p.lam,
                         p.gamma, p.rp, p.rp_stderr, p.samples, theirs[q] if theirs else None,
                         p.rp_limit, p.rp_first_order, p.rp_edgeworth, p.rp_edgeworth_z, p.first_order_error_z,
                         run.sim.recency_probability(layer).zscore(p.rp_edgeworth)
                         if run.fw is not None else None))
    return Table("panels", "Recency probability of every panel (the authors' convention)",
                 "RP: over draws and triples j < k < i <= n, the fraction with S_ik > S_ij (the authors' "
                 "get_recency_prob); SE over draws. RP printed: the value on the authors' panel (10^7 draws). "
                 "RP limit / first order / Edgeworth: our theory with the parameters frozen at this d (lam = "
                 "sqrt(d) grows with d: not an expansion the width controls; z is its measured error in SE of "
                 "the Monte Carlo). Edgeworth: complete to O(d^-1/2) (lnrecency.theory.finite_width); not "
                 "clipped, so a value outside [0, 1] marks where it fails. Edgeworth (Fisher z): the same "
                 "expansion of z = atanh(S / S_ii), the same events (finite_width scale='fisher'; the scores "
                 "themselves without normalisation).", cols, rows, digits=5)


def theory_count(panels) -> tuple[Any, dict]:
    """How many of the printed RP values each theory predicts: |theory - printed| <= k SE_printed + 5e-5,
    SE_printed = (our per-draw spread) / sqrt(10^7) (their draws), 5e-5 their rounding, k for a family-wise
    rate of 1% over the printed panels (a theory equal to the exact finite-d RP misses any of them with
    probability <= 1%), and at k = 2. Returns (Table, {theory: count at the family-wise k})."""

    cols = list(panels.columns)
    rows = [dict(zip(cols, r)) for r in panels.rows]
    rows = [r for r in rows if r["RP printed"] is not None and np.isfinite(r["RP Edgeworth"])]
    if not rows:
        return Table("theory_count", "Printed RP predicted by theory", "no printed panels in this selection",
                     ("theory", "d", "panels", "within k_fw", "within 2"), []), {}
    k_fw = k_for(0.01 / len(rows))
    out, counts = [], {}
    for name in ("RP limit", "RP first order", "RP Edgeworth", "RP Edgeworth (Fisher z)"):
        for d in sorted({r["d"] for r in rows}) + ["all"]:
            sel = [r for r in rows if d == "all" or r["d"] == d]

            def hits(k):
                return sum(abs(r[name] - r["RP printed"]) <= k * r["RP SE"] * math.sqrt(r["samples"] / PRINTED_DRAWS)
                           + PRINTED_ROUNDING for r in sel)

            out.append((name.removeprefix("RP "), d, len(sel), hits(k_fw), hits(2.0)))
            if d == "all":
                counts[name.removeprefix("RP ")] = hits(k_fw)
    caption = (f"Printed RP values predicted within k SE_printed + 5e-5 (SE_printed: our per-draw spread over "
               f"sqrt(10^7), the authors' draws; 5e-5 their rounding), k_fw = {k_fw:.2f} (family-wise 1% over "
               f"{len(rows)} panels) and k = 2. The theories use no draw: limit (d -> infinity), first order "
               f"(mean + c/d, normal law), Edgeworth (+ the skewness term, complete to O(d^-1/2)), and the "
               f"Edgeworth expansion of Fisher's z = atanh(S / S_ii) (the same events).")
    return Table("theory_count", "Printed RP predicted by theory", caption,
                 ("theory", "d", "panels", "within k_fw", "within 2"), out), counts


def ceiling_tables(figs: list, runs: dict, ceilings: dict) -> tuple:
    """(per-panel table, count table) of the cumulant-expansion ceiling (:class:`Ceiling`) over the printed
    panels. Per panel and truncation: RP with the draws' own cumulants, its gap to RP of the same draws, and
    two decisions at a family-wise rate of 1% over the panels:

    * within: |RP_run + gap - printed| <= k_fw sqrt(SE_printed^2 + SE_run^2 + SE_gap^2) + 5e-5 (RP_run the
      panel's own run, independent of the ceiling's draws; :func:`theory_count`'s test with the estimate's
      SEs added) and not beyond: a theory of this order with every cumulant right would predict the printed
      value (with few draws the test is weak: large SEs pass it);
    * beyond: |gap| - k_t SE_gap > 2 (k_fw SE_printed + 5e-5), k_t the Student quantile for the batch-means
      SE: the printed value lies within k_fw SE_printed + 5e-5 of the exact RP (theory_count's premise), so
      a value this far from the exact RP misses it for certain (family-wise 2%: 1% for the gaps, 1% for the
      printed values).
    """
    printed = printed_rp()
    rows = []
    for f in figs:
        if not isinstance(f, HeatmapFigure) or f.file not in printed:
            continue
        for q, (row, d, layer) in enumerate(itertools.product(f.rows, f.dims, f.layers)):
            if (row, d) not in ceilings:
                continue
            c = ceilings[(row, d)][layer]
            rp = runs[(row, d)].sim.recency_probability(layer)
            rows.append({"figure": f.key, "authors_file": f.file, "row": row.label, "d": d, "layer": layer,
                         "RP printed": printed[f.file][q],
                         "SE printed": rp.stderr * math.sqrt(rp.samples / PRINTED_DRAWS), "RP run": rp.mean,
                         "RP run SE": rp.stderr, "RP": c.rp,
                         "RP SE": c.rp_stderr, **{f"{name}{part}": x for name in EXPANSIONS
                                                  for part, x in zip(("", " SE", " gap", " gap SE"),
                                                                     (*c.expansions[name], *c.gaps[name]))}})
    k_fw = k_for(0.01 / max(len(rows), 1))
    k_t = float(_student.ppf(1.0 - 0.005 / max(len(rows), 1), CEILING_BATCHES - 1))
    for r in rows:
        tol = k_fw * r["SE printed"] + PRINTED_ROUNDING
        for name in EXPANSIONS:
            spread = math.sqrt(r["SE printed"] ** 2 + r["RP run SE"] ** 2 + r[f"{name} gap SE"] ** 2)
            r[f"{name} beyond"] = bool(abs(r[f"{name} gap"]) - k_t * r[f"{name} gap SE"] > 2.0 * tol)
            r[f"{name} within"] = bool(abs(r["RP run"] + r[f"{name} gap"] - r["RP printed"])
                                       <= k_fw * spread + PRINTED_ROUNDING) and not r[f"{name} beyond"]
    cols = ("figure", "authors_file", "row", "d", "layer", "RP printed", "SE printed", "RP run", "RP run SE",
            "RP", "RP SE",
            *(f"{name}{part}" for name in EXPANSIONS
              for part in ("", " SE", " gap", " gap SE", " within", " beyond")))
    draws = next(iter(next(iter(ceilings.values())).values())).samples if ceilings else 0
    panel = Table("expansion_ceiling", "The ceiling of cumulant expansions (exact cumulants, no theory)",
                  f"Per printed panel, from {draws} draws per setting (independent of the panels' runs): RP, and "
                  f"RP by the normal law, the one-term and the two-term Edgeworth expansion built on each triple's "
                  f"own k-statistics k1..k4 of S_ik - S_ij (lnrecency.inference.stats.edgeworth_prob_positive). gap = "
                  f"truncation - RP of the same draws; SEs from {CEILING_BATCHES} independent batches. RP run: "
                  f"the panel's own run (panels table). within: |RP run + gap - printed| <= k_fw sqrt(SE_printed^2 "
                  f"+ SE_run^2 + SE_gap^2) + 5e-5 (k_fw = {k_fw:.2f}, family-wise 1%). beyond: |gap| - k_t SE_gap "
                  f"> 2 (k_fw SE_printed + 5e-5) (k_t = {k_t:.2f}, "
                  f"Student, {CEILING_BATCHES - 1} degrees of freedom, family-wise 1%): the truncation's own error "
                  f"at this width misses the printed value for certain; exact cumulants do not remove it.",
                  cols, [[r[c] for c in cols] for r in rows], digits=5)
    out = []
    for name in EXPANSIONS:
        for d in sorted({r["d"] for r in rows}) + ["all"]:
            sel = [r for r in rows if d == "all" or r["d"] == d]
            out.append((name, d, len(sel), sum(r[f"{name} within"] for r in sel),
                        sum(r[f"{name} beyond"] for r in sel)))
    count = Table("ceiling_count", "Printed RP predicted with exact cumulants",
                  f"How many printed RP values each truncation predicts when fed each triple's exact cumulants "
                  f"(estimated from {draws} draws per setting; expansion_ceiling has the tests): within k_fw = "
                  f"{k_fw:.2f} as in theory_count, and beyond for certain. The reference for a theory of the same "
                  f"truncation order that had every cumulant right.",
                  ("expansion", "d", "panels", "within k_fw", "beyond for certain"), out)
    return panel, count


def curve_table(figs: list):
    rows = []
    for f in figs:
        if not isinstance(f, CurveFigure):
            continue
        j = np.arange(1, N + 1)
        for a in (0.0, 0.2, 0.4, 0.6, 0.8):
            theirs = authors_h(j, a, f.residual, f.d)
            ours = limit_h(N, ModelConfig(norm="layernorm", residual=bool(f.residual), lam=math.sqrt(f.d), alpha=a))
            sim_gamma = math.sqrt(f.d * (1 - a)) if f.residual else None
            sim = limit_h(N, ModelConfig(norm="layernorm", residual=bool(f.residual), lam=math.sqrt(f.d), alpha=a,
                                         gamma=sim_gamma or 1.0))
            for jj in range(N):
                rows.append((f.key, f.file, a, int(j[jj]), float(theirs[jj]), float(ours[jj]),
                             float(abs(theirs[jj] - ours[jj]) / ours[jj]), sim_gamma,
                             float(sim[jj] / sim[0])))
    return Table("h_curves", "h(j): the authors' closed form beside our limit",
                 "h(j) = 1 / |h_j^(1)| after layer 1, LayerNorm, lam = sqrt(d) = 8. 'authors' transcribes "
                 "concept/alpha.ipynb; 'limit' is our recursion with the residual weight the closed form "
                 "uses (gamma = 1); the last column is our limit with the residual weight their *simulation* "
                 "uses (gamma = sqrt(d (1 - alpha))), normalised by its j = 1 value.",
                 ("figure", "authors_file", "alpha", "j", "h authors", "h limit (gamma = 1)",
                  "relative difference", "simulation gamma", "h / h(1) at simulation gamma"), rows, digits=6)


def _authors_heatmap(fig, ax, mat: np.ndarray, text: str, scale: str = "authors") -> str:
    """One panel. ``scale="authors"``: their style (_plot_heatmap): upper colour limit at the second-largest
    distinct value (the largest drawn white). ``scale="off-diagonal"`` (our theory panels): the colour scale
    spans the entries that carry the effect, j < i; the diagonal S_ii (larger) is drawn white above it, and a
    panel whose entries j < i are all equal (flat, e.g. layer 1) says so instead of a meaningless bar.
    Positions are 1-indexed (query i down, key j across). Colour map: matplotlib's 'magma' (theirs is
    seaborn's 'rocket', a close relative; seaborn is not a dependency here)."""

    cmap = matplotlib.colormaps["magma"].with_extremes(over="white", under="#bbbbbb")
    im = ax.imshow(mat, cmap=cmap, aspect="equal")
    if scale == "off-diagonal":
        below = mat[np.tril_indices(mat.shape[0], -1)]
        below = below[np.isfinite(below)]
        lo, hi = (float(below.min()), float(below.max())) if below.size else (0.0, 1.0)
        if hi - lo <= FLAT * max(1.0, abs(hi)):  # below float32 imaging and far below any effect shown here
            pad = 1e-3 * max(1.0, abs(lo))  # (a narrower band is lost in the image's float32 resampling)
            im.set_clim(lo - pad, hi + pad)
            text = f"flat: every j < i = {lo:.4g}\n" + text
            colour_bar(ax, im, ticks=[lo])  # one tick, the value
        else:
            im.set_clim(lo, hi)
            colour_bar(ax, im)
            text += f"\nscale: range {hi - lo:.2g}"
    else:
        vals = np.unique(mat[np.isfinite(mat)])
        if vals.size >= 2:
            im.set_clim(None, float(vals[-2]))
        colour_bar(ax, im)
    ticks = list(range(0, mat.shape[0], 3))
    ax.set_xticks(ticks, [str(t + 1) for t in ticks])
    ax.set_yticks(ticks, [str(t + 1) for t in ticks])
    return text


#: an off-diagonal range below this (relative) is drawn flat: float32 imaging cannot show it, and no effect
#: the panels compare is that small (the limit's recency gaps at the authors' settings are >= 1e-4)
FLAT = 1e-7


def heatmap_figures(f: HeatmapFigure, runs: dict) -> list:
    """Two figures per authors' file: the Monte Carlo panels (their style, RP +- SE) and, beside them,
    our limit for the same frozen parameters (limit RP, first-order RP)."""

    cols = [(d, layer) for d in f.dims for layer in f.layers]
    out = []
    for kind in ("mc", "theory"):
        fig = Figure(figsize=(2.9 * len(cols), 3.3 * len(f.rows)))
        axes = fig.subplots(len(f.rows), len(cols), squeeze=False)
        # room for each panel's colour bar and its labels (figure.colour_bar), and for its annotation above it
        fig.subplots_adjust(wspace=0.85, hspace=0.75)
        for r, row in enumerate(f.rows):
            for c, (d, layer) in enumerate(cols):
                run, ax = runs[(row, d)], axes[r, c]
                p = run.panel(layer)
                if kind == "mc":
                    mat, text = run.sim.mean[layer - 1], f"RP={p.rp:.4f}±{p.rp_stderr:.4f}"
                else:
                    mat = run.limit[layer - 1]
                    text = f"limit RP={p.rp_limit:.3f}" + (
                        f"\n1st-order RP={p.rp_first_order:.4f}" if run.fw is not None else "")
                text = _authors_heatmap(fig, ax, mat, text, "authors" if kind == "mc" else "off-diagonal")
                # the annotation above the panel, never over its data
                ax.set_title((f"d={d}, Layer {layer}\n" if r == 0 else "") + text, fontsize=9)
                if c == 0:
                    ax.set_ylabel(f"{row.label}\nquery i", fontsize=9)
                if r == len(f.rows) - 1:
                    ax.set_xlabel("key j", fontsize=9)
        what = (f"Monte Carlo mean scores, {f.rows[0].convention} convention" if kind == "mc" else
                "our d -> infinity limit at the same (frozen) parameters")
        how = (f"Samples {runs[(f.rows[0], f.dims[0])].sim.samples} per (row, d); the colour scale as in the "
               f"authors' code (its top at the second-largest value, the largest white)." if kind == "mc" else
               "Exact, no sampling. The colour scale spans the entries j < i, which carry the recency; the "
               "diagonal S_ii (larger) is drawn white above it; a panel whose entries j < i agree to 1e-7 is "
               "marked flat, and every other panel states its range (above the panel, with its RP).")
        out.append(ReportFigure(f"{f.file}" + ("" if kind == "mc" else "_theory"),
                                f"{f.file} ({what})",
                                f"Panels of the authors' {f.file}: {what}. {how} Positions 1-indexed.", fig))
    return out


def curve_figure(f: CurveFigure):
    fig = Figure(figsize=(11, 4.2))
    left, right = fig.subplots(1, 2)
    j = np.arange(1, N + 1)
    for a in (0.0, 0.2, 0.4, 0.6, 0.8):
        line, = left.plot(j, authors_h(j, a, f.residual, f.d), label=f"alpha={a:.1f}")
        ours = limit_h(N, ModelConfig(norm="layernorm", residual=bool(f.residual), lam=math.sqrt(f.d), alpha=a))
        left.plot(j, ours, "o", ms=3, color=line.get_color())
        if f.residual:
            sim = limit_h(N, ModelConfig(norm="layernorm", residual=True, lam=math.sqrt(f.d), alpha=a,
                                             gamma=math.sqrt(f.d * (1 - a))))
            right.plot(j, sim / sim[0], "--", color=line.get_color(), label=f"alpha={a:.1f}, gamma=sqrt(d(1-a))")
            ours = limit_h(N, ModelConfig(norm="layernorm", residual=True, lam=math.sqrt(f.d), alpha=a))
            right.plot(j, ours / ours[0], color=line.get_color())
    left.set_xlabel("$j$")
    left.set_ylabel("$h(j)$")
    left.legend(fontsize=9)
    left.set_title("authors' closed form (lines) and our limit (dots)", fontsize=10)
    if f.residual:
        right.set_title("h(j)/h(1): residual weight 1 (theory, solid) vs the simulation's (dashed)", fontsize=9)
        right.set_xlabel("$j$")
        right.legend(fontsize=9)
    else:
        right.axis("off")
    return ReportFigure(f.file, f"{f.file}: h(j), d = {f.d}",
                        f"h(j) = 1/|h_j^(1)|, LayerNorm, lam = sqrt(d) = {math.sqrt(f.d):g}"
                        + (", residual" if f.residual else ", no residual"), fig)
