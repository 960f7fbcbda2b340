"""Tests over training seeds: one value per seed, a directional or an equivalence statement, Holm over a family
at :data:`TRAINED_FWER`, and the power each test has."""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq
from scipy.stats import chi2 as _chi2
from scipy.stats import nct as _nct
from scipy.stats import norm as _normal
from scipy.stats import t as _t

from lnrecency.inference.estimates import check_level, z_score
from lnrecency.runtime.arguments import check_real

# ------------------------------------------------------------------------------------------------------
# Trained-model decisions: one statistic per training seed, tests that can say no, Holm over the family
# ------------------------------------------------------------------------------------------------------
#: the family-wise error rate of all trained-model verdicts together (Holm's procedure over the family)
TRAINED_FWER = 0.05


#: the power at which a design's smallest detectable effect is reported
POWER = 0.8


RULES = ("directional", "equivalence")
#: the fewest values per sample (training seeds) a test decides on; fewer, or no spread, decide nothing
MIN_VALUES = 3


@dataclass(frozen=True)
class SeedTest:
    """A statement about a statistic measured once per training seed (every value carries its own probe
    noise: the probe's sequences are drawn per run).

    The statistic is mean(values) (one sample, n - 1 degrees of freedom) or mean(values) - mean(other)
    (two independent samples, Welch's standard error and Welch-Satterthwaite degrees of freedom).

    * ``rule="directional"``, ``side="above"`` (or ``"below"``) ``boundary`` b: confirmed by the one-sided
      t-test of H0: mu <= b (mu >= b); refuted by the one-sided test in the opposite direction.
    * ``rule="equivalence"`` with ``margin`` m > 0 (fixed in advance): confirmed by two one-sided tests
      (TOST) of H0: |mu - b| >= m, p = max of the two; refuted when mu is shown outside [b - m, b + m]:
      p = 2 min(P(T >= (x - b - m) / se), P(T <= (x - b + m) / se)).

    ``p_pair`` = min(1, 2 min(p_confirm, p_refute)) tests the pair of opposite statements at once (a
    Bonferroni pair): the verdict is the side with the smaller p when p_pair survives Holm's procedure. A
    non-finite value, fewer than :data:`MIN_VALUES` values in a sample, or no spread at all (se = 0) make every
    p NaN: the test decides nothing."""

    values: tuple
    rule: str = "directional"
    side: str = "above"
    boundary: float = 0.0
    margin: float | None = None
    other: tuple | None = None

    def __post_init__(self) -> None:
        if self.rule not in RULES:
            raise ValueError(f"rule must be one of {RULES}; got {self.rule!r}")
        want = ("above", "below") if self.rule == "directional" else ("within",)
        if self.side not in want:
            raise ValueError(f"a {self.rule} test has side in {want}; got {self.side!r}")
        if self.rule == "equivalence" and not (self.margin is not None and self.margin > 0):
            raise ValueError(f"an equivalence test needs a margin > 0 fixed in advance; got {self.margin!r}")
        object.__setattr__(self, "values", tuple(float(v) for v in self.values))
        if self.other is not None:
            object.__setattr__(self, "other", tuple(float(v) for v in self.other))
        if len(self.values) < 2 or (self.other is not None and len(self.other) < 2):
            raise ValueError("a seed test needs at least 2 values per sample (3 training seeds for a verdict)")

    @property
    def finite(self) -> bool:
        return all(math.isfinite(v) for v in self.values + (self.other or ()))

    @property
    def n_values(self) -> int:
        """Values in the smaller sample (the training seeds a Welch comparison rests on at least)."""
        return min(len(self.values), len(self.other)) if self.other is not None else len(self.values)

    @property
    def mean(self) -> float:
        m = float(np.mean(self.values))
        return m - float(np.mean(self.other)) if self.other is not None else m

    @property
    def se(self) -> float:
        a = np.var(self.values, ddof=1) / len(self.values)
        b = np.var(self.other, ddof=1) / len(self.other) if self.other is not None else 0.0
        return float(math.sqrt(a + b))

    @property
    def df(self) -> float:
        if self.other is None:
            return float(len(self.values) - 1)
        a = np.var(self.values, ddof=1) / len(self.values)
        b = np.var(self.other, ddof=1) / len(self.other)
        if a + b == 0:
            return float(len(self.values) + len(self.other) - 2)
        return float((a + b) ** 2 / (a ** 2 / (len(self.values) - 1) + b ** 2 / (len(self.other) - 1)))

    @property
    def decidable(self) -> bool:
        """Whether the test can decide anything: finite values, at least :data:`MIN_VALUES` per sample, and a
        positive standard error (identical values show no spread to test against: no confirmation from zero
        variance)."""
        return self.finite and self.n_values >= MIN_VALUES and self.se > 0

    def _upper(self, shift: float) -> float:
        """P(T >= (x - shift) / se): small when mu > shift is shown."""
        if not self.decidable:
            return math.nan
        return float(_t.sf(z_score(self.mean - shift, self.se), self.df))

    def _lower(self, shift: float) -> float:
        """P(T <= (x - shift) / se): small when mu < shift is shown."""
        if not self.decidable:
            return math.nan
        return float(_t.cdf(z_score(self.mean - shift, self.se), self.df))

    @property
    def p_confirm(self) -> float:
        b = self.boundary
        if self.rule == "directional":
            return self._upper(b) if self.side == "above" else self._lower(b)
        return max(self._upper(b - self.margin), self._lower(b + self.margin))

    @property
    def p_refute(self) -> float:
        b = self.boundary
        if self.rule == "directional":
            return self._lower(b) if self.side == "above" else self._upper(b)
        return min(1.0, 2.0 * min(self._upper(b + self.margin), self._lower(b - self.margin)))

    @property
    def p_pair(self) -> float:
        return pair_p(self.p_confirm, self.p_refute)

    def interval(self, level: float = 0.95) -> tuple[float, float]:
        """Student's (Welch's) two-sided interval of the statistic."""
        if not self.finite:
            return (math.nan, math.nan)
        q = float(_t.ppf(0.5 + check_level(level) / 2, self.df)) * self.se
        return (self.mean - q, self.mean + q)

    def power(self, effect: float, alpha: float) -> float:
        """The probability that this design confirms, at one-sided level alpha / 2 (the pair's share), with the
        measured standard error taken as the true one. Directional: the true effect is ``effect`` beyond the
        boundary; P(T > t_crit) with T noncentral t (df, effect / se). Equivalence: the true effect is 0 and the
        margin is ``effect``; TOST confirms when |x| < margin - t_crit se, averaged exactly over the chi-square
        law of the estimated se (one sample; Welch's df otherwise)."""
        if not self.finite or not self.se > 0:
            return math.nan
        crit = float(_t.isf(alpha / 2, self.df))
        if self.rule == "directional":
            return float(_nct.sf(crit, self.df, effect / self.se))
        return equivalence_power(effect / self.se, crit, self.df)

    def detectable(self, alpha: float) -> float:
        """:func:`detectable_effect`, computed once per (test, alpha): the smallest effect the design detects with
        probability POWER (:meth:`search_detectable`)."""
        return detectable_effect(self, float(alpha))

    def search_detectable(self, alpha: float) -> float:
        """The smallest effect the design detects with probability POWER at one-sided level alpha / 2 (the
        pair's share), by the noncentral t (:meth:`power`), at this design's seeds and measured spread. For an
        equivalence test, the smallest margin it confirms with that power when the true effect is 0. (The
        normal-shift shortcut (t_{1-a/2} + t_POWER) se is optimistic: its power at that effect is about 0.67.)"""
        if not self.finite or not self.se > 0:
            return math.nan
        hi = self.se
        while self.power(hi, alpha) < POWER:
            hi *= 2.0
        return float(brentq(lambda e: self.power(e, alpha) - POWER, 0.0, hi, xtol=1e-12 * hi, rtol=1e-10))

    def to_json(self) -> dict:
        lo, hi = self.interval()
        return {"rule": self.rule, "side": self.side, "boundary": self.boundary, "margin": self.margin,
                "values": list(self.values), "other": None if self.other is None else list(self.other),
                "mean": self.mean, "se": self.se, "df": self.df, "interval": [lo, hi],
                "p_confirm": self.p_confirm, "p_refute": self.p_refute}


#: Gauss-Legendre nodes on [0, 1] for :func:`equivalence_power` (the integrand is smooth on its support in s)
_GL_X, _GL_W = np.polynomial.legendre.leggauss(256)
_GL_NODES, _GL_WEIGHTS = 0.5 * (_GL_X + 1.0), 0.5 * _GL_W


def equivalence_power(lam: float, crit: float, df: float) -> float:
    """TOST's power when the true effect is 0 and the margin is ``lam`` standard errors: E[max(0, 2 Phi(lam - crit
    sqrt(V / df)) - 1)] over V ~ chi-square(df). The integrand vanishes beyond v* = df (lam / crit)^2, so the
    integral runs over [0, top], top = min(v*, the chi-square's 1 - 1e-12 quantile), in w with v = top w^6 (which
    makes the chi-square density's v^(df/2 - 1) smooth at 0 for every df > 1), by 256-point Gauss-Legendre,
    vectorised. It agrees with adaptive quadrature over [0, top] to about 1e-14 (tests/inference/test_seed_tests.py)
    and is some hundred times faster; quadrature over the whole chi-square range, as before, missed a narrow
    support (small lam, large crit) and returned 0."""
    if not (crit > 0 and df > 0) or math.isnan(lam):
        return math.nan
    if lam <= 0:
        return 0.0
    top = min(df * (lam / crit) ** 2, float(_chi2.isf(1e-12, df)))
    v = top * _GL_NODES ** 6
    inner = np.clip(2.0 * _normal.cdf(lam - crit * np.sqrt(v / df)) - 1.0, 0.0, 1.0)
    density = _chi2.pdf(v, df) * top * 6.0 * _GL_NODES ** 5  # dv = 6 top w^5 dw
    return float(np.sum(_GL_WEIGHTS * inner * density))


@functools.lru_cache(maxsize=4096)
def detectable_effect(test: "SeedTest", alpha: float) -> float:
    """``test.search_detectable(alpha)``, cached: a decision's detectable effect is reported in several places
    (its JSON, the tables, the findings) and costs a root search."""
    return test.search_detectable(alpha)


def _holm_order(pvalues) -> tuple[list[int], list[float]]:
    p = [1.0 if (x is None or math.isnan(x)) else float(x) for x in pvalues]
    return sorted(range(len(p)), key=lambda q: p[q]), p


def holm(pvalues, alpha: float = TRAINED_FWER) -> list[bool]:
    """Holm's step-down procedure, the project's one definition: which hypotheses are rejected at family-wise error
    rate ``alpha`` (NaN p-values are never rejected and count in the family)."""
    order, p = _holm_order(pvalues)
    levels = holm_levels(pvalues, alpha)
    out = [False] * len(p)
    for i in order:
        if p[i] > levels[i]:
            break
        out[i] = True
    return out


def pair_p(p_confirm: float, p_refute: float) -> float:
    """The pair of opposite one-sided statements tested at once (a Bonferroni pair): min(1, 2 min(p_confirm,
    p_refute)); NaN when either is NaN (:attr:`SeedTest.p_pair`)."""
    if math.isnan(p_confirm) or math.isnan(p_refute):
        return math.nan
    return min(1.0, 2.0 * min(p_confirm, p_refute))


def holm_levels(pvalues, alpha: float = TRAINED_FWER) -> list[float]:
    """The level each p-value is compared with in :func:`holm`'s step-down order: alpha / (m - rank)."""
    check_real("alpha", alpha, low=0.0, high=1.0, low_open=True, high_open=True)
    order, p = _holm_order(pvalues)
    levels = [0.0] * len(p)
    for rank, i in enumerate(order):
        levels[i] = alpha / (len(p) - rank)
    return levels


@dataclass(frozen=True)
class SeedDecision:
    """A :class:`SeedTest` decided within its family: ``verdict`` confirmed / refuted / inconclusive, the
    family's size and rate, and the design's smallest detectable effect at the family's first threshold."""

    test: SeedTest
    verdict: str
    family: int
    fwer: float

    @property
    def detectable(self) -> float:
        return self.test.detectable(self.fwer / max(self.family, 1))

    def to_json(self) -> dict:
        lo, hi = self.test.interval()
        return {"verdict": self.verdict, "interval": [lo, hi], "rule": self.test.rule,
                "margin": self.test.margin, "boundary": self.test.boundary, "side": self.test.side,
                "p_confirm": self.test.p_confirm, "p_refute": self.test.p_refute, "family": self.family,
                "fwer": self.fwer, "detectable_effect": self.detectable}


def decide_family(tests: list, alpha: float = TRAINED_FWER) -> list[SeedDecision]:
    """Decide every test of a family together: Holm's procedure over the tests' ``p_pair`` at family-wise
    rate ``alpha`` (every wrong confirmation or refutation counts as an error); a surviving test is
    confirmed when p_confirm < p_refute, else refuted; the rest are inconclusive. ``None`` entries (a test
    that cannot be run: not learned, unstable) stay in the family, undecided."""
    rejected = holm([math.nan if t is None else t.p_pair for t in tests], alpha)
    out = []
    for t, rej in zip(tests, rejected):
        if t is None:
            out.append(None)
            continue
        verdict = "inconclusive"
        if rej:
            verdict = "confirmed" if t.p_confirm < t.p_refute else "refuted"
        out.append(SeedDecision(t, verdict, len(tests), alpha))
    return out


def decide_tests(made: dict, families=None, alpha: float = TRAINED_FWER) -> dict:
    """A plan's tests from their samples, each family decided by :func:`decide_family`: ``made`` maps a test ID to
    (its samples, a function making its :class:`SeedTest`, why it is not made when a sample has fewer than
    :data:`MIN_VALUES` values); ``families``: lists of test IDs (default: one of all). Test ID -> (SeedDecision or
    None, why-not text or ""), family by family."""
    tests, why = {}, {}
    for tid, (samples, make, reason) in made.items():
        if all(len(x) >= MIN_VALUES for x in samples):
            tests[tid] = make()
        else:
            tests[tid], why[tid] = None, reason
    out = {}
    for family in (families or [list(made)]):
        for tid, d in zip(family, decide_family([tests[t] for t in family], alpha)):
            out[tid] = (d, why.get(tid, ""))
    return out


def probe_noise(slopes, ses) -> dict:
    """One cell's probe noise against its spread over seeds: the runs' mean probe SE (``ses``), the between-seed SD of
    their estimates (``slopes``; None from one seed) and their ratio (None without spread): a plan aims the ratio
    below 1/3, so that the interval over seeds is the seeds', not the probe's."""
    x = np.asarray(slopes, dtype=float)
    se = float(np.mean(ses))
    sd = float(x.std(ddof=1)) if x.size > 1 else None
    return {"probe_se": se, "seed_sd": sd, "ratio": se / sd if sd else None}
