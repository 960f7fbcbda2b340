"""What C9 shows in the report and the notebooks: tables, figures and notebook cells (the claim:
:mod:`lnrecency.claims.parameter_free.c9_finite_width`)."""
from __future__ import annotations

from dataclasses import dataclass

import matplotlib.ticker
import numpy as np
from matplotlib.figure import Figure

from lnrecency.claims.parameter_free.c9_finite_width import ID, Frequency, RateEvidence, SmallestWidth
from lnrecency.files.figure_record import ReportFigure
from lnrecency.files.table_record import Table
from lnrecency.model.config import make_config
from lnrecency.report.views.outputs import FigureOutput, TableOutput, views
from lnrecency.report.views.shared import finish, records_with_settings, setting_summary, verdict_note


def instance_table(data) -> Table:
    """C9: the verdict's per-draw evidence: per width, the paired mean S_8j - S_8k with its one-sided test and the
    frequency of S_8j > S_8k in single draws (the smallest-d search), and the Clopper-Pearson intervals of the
    per-instance statements at d = 64 and 10^4."""
    columns = ["statement", "pair", "d", "mean S_ij - S_ik", "SE", "z", "holds in expectation",
               "P(S_ij > S_ik) per draw", "CP low", "CP high", "verdict"]
    rows = []
    results = data.results(ID)
    for r, where, ev in records_with_settings(results, SmallestWidth):
        for e in ev.per_d:
            rows.append([f"smallest d (d* = {ev.smallest_d})", ev.pair, e.d, e.mean, e.stderr, e.z, e.holds,
                         e.prob_greater, None, None, r.verdict])
    for r, where, ev in records_with_settings(results, Frequency):
        lo, hi = ev.clopper_pearson
        rows.append([r.statement, f"S_{where['i']},{where['j']} > S_{where['i']},{where['k']}", where["d"], None,
                     None, None, None, ev.frequency, lo, hi, r.verdict])
    caption = ("Beyond the expectation (the verdict's own runs, lnrecency verify): for the layer-2 scores of row 8 "
               "(LayerNorm, lam = 1), per width d the paired Monte Carlo mean of S_8j - S_8k with its SE, z and "
               "one-sided test (the search for the smallest d at which the ordering holds in expectation), beside "
               "the frequency with which a single draw orders the pair that way; then the per-instance statements "
               "at d = 64 and 10^4 with their Clopper-Pearson intervals at the stated rate.")
    return Table("c9_per_instance", "C9. Per-instance ordering probability against d", caption, columns,
                 rows, verdict_note(data, ID))


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


def convergence_curve(data) -> ConvergenceCurve:
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


def convergence_table(data) -> Table:
    """C9: the verdict's rate evidence entry by entry: E_d[S] - S_limit against the predicted c/d at d = 64, 128,
    256 (within k SE + R/d^2, R measured at d = 16 and 32), and the fitted log-log slope."""
    columns = ["setting", "layer", "d", "i", "j", "limit", "c", "MC", "SE", "bias MC - limit", "c/d",
               "z* = (bias - c/d)/SE", "tolerance", "result"]
    rows, notes = [], []
    for r, where, ev in records_with_settings(data.results(ID), RateEvidence):
        label = setting_summary(where, None)
        notes.append(f"{label}: fitted slope {ev.fitted_slope:.6g} +- {ev.fitted_slope_se:.3g} over "
                     f"{ev.fit_entries} entries (O(1/d) means -1); R = {ev.R:.4g}; c-free exponent test "
                     f"{'passed' if ev.scaled_bias.passed else 'FAILED'}; {ev.samples} samples per d, seed "
                     f"{ev.seed}, {ev.control_variate} control variate.")
        for m in ev.mean_checks:
            for e in m.checks:
                ch = e.check
                rows.append([label, m.layer, m.d, e.i, e.j, e.limit, e.c, ch.estimate, ch.stderr,
                             ch.estimate - e.limit, e.c / m.d, ch.z, ch.tolerance, "pass" if ch.passed else "FAIL"])
    caption = ("Finite-width bias E_d[S] - S_limit of every lower-triangle entry (i, j) of the verdict's layer, "
               "from the verdict's own runs (lnrecency verify): Monte Carlo mean and SE, the bias, the first-order "
               "prediction c/d of the finite-width theory (no fit), z* = (MC - limit - c/d)/SE and the check "
               "|MC - limit - c/d| <= k SE + R/d^2. The notes give the fitted common slope of log|bias| against "
               "log d and the c-free exponent test.")
    return Table("c9_convergence_in_d", "C9. Convergence of the finite-d expectation to the limit", caption,
                 columns, rows, notes + verdict_note(data, ID))


def convergence_figure(data) -> ReportFigure:
    conv = convergence_curve(data)
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
    finish(fig, ax, title, "width d", "|E_d[S] - S_limit|")
    caption = (f"Log-log plot of the finite-width bias |E_d[S] - S_limit| of two layer-2 scores of the last row "
               f"({conv.label}, n = {conv.n}) against d: Monte Carlo mean +- SE ({data.settings.conv_samples} "
               f"samples per d). Lines: the common slope fitted over {conv.fit_entries} resolved layer-2 "
               f"entries ({conv.fit_points} points), {conv.slope:.3f} +- {conv.slope_se:.3f}, drawn through "
               f"each entry's best-resolved point; O(1/d) means slope -1. Dashed: the bias |c|/d predicted "
               f"by the finite-width theory (lnrecency finite-width), not fitted to the points. The points are "
               f"the report's own illustration runs; the verdict's are in the c9_convergence_in_d table.")
    return ReportFigure("convergence_in_d", title, caption, fig)


def convergence_figures(data) -> list[ReportFigure]:
    return [convergence_figure(data)]


views(ID, module=__name__,
      tables=(TableOutput("c9_per_instance", "per-instance P(S_(n,n-1) > S_(n,1)) against d", instance_table),
               TableOutput("c9_convergence_in_d", "E_d[S] - S_limit against d, fitted slope", convergence_table)),
      figures=(FigureOutput("finite-d convergence, log-log with fitted slope", convergence_figures,
                             ("convergence_in_d",)),),
      notebook="04_deeper_layers_and_finite_width",
      cells=(instance_table, convergence_table, convergence_figures))
