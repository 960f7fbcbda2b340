"""Curves shared by the tables and the figures: theory (exact limit) beside Monte Carlo (mean, SE).

Each function reads a :class:`~lnrecency.report.data.ReportData` and returns plain arrays; no model
arithmetic happens here beyond picking entries of library results.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from lnrecency.config import ModelConfig, make_config
from lnrecency.report.data import ReportData

__all__ = ["Curve", "VarianceCurve", "ConvergenceCurve", "HEATMAP_NORMS", "heatmap_configs", "h_curves",
           "gap_curves", "output_norm_curves", "variance_curve", "convergence_curve", "CONVERGENCE_CONFIG"]


@dataclass(frozen=True)
class Curve:
    """One labelled curve: theory y(x) on a grid, Monte Carlo points (x, mean, SE) where they exist."""

    label: str
    x: np.ndarray
    y: np.ndarray
    mc_x: np.ndarray | None = None
    mc_mean: np.ndarray | None = None
    mc_se: np.ndarray | None = None


def _cfg(**params: Any) -> ModelConfig:
    return make_config(None, **params)


def HEATMAP_NORMS(d: int) -> list[tuple[str, dict]]:
    """The four normalisation variants of the heatmaps (LayerNorm at lam = 1 and lam = sqrt(d))."""
    return [("no normalisation", dict(norm="none")), ("l2", dict(norm="l2")),
            ("LayerNorm, lam = 1", dict(norm="layernorm", lam=1.0)),
            (f"LayerNorm, lam = sqrt({d})", dict(norm="layernorm", lam=float(np.sqrt(d))))]


def heatmap_configs(data: ReportData, variant: dict, residual: bool) -> list[ModelConfig]:
    return [_cfg(residual=residual, alpha=a, **variant) for a in data.settings.alphas]


def h_curves(data: ReportData, residual: bool) -> list[Curve]:
    """h(j)^2 = |x_j^(1)|^2 over j = 1..h_n for every alpha (LayerNorm, lam = 1, gamma = 1).

    Theory: diagonal of the limit's G^(2). Monte Carlo (no residual only, where h(j)^2 = |o_j|^2):
    mean and SE of the layer-1 output's squared length at d = ds[-1].
    """
    s = data.settings
    n = s.h_n
    j = np.arange(1, n + 1)
    curves = []
    for a in s.alphas:
        c = _cfg(norm="layernorm", residual=residual, alpha=a)
        h2 = np.diagonal(data.limit(c, n=n, layers=1).layers[0].next_gram).copy()
        if residual:
            curves.append(Curve(f"alpha = {a:g}", j, h2))
            continue
        sim = data.sim(c, s.ds[-1], n=n, layers=1, paired=False)
        curves.append(Curve(f"alpha = {a:g}", j, h2, j, sim.output_sq_norm_mean[0],
                            sim.output_sq_norm_stderr[0]))
    return curves


GAP_GRID = np.round(np.arange(0.0, 0.951, 0.05), 10)


def gap_curves(data: ReportData) -> list[Curve]:
    """Layer-2 gap S_{n,n-1} - S_{n,1} against alpha (LayerNorm, lam = 1), without and with residual.

    Theory on a fine alpha grid; Monte Carlo paired differences at d = ds[-1] for ``settings.alphas``.
    """
    s = data.settings
    n, d = s.n, s.ds[-1]
    curves = []
    for residual in (False, True):
        y = []
        for a in GAP_GRID:
            sc = data.limit(_cfg(norm="layernorm", residual=residual, alpha=float(a)), layers=2).scores
            y.append(sc[1, n - 1, n - 2] - sc[1, n - 1, 0])
        ests = [data.sim(_cfg(norm="layernorm", residual=residual, alpha=a), d).paired_difference(
            2, n, n - 1, 1) for a in s.alphas]
        curves.append(Curve("residual" if residual else "no residual", GAP_GRID, np.array(y),
                            np.array(s.alphas), np.array([e.mean for e in ests]),
                            np.array([e.stderr for e in ests])))
    return curves


def output_norm_curves(data: ReportData) -> list[Curve]:
    """|o_i|^2 of layer 1 against the position i (LayerNorm, alpha = 0): limit, MC at each d."""
    s = data.settings
    c = _cfg(norm="layernorm")
    n = max(s.lengths)
    i = np.arange(1, n + 1)
    theory = data.limit(c, n=n, layers=1).layers[0].output_norms ** 2
    curves = []
    for d in (s.ds[0], s.ds[-1]):
        sim = data.sim(c, d, n=n, layers=2, paired=False)
        curves.append(Curve(f"d = {d}", i, theory, i, sim.output_sq_norm_mean[0],
                            sim.output_sq_norm_stderr[0]))
    return curves


@dataclass(frozen=True)
class VarianceCurve:
    lengths: np.ndarray
    limit_plain: np.ndarray
    limit_post: np.ndarray
    mc_plain: np.ndarray
    se_plain: np.ndarray
    mc_post: np.ndarray
    se_post: np.ndarray
    d: int


def variance_curve(data: ReportData, d: int) -> VarianceCurve:
    """Seed 003: d * (per-coordinate variance) of the layer-1 attention output at the last position,
    against the sequence length, without and with a LayerNorm right after attention.

    Causal attention makes position L of a long sequence the last position of a length-L sequence, so
    one run at n = max(lengths) gives every length. Without post-norm: ``output_var_mean`` of layer 1
    (limit: |o_L|^2, the output Gram's diagonal). With post-norm the variance is that of LN(o_L), which
    is the layer-2 diagonal score S^(2)_LL / lam of the same run (limit: the normalised Gram's diagonal).
    """
    s = data.settings
    c = _cfg(norm="layernorm")
    n = max(s.lengths)
    idx = np.array(s.lengths) - 1
    traj = data.limit(c, n=n, layers=2)
    sim = data.sim(c, d, n=n, layers=2, paired=False)
    lam = float(c.lam)
    return VarianceCurve(
        np.array(s.lengths), np.diagonal(traj.layers[0].output_gram)[idx],
        np.diagonal(traj.layers[1].normalised_gram)[idx],
        d * sim.output_var_mean[0, idx], d * sim.output_var_stderr[0, idx],
        np.diagonal(sim.mean[1])[idx] / lam, np.diagonal(sim.stderr[1])[idx] / lam, d)


CONVERGENCE_CONFIG = make_config(None, norm="layernorm")


@dataclass(frozen=True)
class ConvergenceCurve:
    """Bias E_d[S] - S_limit of the layer-2 last-row entries against d, and the common fitted slope.

    ``entries``: j -> (bias, SE) over ``ds`` for S^(2)_{n,j}; ``fitted``: j -> the line of the fitted
    slope through that entry's best-resolved point (largest |bias|/SE), for drawing; ``c``: j -> the
    finite-width theory's 1/d coefficient (the predicted bias is c/d, no fit).
    """

    label: str
    quantity: str
    n: int
    ds: np.ndarray
    entries: dict
    fitted: dict
    slope: float
    slope_se: float
    fit_entries: int
    fit_points: int
    c: dict


def convergence_curve(data: ReportData) -> ConvergenceCurve:
    """:func:`numerics.convergence.convergence_in_d` for LayerNorm, alpha = 0, lam = 1, and its
    ``fit_rate(layer=2)`` (common slope of log|bias| against log d over every resolved layer-2 entry)."""
    s = data.settings
    conv = data.convergence(CONVERGENCE_CONFIG)
    fit = conv.fit_rate(layer=2)
    n = s.conv_n
    ds = np.asarray(conv.ds, dtype=float)
    entries, fitted = {}, {}
    for j in (1, n - 1):
        b, se = conv.bias[:, 1, n - 1, j - 1], conv.stderr[:, 1, n - 1, j - 1]
        entries[j] = (b, se)
        k = int(np.argmax(np.abs(b) / se))
        fitted[j] = np.abs(b[k]) * (ds / ds[k]) ** fit.slope
    coef = data.finite_width(CONVERGENCE_CONFIG, n=n, layers=2).c[1, n - 1]
    return ConvergenceCurve(CONVERGENCE_CONFIG.label(), f"the layer-2 scores (n = {n})", n, ds, entries,
                            fitted, fit.slope, fit.stderr, fit.entries, fit.points,
                            {j: float(coef[j - 1]) for j in entries})
