"""C9 (our formulation): beyond the expectation. Layer 2, layernorm, lam = 1, alpha = 0, row i = 8.

  * rate in d: E_d S - S_lim = c/d + O(1/d^2) with c predicted by the finite-width theory (not fitted).
    Decided by the suite's mean checks (claims._common.theory_mean_checks) on every off-diagonal entry of
    the layer at d = 64, 128, 256: |MC - S_lim - c/d| <= k SE + R/d^2, R measured at d = 16 and 32 from
    the same runs (gram sampler with the c-free linear control variate, whose mean is exactly 0);
    and the exponent, without c: if b(d) = E_d S - S_lim = c/d + e(d)/d^2 with |e(d)| <= R (d >= 16), then d b(d)
    is constant up to R/d, so for every entry |d2 b(d2) - d1 b(d1)| <= R (1/d1 + 1/d2) + k SE (d1 = 64,
    d2 = 256; :func:`scaled_bias_test`). A bias decaying like d^(-p) with p != 1 breaks it: for p = 1/2,
    d b grows by the factor 2 between d1 and d2. The verdict needs both; the fitted log-log slope of |b| is
    reported beside them as evidence (its curvature from the next order is not bounded sharply enough at
    these widths to decide anything: R / |c| is 7-50 here).
    Settings: layer 2 without residual and layer 3 with residual, n = 6.
  * smallest d at which the expected ordering holds: numerics.smallest_d_for_ordering for S_{8,7} > S_{8,1}
    and for the adjacent pair S_{8,7} > S_{8,6}, one-sided at confidence 1 - PER_COMPARISON per width.
  * per instance: frequency of S_{8,7} > S_{8,6} in single draws, Clopper-Pearson intervals at EXACT_RATE:
    unreliable at practical widths (upper bound < 0.9 at d = 64) and near-certain at d = 10^4 (lower
    bound > 0.99).
"""
from __future__ import annotations

from dataclasses import dataclass

import matplotlib.ticker
import numpy as np
from matplotlib.figure import Figure

from lnrecency.claims.catalog import declared
from lnrecency.claims.declare import FigureOutput, TableOutput, claim
from lnrecency.claims.mc_checks import grouped, simulate, theory, theory_mean_checks
from lnrecency.claims.tables_and_plots import finish, records_with_settings, setting_summary, verdict_note
from lnrecency.files.figure_record import ReportFigure
from lnrecency.files.table_record import Table
from lnrecency.inference.evidence import Evidence, record
from lnrecency.inference.records import MeanChecks
from lnrecency.inference.stats import EXACT_RATE, PER_COMPARISON, clopper_pearson_interval, register
from lnrecency.model.config import ModelConfig, make_config
from lnrecency.numerics.convergence import convergence_in_d, smallest_d_for_ordering

ID = "C9"
RATE = declared(ID).text("rate")
FINITE = declared(ID).text("finite")
INSTANCE_LOW = declared(ID).text("instance_low")
INSTANCE_HIGH = declared(ID).text("instance_high")


@record
class WidthCheck(Evidence):
    """The mean checks at one width d: passed, the largest |z| against limit + c/d, the bound R/d^2."""

    d: int
    passed: bool
    max_abs_z_vs_c_over_d: float
    remainder_bound: float


@record
class ScaledBias(Evidence):
    """The exponent test: per entry, d2 b(d2) - d1 b(d1) against R (1/d1 + 1/d2) + k SE."""

    d1: int
    d2: int
    k: float
    entries: int
    max_excess: float  # max over entries of |difference| - allowance (<= 0: passed)
    worst_entry: tuple
    passed: bool


@record
class RateEvidence(Evidence):
    ds: list
    samples: int
    seed: int
    control_variate: str
    theory_checks: tuple[WidthCheck, ...]
    mean_checks: tuple[MeanChecks, ...]  # the checks themselves, entry by entry (d = 64, 128, 256)
    R: float
    scaled_bias: ScaledBias
    fitted_slope: float
    fitted_slope_se: float
    fit_entries: int


@record
class WidthOrdering(Evidence):
    """S_ij - S_ik at one width: mean, SE, z, whether the one-sided test holds, per-draw frequency."""

    d: int
    mean: float
    stderr: float
    z: float
    holds: bool
    prob_greater: float


@record
class SmallestWidth(Evidence):
    pair: str
    smallest_d: int | None
    confidence: float
    per_d: tuple[WidthOrdering, ...]
    reversed_at: tuple = ()  # widths where the ordering is significantly reversed


def decide_smallest_d(per_d, claimed: int | None, k: float) -> str:
    """The verdict on "the ordering holds in expectation at ``claimed`` and at every larger tested width, and
    at no smaller one", from one-sided paired tests (mean / SE against k) per width:
    refuted when it is significantly reversed at some width >= claimed, or already confirmed at a smaller one;
    confirmed when it is confirmed at every width >= claimed; inconclusive otherwise (or claimed None)."""
    if claimed is None:
        return "inconclusive"
    zs = {e.d: (e.mean / e.stderr if e.stderr > 0 else np.sign(e.mean) * np.inf) for e in per_d}
    above = [z for d, z in zs.items() if d >= claimed]
    if any(z < -k for z in above) or any(z > k for d, z in zs.items() if d < claimed):
        return "refuted"
    return "confirmed" if above and all(z > k for z in above) else "inconclusive"


@record
class Frequency(Evidence):
    """Per-draw frequency of an ordering with its Clopper-Pearson interval at ``rate``."""

    frequency: float
    count: int
    samples: int
    seed: int
    clopper_pearson: tuple
    rate: float


def scaled_bias_test(bias: np.ndarray, stderr: np.ndarray, ds, R: float, entries, *, name: str,
                     d1: int = 64, d2: int = 256) -> ScaledBias:
    """The c-free exponent test of the module docstring on bias / SE arrays (len(ds), n, n) of one layer."""
    q1, q2 = list(ds).index(d1), list(ds).index(d2)
    k = register(name, len(entries), sided=2, family=True)  # one decision over the entries (Bonferroni)
    worst, excess = None, -np.inf
    for i, j in entries:
        a, b = d1 * bias[q1, i - 1, j - 1], d2 * bias[q2, i - 1, j - 1]
        se = np.hypot(d1 * stderr[q1, i - 1, j - 1], d2 * stderr[q2, i - 1, j - 1])
        x = abs(b - a) - (R * (1.0 / d1 + 1.0 / d2) + k * se)
        if x > excess:
            worst, excess = (i, j), float(x)
    return ScaledBias(d1=d1, d2=d2, k=k, entries=len(entries), max_excess=excess, worst_entry=worst,
                      passed=bool(excess <= 0))


def rate_item(cfg: ModelConfig, n: int, layer: int, samples: int, seed: int, progress=None):
    ds = (16, 32, 64, 128, 256)
    # the c-free linear control variate (mean exactly 0): resolves c/d at every width without using c
    res = convergence_in_d(n, layer, ds, samples, seed=seed, config=cfg, progress=progress,
                           control_variate="linear")
    runs = dict(zip(res.ds, res.runs))
    fw = theory(cfg, n, layer)
    entries = [(i, j) for i in range(2, n + 1) for j in range(1, i)]
    label = f"C9 rate[{cfg.label()} layer {layer}]"
    checks = [theory_mean_checks(label, (runs[16], runs[32]), runs[d], fw, layer, entries) for d in (64, 128, 256)]
    r = checks[0].remainder_constant.R
    scaled = scaled_bias_test(res.bias[:, layer - 1], res.stderr[:, layer - 1], ds, r, entries,
                              name=f"{label} exponent")
    ok = all(ch.passed for ch in checks) and scaled.passed
    fit = res.fit_rate(layer)
    ev = RateEvidence(ds=list(ds), samples=samples, seed=seed, control_variate="linear",
                      theory_checks=tuple(WidthCheck(d=ch.d, passed=ch.passed, max_abs_z_vs_c_over_d=ch.max_abs_z,
                                                     remainder_bound=ch.remainder_bound) for ch in checks),
                      mean_checks=tuple(checks), R=r, scaled_bias=scaled, fitted_slope=fit.slope,
                      fitted_slope_se=fit.stderr, fit_entries=fit.entries)
    return ({**cfg.as_dict(), "layer": layer, "n": n}, "confirmed" if ok else "refuted", ev)


# ---- the claim's report tables, figures and notebook cells ----------------------------------------

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


@claim(ID,
       tables=(TableOutput("c9_per_instance", "per-instance P(S_(n,n-1) > S_(n,1)) against d", instance_table),
               TableOutput("c9_convergence_in_d", "E_d[S] - S_limit against d, fitted slope", convergence_table)),
       figures=(FigureOutput("finite-d convergence, log-log with fitted slope", convergence_figures,
                             ("convergence_in_d",)),),
       notebook="04_deeper_layers_and_finite_width",
       cells=(instance_table, convergence_table, convergence_figures))
def evaluate(*, quick: bool = False, progress=None, seed: int = 20260909) -> list:
    cfg = ModelConfig(norm="layernorm")
    samples = 10000 if quick else 20000
    out = []
    rate = [rate_item(cfg, 6, 2, samples, seed, progress)]
    if not quick:
        rate.append(rate_item(cfg.replace(residual=True), 6, 3, samples, seed + 1, progress))
    out += grouped(ID, RATE, {"measure": "E_d S^(l)_ij - S_lim"}, rate)

    finite = []
    for j, kk in ((7, 1), (7, 6)):
        k = register(f"C9 smallest d[{j} vs {kk}]", 7 * 2, sided=1)  # both directions at each width
        s = smallest_d_for_ordering(2, 8, j, kk, ds=(2, 4, 8, 16, 32, 64, 256), samples=samples, seed=seed + j + kk,
                                    confidence=1 - PER_COMPARISON, config=cfg, progress=progress)
        per_d = tuple(WidthOrdering(d=e.d, mean=e.difference.mean, stderr=e.difference.stderr, z=e.zscore,
                                    holds=bool(e.holds), prob_greater=e.prob_greater.estimate) for e in s.evidence)
        ev = SmallestWidth(pair=f"S_8,{j} > S_8,{kk}", smallest_d=s.d, confidence=s.confidence, per_d=per_d,
                           reversed_at=tuple(e.d for e in per_d if e.z < -k))
        finite.append(({**cfg.as_dict(), "layer": 2, "i": 8, "j": j, "k": kk}, decide_smallest_d(per_d, s.d, k), ev))
    out += grouped(ID, FINITE, {"layer": 2}, finite,
                   lambda v, g: "; ".join(f"{e.pair}: d* = {e.smallest_d} (widths 2..256"
                                          + (f"; reversed at d = {list(e.reversed_at)}" if e.reversed_at else "")
                                          + ")" for _, e in g) + ".")

    rate = EXACT_RATE
    register("C9 per-instance Clopper-Pearson intervals", 2, rate=rate, basis="exact")
    for d, statement, test in ((64, INSTANCE_LOW, lambda lo, hi: hi < 0.9),
                               (10 ** 4, INSTANCE_HIGH, lambda lo, hi: lo > 0.99)):
        sim = simulate(8, 2, d, samples, seed + d, cfg, progress)
        p = sim.prob_greater(2, 8, 7, 6)
        lo, hi = clopper_pearson_interval(p.count, p.samples, rate=rate)
        ok = test(lo, hi)
        opposite = (lo >= 0.9) if d == 64 else (hi <= 0.99)
        v = "confirmed" if ok else ("refuted" if opposite else "inconclusive")
        out += grouped(ID, statement, {"layer": 2},
                       [({**cfg.as_dict(), "d": d, "i": 8, "j": 7, "k": 6}, v,
                         Frequency(frequency=p.estimate, count=p.count, samples=p.samples, seed=seed + d,
                                   clopper_pearson=(lo, hi), rate=rate))])
    return out
