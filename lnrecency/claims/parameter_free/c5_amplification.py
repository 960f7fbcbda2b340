"""C5 (seed text: "embedding anisotropy can amplify it"): in which sense does alpha amplify the layer-2
recency bias? Established, not assumed, by signs and roots of the exact limit (theory/anisotropy.py):
the sign of Delta'(0), the maximisers of Delta (roots of Delta'), and the set of alpha where
Delta(alpha) > Delta(0) (ends by root finding). A grid alpha = 0, 0.01, ..., 0.99 is kept as context only.

Gap measures of row n at layer 2 (normalised model):
  absolute  Delta(alpha)  = S_{n,n-1} - S_{n,1} = log(P_{n,n-1} / P_{n,1})  (attention-weight ratio);
  relative  Delta / S_{n,1};
  spread    Delta / (S_{n,n} - S_{n,1})  (share of the row's range reached below the diagonal).
Two statements per measure: "can amplify" (some alpha > 0 has a larger gap than alpha = 0: the seed's
words) and "amplifies monotonically" (the gap increases on the whole grid: our stronger formulation, counted
apart from the seed's statements; the seed never says it). Settings: residual off / on (gamma = 1),
lam in {1, 8}, n in {8, 64}. Monte Carlo (d = 10^12: implementation consistency, the sign of the limit; independent
runs, SE in quadrature, one-sided):
Delta(0.1) > Delta(0) and Delta(0.9) < Delta(0) for lam = 1, no residual, n = 8.

In the authors' own per-instance measure: RP (recency probability of layer 2, lnrecency.experiments.authors.reproduce)
in the
authors-v2 convention at the widths they simulate (d = 16, 64), alpha = 0, 0.2, .., 0.8, LayerNorm with
and without residual; adjacent alphas compared one-sided with the empirical Bernstein bound (per-draw RP
lies in [0, 1]; non-asymptotic, rate EXACT_RATE each; the two estimates are independent, so the
difference exceeds the sum of their one-sided half-widths at rate / 2 each).
"""
from __future__ import annotations

import math
from itertools import product
from typing import TYPE_CHECKING

import numpy as np

from lnrecency.claims.catalog import declared
from lnrecency.claims.declare import claim
from lnrecency.claims.mc_checks import gap_comparison, grouped, setting
from lnrecency.inference.evidence import Evidence, item, ladder, record
from lnrecency.inference.qualifiers import Qualifiers
from lnrecency.inference.records import GapComparison
from lnrecency.inference.stats import EXACT_RATE, bernstein_halfwidth, register
from lnrecency.inference.verdicts import combine
from lnrecency.model.authors_presets import preset
from lnrecency.model.config import ModelConfig
from lnrecency.numerics import simulate_scores
from lnrecency.theory.anisotropy import decide_alpha
from lnrecency.theory.limit import limit_scores

if TYPE_CHECKING:  # annotation only (the theory is imported where it is used)
    from lnrecency.theory.anisotropy import AlphaDecision

ID = "C5"
MEASURES = ("absolute", "relative", "spread")
CAN_AMPLIFY = ("Anisotropy can amplify the layer-2 recency bias ({measure} gap: some alpha > 0 gives a larger gap "
               "than alpha = 0).")
GROWS = "The layer-2 recency bias grows with alpha on all of [0, 1) ({measure} gap increasing in alpha)."
RP_AMPLIFIES = declared(ID).text("rp_amplifies")
GRID = tuple(round(0.01 * q, 2) for q in range(100))


@record
class GridProfile(Evidence):
    """The gap on a grid of alpha: context only (the decisions are by signs and roots)."""

    gap_alpha0: float
    argmax_alpha: float
    max_gap: float
    max_ratio: float
    alphas_amplified: list  # [min, max] of the grid points above alpha = 0, or []
    amplified_fraction_of_grid: float
    monotone_increasing: bool
    gap_alpha_0_99: float = item(key="gap_alpha_0.99")
    samples: dict  # {alpha: gap} at alpha = 0, 0.1, .., 0.9


@record
class CanAmplifyEvidence(Evidence):
    exact: AlphaDecision
    grid_context: GridProfile
    mc_up: GapComparison | None = item(omit_none=True)
    mc_down: GapComparison | None = item(omit_none=True)

    @property
    def verdict(self) -> str:
        """Decided here once (the evaluator reads it; a stored row is re-decided by it): amplified in the exact
        limit, the Monte Carlo step up, where run, only able to take it back."""
        v = ladder(self.exact.amplified)
        return "inconclusive" if v == "confirmed" and self.mc_up is not None and self.mc_up.verdict != "confirmed" \
            else v


@record
class GrowsEvidence(Evidence):
    exact: AlphaDecision

    @property
    def verdict(self) -> str:
        return ladder(self.exact.increasing)


@record
class RPStep(Evidence):
    """Adjacent alphas: RP(alpha_hi) - RP(alpha_lo) against the sum of one-sided Bernstein half-widths."""

    JSON_PROPERTIES = ("verdict",)

    alpha_lo: float
    alpha_hi: float
    difference: float
    bernstein_threshold: float

    @property
    def verdict(self) -> str:
        t = self.bernstein_threshold
        return ladder(self.difference > t, opposite=self.difference < -t)


@record
class RPByAlpha(Evidence):
    JSON_PROPERTIES = ("verdict",)

    d: int
    residual: bool
    samples: int
    alphas: list
    rp: list
    rp_stderr: list
    steps: tuple[RPStep, ...]

    @property
    def verdict(self) -> str:
        return combine([st.verdict for st in self.steps])


def gap(n: int, cfg: ModelConfig, measure: str) -> float:
    s = limit_scores(n, 2, config=cfg)[1, n - 1]
    delta = s[n - 2] - s[0]
    if measure == "absolute":
        return float(delta)
    if measure == "relative":
        return float(delta / abs(s[0]))
    return float(delta / (s[n - 1] - s[0]))


def profile(n: int, cfg: ModelConfig, measure: str, grid=GRID) -> GridProfile:
    vals = np.array([gap(n, cfg.replace(alpha=a), measure) for a in grid])
    base = vals[0]
    above = [a for a, v in zip(grid, vals) if v > base and a > 0]
    best = int(np.argmax(vals))
    return GridProfile(gap_alpha0=float(base), argmax_alpha=grid[best], max_gap=float(vals[best]),
                       max_ratio=float(vals[best] / base), alphas_amplified=[min(above), max(above)] if above else [],
                       amplified_fraction_of_grid=len(above) / (len(grid) - 1),
                       monotone_increasing=bool(np.all(np.diff(vals) > 0)), gap_alpha_0_99=float(vals[-1]),
                       samples={str(a): float(v) for a, v in zip(grid, vals) if round(a * 10) == a * 10})


def mc_gap_compare(cfg: ModelConfig, a_hi: float, a_lo: float, n: int = 8, *, samples: int, seed: int,
                   d: int = 10 ** 12, progress=None) -> GapComparison:
    """One-sided MC test of Delta(a_hi) > Delta(a_lo) (absolute gap, row n), independent runs."""
    k = register(f"C5[{cfg.label()}]: Delta({a_hi}) > Delta({a_lo}) at d={d}", 1, sided=1)
    hi, lo, o = gap_comparison(cfg.replace(alpha=a_hi), cfg.replace(alpha=a_lo), n, k=k, samples=samples,
                               seeds=(seed, seed + 1), d=d, progress=progress)
    return GapComparison(claim=f"Delta(alpha={a_hi}) > Delta(alpha={a_lo})", d=d, samples=samples, seed=seed,
                         gaps={f"gap_{a_hi}": hi.mean, f"gap_{a_lo}": lo.mean}, check=o)


def rp_by_alpha(residual: bool, d: int, *, samples: int, seed: int, progress=None,
                alphas=(0.0, 0.2, 0.4, 0.6, 0.8)) -> RPByAlpha:
    """Layer-2 RP at each alpha (authors-v2 convention at width d) and the one-sided empirical Bernstein
    comparisons of adjacent alphas."""

    register(f"C5 RP[{'res' if residual else 'nores'} d={d}]: adjacent alphas", len(alphas) - 1, basis="exact")
    est = []
    for m, a in enumerate(alphas):
        cfg = preset("authors-v2", norm="layernorm", residual=residual, alpha=a, d=d)
        sim = simulate_scores(10, 2, d, samples, seed=(seed, m, d, int(residual)), method="gram", config=cfg,
                              progress=progress)
        est.append(sim.recency_probability(2))
    steps = []
    for (a0, e0), (a1, e1) in zip(zip(alphas, est), zip(alphas[1:], est[1:])):
        half = sum(bernstein_halfwidth(e.stderr, e.samples, 1.0, rate=EXACT_RATE / 2, sided=1) for e in (e0, e1))
        steps.append(RPStep(alpha_lo=a0, alpha_hi=a1, difference=e1.mean - e0.mean, bernstein_threshold=half))
    return RPByAlpha(d=d, residual=residual, samples=samples, alphas=list(alphas), rp=[e.mean for e in est],
                     rp_stderr=[e.stderr for e in est], steps=tuple(steps))


def step_by_a_hair(ev: RPByAlpha, k: int) -> bool:
    """Whether step ``k`` of ``ev`` is decided by a hair: its verdict turns when the false-alarm rate of its Bernstein
    threshold is halved or doubled (:data:`lnrecency.inference.qualifiers.HAIR`, the plan tests' factor on their
    level, applied to the rate), i.e. |difference| lies between the thresholds at those two rates."""
    from lnrecency.inference.qualifiers import HAIR

    def threshold(rate: float) -> float:
        return sum(bernstein_halfwidth(ev.rp_stderr[j], ev.samples, 1.0, rate=rate / 2, sided=1) for j in (k, k + 1))
    return threshold(EXACT_RATE * HAIR) <= abs(ev.steps[k].difference) <= threshold(EXACT_RATE / HAIR)


def _interval_finding(verdict: str, group) -> str:
    parts = []
    for st, ev in group:
        dec = ev.exact
        where = f"n={st['n']}, lam={st['lam']:g}, {'residual' if st['residual'] else 'no residual'}"
        if dec.amplified:
            spans = " and ".join(f"({a:.4g}, {b:.4g}" + ("], the end of the searched range" if b >= 0.999 else ")")
                                 for a, b in dec.amplified)
            best = (f"; maximiser alpha* = {dec.maximisers[0]:.4g}" if dec.maximisers else "")
            parts.append(f"{where}: amplified for alpha in {spans}{best}; Delta'(0) = {dec.slope_at_zero:.4g}")
        else:
            parts.append(f"{where}: Delta'(0) = {dec.slope_at_zero:.4g} < 0, Delta(alpha) < Delta(0) "
                         f"on all of (0, 0.999]")
    return "; ".join(parts) + "."


def _lams(group) -> str:
    """'relative gap, lam 1': the measure and the lams a group covers."""
    lams = sorted({st["lam"] for st, _ in group})
    measures = sorted({st["measure"] for st, _ in group})
    return f"{' and '.join(measures)} gap, lam " + " and ".join(f"{x:g}" for x in lams)


def _interval_qualifiers(verdict: str, group) -> Qualifiers:
    """Can anisotropy amplify (issue 75): where it can, up to which alpha; where it cannot, that the gap falls."""
    if verdict == "confirmed":  # each setting's amplifying range ends somewhere: the first and the last of those ends
        ends = [max(b for _, b in ev.exact.amplified) for _, ev in group]
        span = (f"up to alpha {min(ends):.3g}" if min(ends) == max(ends) else
                f"ending between alpha {min(ends):.2g} and {max(ends):.3g} by setting")
        return Qualifiers(where=_lams(group), settings=len(group), exact=True,
                          holds=f"in {len(group)} settings, some alpha > 0 above alpha 0's gap, {span}")
    return Qualifiers(where=_lams(group), settings=len(group), exact=True,
                      fails=f"in {len(group)} settings: the gap falls as soon as alpha leaves 0")


def _monotone_qualifiers(verdict: str, group) -> Qualifiers:
    """Does the gap grow on all of [0, 1): where not, the largest alpha where it turns."""
    if verdict == "confirmed":
        return Qualifiers(where=_lams(group), settings=len(group), exact=True,
                          holds=f"in {len(group)} settings, the gap rising over all of [0, 0.999]")
    turns = [ev.exact.maximisers[0] for _, ev in group if ev.exact.maximisers]
    return Qualifiers(where=_lams(group), settings=len(group), exact=True,
                      fails=f"in {len(group)} settings: turns down" + (
                          f" by alpha {math.ceil(max(turns) * 100) / 100:.2f}" if turns else "") + (
                          ", or falls from 0" if len(turns) < len(group) else ""))


def _rp_qualifiers(verdict: str, group) -> Qualifiers:
    """RP along alpha at the authors' widths: from what to what, and why a width is not decided."""
    words = ", ".join(f"d = {s['d']}{' with the residual' if s['residual'] else ''}" for s, _ in group)
    widths = sorted({s["d"] for s, _ in group})
    lo = min(e.rp[0] for _, e in group)
    ends = sorted(e.rp[-1] for _, e in group)
    # the range of the settings' ends, not the largest alone (a reader reads "to 0.85" as every setting's end)
    end = f"{ends[0]:.2f}" if f"{ends[0]:.2f}" == f"{ends[-1]:.2f}" else f"{ends[0]:.2f}-{ends[-1]:.2f}"
    residual = sorted({s["d"] for s, _ in group if s["residual"]})
    hairs = [(s, e, k) for s, e in group for k in range(len(e.steps)) if step_by_a_hair(e, k)]
    # in a row of several settings, the settings where it was by a hair (the rest of the row was not; the finding
    # names the step)
    hair_at = " and ".join(dict.fromkeys(f"d = {s['d']}, {'residual' if s['residual'] else 'no residual'}"
                                         for s, _, _ in hairs)) if len(group) > 1 else ""
    # the settings by their widths (d = 16 and 64) and residuals, never a count of settings called widths
    return Qualifiers(where=words if len(group) == 1 else
                      f"d = {' and '.join(map(str, widths))}, {len(group)} settings"
                      + (f" (the residual at d = {' and '.join(map(str, residual))} only)"
                         if residual and residual != widths else " with and without the residual"),
                      holds=(f"as RP rises from {lo:.2f} (alpha 0) to {end} (alpha 0.8)" if verdict == "confirmed"
                             else ""),
                      reason="not significant" if verdict == "inconclusive" else "",
                      fails="" if verdict != "refuted" else "RP falls between adjacent alphas", hair=bool(hairs),
                      hair_at=hair_at)


def _monotone_finding(verdict: str, group) -> str:
    parts = []
    for st, ev in group:
        dec = ev.exact
        where = f"n={st['n']}, lam={st['lam']:g}, {'residual' if st['residual'] else 'no residual'}"
        if verdict == "confirmed":
            parts.append(f"{where}: Delta' > 0 on [0, 0.999] (no root)")
        elif dec.maximisers:
            parts.append(f"{where}: increases up to alpha* = {dec.maximisers[0]:.4g}, then decreases")
        else:
            parts.append(f"{where}: Delta'(0) = {dec.slope_at_zero:.4g} <= 0")
    return "; ".join(parts) + "."


# ---- the claim's report tables, figures and notebook cells ----------------------------------------


@claim(ID)
def evaluate(*, quick: bool = False, progress=None, seed: int = 20260505) -> list:
    grid = GRID[::5] + (0.99,) if quick else GRID
    out = []
    for measure in MEASURES:
        can, mono = [], []
        for residual, lam, n in product((False, True), (1.0, 8.0), (8, 64)):
            cfg = ModelConfig(residual=residual, lam=lam)
            dec = decide_alpha(n, cfg, measure)
            st = setting(cfg, n=n, alpha="[0, 0.999]", measure=measure)
            up = down = None
            if measure == "absolute" and (residual, lam, n) == (False, 1.0, 8):
                up = mc_gap_compare(cfg, 0.1, 0.0, samples=20000, seed=seed, progress=progress)
                down = mc_gap_compare(cfg, 0.0, 0.9, samples=20000, seed=seed + 10, progress=progress)
            can_ev = CanAmplifyEvidence(exact=dec, grid_context=profile(n, cfg, measure, grid), mc_up=up, mc_down=down)
            can.append((st, can_ev.verdict, can_ev))
            grows = GrowsEvidence(exact=dec)
            mono.append((st, grows.verdict, grows))
        out += grouped(ID, CAN_AMPLIFY.format(measure=measure),
                       {"norm": "layernorm", "layer": 2, "measure": measure}, can, _interval_finding,
                       _interval_qualifiers)
        out += grouped(ID, GROWS.format(measure=measure),
                       {"norm": "layernorm", "layer": 2, "measure": measure}, mono, _monotone_finding,
                       _monotone_qualifiers)
    rp_items = []
    samples = 20000 if quick else 200000
    for residual, d in product((False, True), (16,) if quick else (16, 64)):  # quick: the width that decides
        ev = rp_by_alpha(residual, d, samples=samples, seed=seed + 500, progress=progress)
        rp_items.append(({"convention": "authors-v2", "norm": "layernorm", "residual": residual, "d": d,
                          "alphas": "0, 0.2, .., 0.8"}, ev.verdict, ev))

    def rp_finding(verdict, group):
        # each setting's RP along alpha, and where a step between adjacent alphas is not decided, that step against
        # its threshold (the sum of the two one-sided empirical Bernstein half-widths): why the row is undecided
        # and a step decided by a hair (step_by_a_hair) whatever its verdict
        def undecided(e):
            bad = [k for k, st in enumerate(e.steps) if st.verdict != "confirmed" or step_by_a_hair(e, k)]
            return "".join(f"; step {e.steps[k].alpha_lo:g} -> {e.steps[k].alpha_hi:g}: {e.steps[k].difference:+.5f} "
                           f"against the Bernstein threshold {e.steps[k].bernstein_threshold:.5f} at false-alarm rate "
                           f"{EXACT_RATE:g} ({e.steps[k].verdict}"
                           + (", by a hair" if step_by_a_hair(e, k) else "") + ")" for k in bad)

        return "; ".join(f"d={s['d']}, {'residual' if s['residual'] else 'no residual'}: RP = "
                         + ", ".join(f"{r:.4f}" for r in e.rp) + undecided(e) for s, e in group) + " (alpha = 0..0.8)."

    rp = grouped(ID, RP_AMPLIFIES, {"layer": 2, "measure": "RP"}, rp_items, rp_finding, _rp_qualifiers)
    if quick:  # "their widths" checked at d = 16 only: not confirmed beyond it (issue 84, item 2)
        rp = [r.on_part("at d = 16", "d = 64 (the full run checks it)") for r in rp]
    return out + rp
