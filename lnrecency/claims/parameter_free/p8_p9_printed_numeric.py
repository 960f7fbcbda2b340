"""P8 and P9: the numeric statements of the authors' first version (docs/model.md, "The authors' printed derivation").

Printed setting: l2 normalisation, lam = 1, residual with gamma = 1, E<x_i, x_j> = a.
P8 (Sec. 4.1): "for a != 0 the layer-2 pattern becomes nearly independent of i (g(i)/h(i) saturates)".
   Tested with theory.closed_forms (residual): r(i) = g(i)/h(i). sympy limit of r(i) as i -> oo: positive
   for a > 0 (saturates), 0 for a = 0; the relative change (r(i) - r(2i))/r(i) at i = 8 and 64 and the
   sympy limit of r(2i)/r(i) (1 when saturating, 1/2 when r ~ 1/i).
P9 (App. B): "LayerNorm with sqrt(d) scaling sharpens the softmax and weakens the pattern; with d scaling
   it behaves like l2". Our model: "d scaling" is lam = 1, "sqrt(d) scaling" is lam = sqrt(d).
   (a) d scaling ~ l2: the limit recursions of layernorm and l2 agree exactly (mpmath, dps 40, n = 12,
       L = 3), and at d = 64 their Monte Carlo Definition-1 profiles of layer 2 (n = 8, significance
       PER_COMPARISON per profile) give the same labels; the measured finite-d difference of the means is reported
       (d * max |diff|, the O(1/d) centring effect), not tested;
   (b) sharpens: d P^(1)_ii / d lam > 0 (sympy, for a < 1) and P_88 at lam = 1 vs 8;
   (c) weakens the pattern: layer-2 absolute gap Delta = S_{8,7} - S_{8,1}, lam = sqrt(d) vs lam = 1, per
       residual, alpha and d in {64, 1024}, decided by Monte Carlo AT THAT WIDTH: one-sided test of
       Delta(lam = 1) > Delta(lam = sqrt(d)) from independent runs (quadratic control variate: unbiased at
       any fixed lam and d). lam = sqrt(d) grows with d, so neither the limit at lam held fixed nor its
       1/d expansion describes that side: both are reported as context only (the limit gaps, and for
       lam = 1 the first-order expectation limit + c/d). A near-tie is inconclusive, not confirmed.
       The scores scale with lam, so the comparison is made in two units, each with the same k: attention
       logits (the gap itself, log P_87/P_81) and per unit of lam (Delta / lam, the normalised inner
       products). A setting whose verdict differs between the units is inconclusive ("split by unit").
"""
from __future__ import annotations

import math

import mpmath
import sympy

from lnrecency.claims.catalog import declared
from lnrecency.claims.declare import claim
from lnrecency.claims.mc_checks import gap_comparison, grouped, setting, simulate, theory
from lnrecency.experiments.profiler import bias_profile
from lnrecency.inference.evidence import Evidence, item, ladder, record
from lnrecency.inference.qualifiers import Qualifiers
from lnrecency.inference.stats import PER_COMPARISON, OrderingCheck, ordering_check, register
from lnrecency.model.config import ModelConfig
from lnrecency.theory import closed_forms as cf
from lnrecency.theory.limit import limit_scores

P8 = declared("P8").text("p8")
P9A = declared("P9").text("p9a")
P9B = declared("P9").text("p9b")
#: P9's "weakens" is ambiguous between two units; each reading is its own statement, decided in its unit
P9C_LOGITS = declared("P9").text("p9c_logits")
P9C_PER_LAM = declared("P9").text("p9c_per_lam")


@record
class Saturation(Evidence):
    """r(i) = g(i)/h(i) at one a: its limit, the limit of r(2i)/r(i), the relative change from i to 2i."""

    limit_r: str
    ratio: str = item(key="limit_r(2i)/r(i)")
    relative_change_i_to_2i: dict
    no_saturation_at_a0: bool | None = item(omit_none=True)  # a = 0 only: r ~ 1/i
    contrast_a0: "Saturation | None" = item(omit_none=True)  # a > 0: the a = 0 contrast
    # a > 0: the limit is positive and r(2i)/r(i) -> 1 (sympy), the decision kept as data (the strings above are
    # sympy's words, never parsed back); None in evidence stored before it was kept
    saturates: bool | None = item(omit_none=True)

    @property
    def verdict(self) -> str | None:
        """The row's verdict from the stored decision (None where none is stored: nothing to re-decide)."""
        return None if self.saturates is None else ladder(self.saturates)


@record
class ProfilesAtWidth(Evidence):
    d: int
    samples: int
    seed: int
    significance_per_profile: float
    labels: dict  # {norm: [label per row]}


@record
class ScoreDifference(Evidence):
    j: int
    diff: float
    stderr: float


@record
class DScalingEvidence(Evidence):
    limit_max_abs_diff_dps40: float
    mc_profiles_d64: ProfilesAtWidth
    measured_difference_row_8_d64: tuple[ScoreDifference, ...]
    d_times_max_abs_diff: float

    @property
    def verdict(self) -> str:
        """Decided here once (the evaluator reads it): the limits equal at 40 digits and the profiles at d = 64 read
        the same; refuted when the limits differ or two definite labels of a row contradict."""
        labels = list(self.mc_profiles_d64.labels.values())
        same = all(x == labels[0] for x in labels)
        definite = ("recency", "earlier", "mixed", "trivial")
        contradict = any(x != y and x in definite and y in definite for x, y in zip(*labels))
        exact = self.limit_max_abs_diff_dps40 < 1e-35
        return ladder(exact and same, opposite=not exact or contradict)


@record
class SharpensEvidence(Evidence):
    dP_ii_dlam: str
    positive_form: str
    equal_to_positive_form: bool
    P_88_alpha0: dict  # {"lam=..": P_88}

    @property
    def verdict(self) -> str:
        return ladder(self.equal_to_positive_form, opposite=False)


@record
class GapsAtWidth(Evidence):
    """Monte Carlo gaps at lam = 1 and lam = sqrt(d) (quadratic control variate) and the one-sided test."""

    gap_lam1: float
    se_lam1: float
    gap_lam_sqrt_d: float
    se_lam_sqrt_d: float
    samples: int
    control_variate: str = "quadratic"
    check: OrderingCheck = item(flatten=True)


@record
class PerLamGaps(Evidence):
    """The same comparison in the unit of the normalised inner products: each gap divided by its lam
    (Delta / lam = <N h_8, N h_7> - <N h_8, N h_1>), SEs scaled alike, tested with the same k."""

    gap_lam1_per_lam: float
    gap_lam_sqrt_d_per_lam: float
    check: OrderingCheck = item(flatten=True)


#: the two units P9c is decided in: the gap itself is a log ratio of attention weights, log(P_87 / P_81)
UNITS = ("attention logits (Delta = log P_87/P_81)", "per unit of lam (Delta / lam)")


@record
class WeakensEvidence(Evidence):
    #: each P9 row reads one unit's verdict (unit_verdicts); ``verdict`` below is both units', not the row's
    decides_row = False
    claim: str
    mc: GapsAtWidth
    context_limit_gaps_lam_fixed: dict
    context_first_order_lam1: float
    scope: str = ("lam = sqrt(d) grows with d: the fixed-lam limit and its 1/d expansion do not apply to that "
                  "side; the verdict is the Monte Carlo test at d")
    per_lam: PerLamGaps | None = item(omit_none=True)

    @property
    def unit_verdicts(self) -> dict[str, str]:
        """The test's verdict in each unit (only the first where the per-lam comparison was not recorded)."""
        out = {UNITS[0]: self.mc.check.verdict}
        if self.per_lam is not None:
            out[UNITS[1]] = self.per_lam.check.verdict
        return out

    @property
    def verdict(self) -> str:
        """The same in both units, else inconclusive: a verdict that flips with the unit is not a verdict."""
        words = set(self.unit_verdicts.values())
        return words.pop() if len(words) == 1 else "inconclusive"

    @property
    def split_by_unit(self) -> bool:
        return set(self.unit_verdicts.values()) == {"confirmed", "refuted"}


def p8() -> list:
    forms = cf.closed_forms(ModelConfig(norm="l2", residual=True))
    subs = {cf.lam: 1, cf.gamma: 1}
    r = (forms.g / forms.h.subs(cf.j, cf.i)).subs(subs)
    items = []
    contrast = None
    for a in (0, sympy.Rational(1, 10), sympy.Rational(1, 2), sympy.Rational(9, 10)):
        ra = sympy.simplify(r.subs(cf.alpha, a))
        lim = sympy.limit(ra, cf.i, sympy.oo)
        ratio = sympy.limit(ra.subs(cf.i, 2 * cf.i) / ra, cf.i, sympy.oo)
        rel = {str(q): float((ra.subs(cf.i, q) - ra.subs(cf.i, 2 * q)) / ra.subs(cf.i, q)) for q in (8, 64)}
        if a == 0:  # outside P8's statement: the contrast (r ~ 1/i, no saturation), kept as evidence
            contrast = Saturation(limit_r=str(lim), ratio=str(ratio), relative_change_i_to_2i=rel,
                                  no_saturation_at_a0=bool(lim == 0 and ratio == sympy.Rational(1, 2)))
            continue
        sat = Saturation(limit_r=str(lim), ratio=str(ratio), relative_change_i_to_2i=rel, contrast_a0=contrast,
                         saturates=bool(lim.is_positive) and ratio == 1)
        items.append(({"norm": "l2", "residual": True, "gamma": 1, "lam": 1, "alpha": float(a)}, sat.verdict, sat))
    return grouped("P8", P8, {"quantity": "r(i) = g(i)/h(i)"}, items)


def p9a(samples: int, seed: int, progress=None) -> list:
    with mpmath.workdps(40):
        a = limit_scores(12, 3, norm="layernorm", dps=40)
        b = limit_scores(12, 3, norm="l2", dps=40)
        worst = max(abs(x - y) for x, y in zip(a.ravel(), b.ravel()) if not mpmath.isnan(x))
    d, n, sig = 64, 8, PER_COMPARISON
    register("P9a MC profiles layernorm / l2 at d=64 (per profile)", 2, rate=sig)
    prof = {norm: bias_profile(2, n, norm=norm, method="mc", d=d, samples=samples, seed=seed + q,
                               significance=sig, progress=progress)
            for q, norm in enumerate(("layernorm", "l2"))}
    labels = {norm: p.labels() for norm, p in prof.items()}
    s_ln = simulate(n, 2, d, samples, seed + 2, ModelConfig(norm="layernorm"), progress)
    s_l2 = simulate(n, 2, d, samples, seed + 3, ModelConfig(norm="l2"), progress)
    diffs = tuple(ScoreDifference(j=q, diff=float(s_ln.mean[1, n - 1, q - 1] - s_l2.mean[1, n - 1, q - 1]),
                                  stderr=math.hypot(s_ln.stderr[1, n - 1, q - 1], s_l2.stderr[1, n - 1, q - 1]))
                  for q in range(1, n))
    same = labels["layernorm"] == labels["l2"]
    ev = DScalingEvidence(limit_max_abs_diff_dps40=float(worst),
                          mc_profiles_d64=ProfilesAtWidth(d=d, samples=samples, seed=seed, significance_per_profile=sig,
                                                          labels=labels),
                          measured_difference_row_8_d64=diffs, d_times_max_abs_diff=d * max(abs(x.diff) for x in diffs))
    verdict = ev.verdict
    worst_d = max(abs(x.diff) for x in diffs)
    finding = (f"The d -> infinity limits of LayerNorm and l2 at lam = 1 agree to {float(worst):.2g} at 40 digits "
               f"(layers 1-3, n = 12); at d = {d} the Monte Carlo bias profiles read "
               f"{'the same' if same else 'differently'} ({'; '.join(f'{k}: {v}' for k, v in labels.items())}) and "
               f"row 8's layer-2 scores differ by at most {worst_d:.3g} (d x that = {d * worst_d:.3g}: the O(1/d) "
               f"effect of the centring).")
    return grouped("P9", P9A, {}, [({"norm": "layernorm vs l2", "lam": 1, "alpha": 0, "residual": False},
                                           verdict, ev)], finding=finding,
                   qualify=lambda v, g: Qualifiers(
                       where="lam 1", holds="exactly in the limit; alike at d = 64" if v == "confirmed" else "",
                       fails="" if v == "confirmed" else "the limits or the profiles at d = 64 differ",
                       quantity="largest score difference at d = 64", estimate=worst_d, exact=True))


def p9b() -> list:
    p = cf.closed_forms(ModelConfig(norm="layernorm")).p_diag.subs(cf.i, cf.i)
    dp = sympy.simplify(sympy.diff(p, cf.lam))
    # sign: dP_ii/dlam = (1 - alpha)(i - 1) e^(lam (1 + alpha)) / Z^2 > 0 for i >= 2, alpha < 1
    expected = (1 - cf.alpha) * (cf.i - 1) * sympy.exp(cf.lam * (1 + cf.alpha)) / (
        sympy.exp(cf.lam) + (cf.i - 1) * sympy.exp(cf.lam * cf.alpha)) ** 2
    same = sympy.simplify(dp - expected) == 0
    vals = {f"lam={lam:g}": float(p.subs({cf.i: 8, cf.alpha: 0, cf.lam: lam})) for lam in (1, 8, 32)}
    finding = ("dP_ii/dlam = (1 - alpha)(i - 1) e^(lam (1 + alpha)) / Z^2 > 0 for i >= 2, alpha < 1 (sympy: "
               + ("equal" if same else "not shown equal") + "), so the layer-1 self-weight grows with lam: P_88 at "
               "alpha = 0 is " + ", ".join(f"{v:.3g} ({k})" for k, v in vals.items()) + ".")
    return grouped("P9", P9B, {}, [({"quantity": "P^(1)_ii", "lam": "1 vs sqrt(d)"},
                                           ladder(same, opposite=False),
                                           SharpensEvidence(dP_ii_dlam=str(dp), positive_form=str(expected),
                                                            equal_to_positive_form=bool(same), P_88_alpha0=vals))],
                   finding=finding,
                   qualify=lambda v, g: Qualifiers(
                       holds="exactly: the layer-1 self-weight grows with lam for every alpha below 1" if same else "",
                       reason="" if same else "not resolved", exact=True))


def p9c(samples: int, seed: int, progress=None) -> list:
    items = []
    k = register("P9c weakens: Monte Carlo at the named width, in two units", 40, sided=1)
    for residual in (False, True):
        for alpha in (0.0, 0.3, 0.5, 0.7, 0.9):
            for d in (64, 1024):
                lam = math.sqrt(d)
                cfgs = [ModelConfig(residual=residual, lam=lm, alpha=alpha) for lm in (1.0, lam)]
                limit_gaps = {}
                for cfg in cfgs:
                    s = limit_scores(8, 2, config=cfg)[1, 7]
                    limit_gaps[f"lam={cfg.lam:g}"] = float(s[6] - s[0])
                base = seed + 1000 * residual + int(100 * alpha) + 7 * d
                lam1, lam_d, o = gap_comparison(*cfgs, 8, k=k, samples=samples, seeds=(base, base + 1), d=d,
                                                progress=progress, control_variate="quadratic")
                first_order = theory(ModelConfig(residual=residual, alpha=alpha), 8, 2).difference(2, 8, 7, 1)
                per_lam = ordering_check(lam1.mean - lam_d.mean / lam, math.hypot(lam1.stderr, lam_d.stderr / lam),
                                         k=k)
                ev = WeakensEvidence(
                    claim=f"Delta(lam=1) > Delta(lam=sqrt(d)={lam:g}) at d = {d} (Monte Carlo at d), in attention "
                          f"logits and per unit of lam",
                    mc=GapsAtWidth(gap_lam1=lam1.mean, se_lam1=lam1.stderr, gap_lam_sqrt_d=lam_d.mean,
                                   se_lam_sqrt_d=lam_d.stderr, samples=samples, check=o),
                    context_limit_gaps_lam_fixed=limit_gaps,
                    context_first_order_lam1=first_order[0] + first_order[1] / d,
                    per_lam=PerLamGaps(gap_lam1_per_lam=lam1.mean, gap_lam_sqrt_d_per_lam=lam_d.mean / lam,
                                       check=per_lam))
                items.append((setting(ModelConfig(residual=residual, alpha=alpha), d=d,
                                      lam=f"1 vs sqrt(d) = {lam:g}"), ev))
    out = []
    for unit, statement in zip(UNITS, (P9C_LOGITS, P9C_PER_LAM)):
        mine = [(s, ev.unit_verdicts[unit], ev) for s, ev in items]
        out += grouped("P9", statement, {"measure": f"layer-2 gap, {unit}"}, mine,
                       finding=lambda v, g, u=unit: weakens_finding(v, g, u),
                       qualify=lambda v, g, u=unit: weakens_qualifiers(v, g, u))
    return out


def weakens_qualifiers(verdict: str, group: list, unit: str) -> Qualifiers:
    """One reading of P9c in its unit: in how many settings, at which widths, and the largest gap difference."""
    diffs = [(ev.mc.gap_lam1 - ev.mc.gap_lam_sqrt_d) if unit == UNITS[0] else
             (ev.per_lam.gap_lam1_per_lam - ev.per_lam.gap_lam_sqrt_d_per_lam) for _, ev in group]
    big = max(diffs, key=abs)
    where = {UNITS[0]: "in attention logits", UNITS[1]: "per unit of lam"}[unit]
    alphas = sorted({s["alpha"] for s, _ in group})
    span = f"alpha {alphas[0]:g}" + (f"-{alphas[-1]:g}" if len(alphas) > 1 else "")
    n = f"in {len(group)} setting{'s' * (len(group) > 1)}, {span}"
    return Qualifiers(where=where, settings=len(group), holds=n if verdict == "confirmed" else "",
                      fails=n if verdict == "refuted" else "", comparison="largest gap, d minus sqrt(d) scaling",
                      estimate=big, reason="not significant" if verdict == "inconclusive" else "")


def weakens_finding(verdict: str, group: list, unit: str = UNITS[0]) -> str:
    """What the Monte Carlo at the named width shows, per setting, in one unit (the reading decided), with the other
    beside: the layer-2 gap S_87 - S_81 (a log ratio of attention weights) with d scaling (lam = 1) against sqrt(d)
    scaling (lam = sqrt(d)), each +- its SE, and the same per unit of lam."""
    lead = {"confirmed": f"Holds in {unit}: with sqrt(d) scaling the layer-2 recency gap is smaller than with d "
                         f"scaling (significant at the stated k)",
            "refuted": f"Fails in {unit}: with sqrt(d) scaling the layer-2 recency gap is larger than with d "
                       f"scaling (significant at the stated k)",
            "inconclusive": f"Not settled in {unit}: the two gaps differ by less than the test resolves"}[verdict]
    parts = []
    for s, ev in group:
        m = ev.mc
        where = f"{'residual' if s.get('residual') else 'no residual'}, alpha={s.get('alpha')}, d={s.get('d')}"
        text = (f"{where}: {m.gap_lam1:.3g} +- {m.se_lam1:.2g} (lam = 1) vs {m.gap_lam_sqrt_d:.3g} +- "
                f"{m.se_lam_sqrt_d:.2g} (lam = sqrt(d))")
        if ev.per_lam is not None:
            text += (f", per unit of lam {ev.per_lam.gap_lam1_per_lam:.3g} vs {ev.per_lam.gap_lam_sqrt_d_per_lam:.3g}"
                     + (" (" + ", ".join(f"{unit.split(' (')[0]}: {v}" for unit, v in ev.unit_verdicts.items()) + ")"
                        if ev.split_by_unit else ""))
        parts.append(text)
    return f"{lead}, in {len(group)} setting{'s' * (len(group) > 1)}: " + "; ".join(parts) + "."


@claim("P8")
def evaluate_p8(*, quick: bool = False, progress=None) -> list:
    return p8()


@claim("P9")
def evaluate_p9(*, quick: bool = False, progress=None, seed: int = 20261010) -> list:
    return p9a(20000, seed, progress) + p9b() + p9c(2000 if quick else 5000, seed + 100, progress)


def evaluate(*, quick: bool = False, progress=None, seed: int = 20261010) -> list:
    return p8() + evaluate_p9(quick=quick, progress=progress, seed=seed)
