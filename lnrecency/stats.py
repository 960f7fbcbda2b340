"""Calibrated Monte Carlo comparisons and the suite's false-alarm budget, in two parts.

Every Monte Carlo check is one of
  * mean:      |estimate - prediction| <= half-width + bias_bound             (two-sided)
  * ordering:  claim "E X > 0" is confirmed when X_bar > half-width, refuted   (one-sided)
               when X_bar < -half-width, inconclusive otherwise;
  * frequency: a proportion lies inside its binomial confidence interval.
With per-comparison false-alarm rates a, the probability that a *correct* claim fails by chance in one
run is, by the union (Bonferroni) bound, <= the sum of the a's. Each comparison states its **basis**:

  * ``"exact"`` - non-asymptotic: the Clopper-Pearson interval for a frequency, or, for a mean of i.i.d.
    draws known to lie in an interval of width W (scores under a normalisation: |S| <= lam), the empirical
    Bernstein bound of Maurer & Pontil (2009, Thm 4): with probability >= 1 - delta,
        E X - X_bar <= sqrt(2 V_n ln(2/delta) / n) + 7 W ln(2/delta) / (3 (n - 1)),
    V_n the unbiased sample variance (:func:`bernstein_halfwidth`). These rates are true bounds, so they
    may be small (``EXACT_RATE`` = 1e-9 per comparison).
  * ``"normal"`` - asymptotic: half-width = k SE with the normal quantile k. The central limit theorem
    does not support rates near 1e-9 with a few thousand samples (the tail's relative error grows like
    k^3 / sqrt(n)), so these checks use the moderate ``PER_COMPARISON`` = 1e-6 (k = 4.89 two-sided,
    4.75 one-sided), where the first Edgeworth term of the studentised mean changes a one-sided tail by
    the factor 1 + |skew| (2k^2 + 1) phi(k) / (6 sqrt(n) (1 - Phi(k))) (:func:`edgeworth_tail_ratio`;
    for two-sided checks this term cancels and the second one, :func:`edgeworth_two_sided_ratio`, is
    O(1/n)). A two-sided check over m entries is one family-wise decision (``register(family=True)``:
    Bonferroni within, each entry at rate / m). proofs_check/test_stats.py measures the skewness and
    kurtosis of the draws the suite tests and bounds both factors.

``BUDGET`` is the registry: each check calls :func:`register` with its name, the number of comparisons,
the per-comparison rate and the basis, and receives the matching normal k. ``conftest.py`` prints both
parts in pytest's terminal summary and fails the run when a part exceeds its limit in ``SUITE_LIMITS``.
"""
from __future__ import annotations

import math
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np
from scipy.stats import binomtest as _binomtest
from scipy.stats import norm as _normal
from scipy.stats import t as _t

from lnrecency.config import check_int, check_real

__all__ = ["Estimate", "Proportion", "z_score", "t_interval", "PER_COMPARISON", "DETERMINISTIC_SE", "is_deterministic", "EXACT_RATE", "BASES", "SUITE_LIMITS",
           "SUITE_LIMIT", "Budget", "BUDGET", "k_for", "register", "MeanCheck", "OrderingCheck", "mean_check",
           "ordering_check", "wilson_interval", "clopper_pearson_interval", "bernstein_halfwidth",
           "edgeworth_tail_ratio", "edgeworth_two_sided_ratio", "edgeworth_prob_positive", "k_statistics",
           "family_k"]

#: default per-comparison false-alarm rate of a normal-tail (asymptotic) comparison.
PER_COMPARISON = 1e-6
#: an estimate whose SE is below this (relative to max(1, |estimate|)) has no randomness (float rounding only,
#: e.g. the diagonal S_ii = lam under a normalisation): it is checked, shown, but not counted as a comparison
DETERMINISTIC_SE = 1e-12


def is_deterministic(estimate: float, stderr: float) -> bool:
    """Whether a Monte Carlo entry carries no randomness (:data:`DETERMINISTIC_SE`)."""
    return float(stderr) <= DETERMINISTIC_SE * max(1.0, abs(float(estimate)))
#: per-comparison rate of a non-asymptotic comparison (Clopper-Pearson, empirical Bernstein).
EXACT_RATE = 1e-9
#: the bases a comparison's stated rate rests on.
BASES = ("exact", "normal")
#: the suite's false-alarm limits, per basis (union bound over the registered comparisons of that basis).
SUITE_LIMITS = {"exact": 1e-6, "normal": 2e-3}
#: the limit on the rigorous part (kept for callers that name one number).
SUITE_LIMIT = SUITE_LIMITS["exact"]


def z_score(diff: float, stderr: float) -> float:
    """The one z rule: diff / SE; with SE = 0 (a deterministic quantity) 0 when diff = 0, else +-inf."""
    diff, stderr = float(diff), float(stderr)
    if stderr > 0:
        return diff / stderr
    if math.isnan(diff) or math.isnan(stderr):
        return math.nan
    return 0.0 if diff == 0.0 else math.copysign(math.inf, diff)


def _check_level(level: float) -> float:
    return float(check_real("level", level, low=0.0, high=1.0, low_open=True, high_open=True))


@dataclass(frozen=True)
class Estimate:
    """A Monte Carlo mean with its standard error over ``samples`` iid draws."""

    mean: float
    stderr: float
    samples: int

    def confidence_interval(self, level: float = 0.95) -> tuple[float, float]:
        """Two-sided Student-t interval mean +- t_{(1+level)/2, samples-1} * stderr."""
        q = float(_t.ppf(0.5 + _check_level(level) / 2, self.samples - 1))
        return (self.mean - q * self.stderr, self.mean + q * self.stderr)

    def zscore(self, value: float = 0.0) -> float:
        """(mean - value) / stderr by :func:`z_score`."""
        return z_score(self.mean - float(value), self.stderr)


@dataclass(frozen=True)
class Proportion:
    """Per-instance frequency ``count / samples`` of an event, with a binomial confidence interval."""

    count: int
    samples: int

    @property
    def estimate(self) -> float:
        return self.count / self.samples

    def confidence_interval(self, level: float = 0.95, method: str = "wilson") -> tuple[float, float]:
        """Wilson score (method="wilson") or Clopper-Pearson (method="exact") interval, scipy._binomtest."""
        if method not in ("wilson", "exact"):
            raise ValueError(f"method must be 'wilson' or 'exact'; got {method!r}")
        ci = _binomtest(self.count, self.samples).proportion_ci(
            confidence_level=_check_level(level), method=method)
        return (float(ci.low), float(ci.high))


def t_interval(values, level: float = 0.95) -> tuple[float, float, float]:
    """(mean, low, high): Student's t-interval of the mean of ``values`` (n - 1 degrees of freedom), e.g. over
    training seeds; (mean, -inf, inf) for a single value."""
    v = [float(x) for x in values]
    if not v:
        raise ValueError("values must not be empty")
    m = sum(v) / len(v)
    if len(v) < 2:
        return m, -math.inf, math.inf
    sd = math.sqrt(sum((x - m) ** 2 for x in v) / (len(v) - 1))
    half = float(_t.ppf(0.5 + _check_level(level) / 2, len(v) - 1)) * sd / math.sqrt(len(v))
    return m, m - half, m + half


def k_for(rate: float, *, sided: int = 2) -> float:
    """Normal quantile k with P(|Z| > k) = rate (sided=2) or P(Z > k) = rate (sided=1)."""
    check_real("rate", rate, low=0.0, high=0.5, low_open=True, high_open=False)
    if sided not in (1, 2):
        raise ValueError(f"sided must be 1 or 2; got {sided!r}")
    return float(_normal.isf(rate / sided))


@dataclass
class Budget:
    """Registry of Monte Carlo comparisons: name -> (comparisons, per-comparison rate, basis)."""

    entries: dict = field(default_factory=dict)
    families: set = field(default_factory=set)  # names registered as one family-wise decision
    paused: int = 0

    @contextmanager
    def expecting_rejection(self):
        """Within: checks that a test *expects to fail* (a planted wrong formula, a mutant, a reversed claim)
        return their k but are not recorded. Their risk is a miss (power: proofs_check/test_power.py), not a
        false alarm: a chance rejection there cannot fail the suite, so it does not belong in the union bound."""
        self.paused += 1
        try:
            yield self
        finally:
            self.paused -= 1

    def register(self, name: str, comparisons: int = 1, *, rate: float | None = None,
                 sided: int = 2, basis: str = "normal", family: bool = False) -> float:
        """Record ``comparisons`` comparisons at false-alarm ``rate`` each (default: ``PER_COMPARISON``
        for basis "normal", ``EXACT_RATE`` for "exact"); return the normal quantile k of that rate.

        ``family=True``: the comparisons are one decision (the check fails when any entry fails) at the
        family-wise ``rate``: Bonferroni within, each entry at ``rate / comparisons`` (valid under any
        dependence between the entries, e.g. entries computed from the same draws); the family adds
        ``rate`` to the budget, and the k returned is that of ``rate / comparisons``.

        Registering the same name again replaces the entry (a check run twice is one check).
        """
        check_int("comparisons", comparisons, minimum=1)
        if basis not in BASES:
            raise ValueError(f"basis must be one of {BASES}; got {basis!r}")
        if not isinstance(family, bool):
            raise ValueError(f"family must be True or False; got {family!r}")
        if rate is None:
            rate = EXACT_RATE if basis == "exact" else PER_COMPARISON
        check_real("rate", rate, low=0.0, high=0.5, low_open=True, high_open=False)
        per_entry = float(rate) / comparisons if family else float(rate)
        k = k_for(per_entry, sided=sided)
        if not self.paused:
            self.entries[name] = (comparisons, per_entry, basis)
            (self.families.add if family else self.families.discard)(name)
        return k

    def total(self, basis: str | None = None) -> float:
        """Union bound: P(some correct registered comparison fails by chance) <= sum m * a, over the
        comparisons of ``basis`` (None: all)."""
        return float(sum(m * a for m, a, b in self.entries.values() if basis in (None, b)))

    def comparisons(self, basis: str | None = None) -> int:
        return int(sum(m for m, _, b in self.entries.values() if basis in (None, b)))

    def decisions(self, basis: str | None = None) -> int:
        """Decisions that can fail: a family counts once, any other entry once per comparison."""
        return int(sum(1 if name in self.families else m for name, (m, _, b) in self.entries.items()
                       if basis in (None, b)))

    def over_limit(self) -> list[str]:
        """The bases whose total exceeds its ``SUITE_LIMITS`` entry."""
        return [b for b in BASES if self.total(b) > SUITE_LIMITS[b]]

    def clear(self) -> None:
        self.entries.clear()
        self.families.clear()

    def snapshot(self) -> tuple[dict, frozenset]:
        """(entries, family names): what another process or a later :meth:`merge` needs."""
        return dict(self.entries), frozenset(self.families)

    def merge(self, snapshot: tuple[dict, frozenset]) -> None:
        """Add a :meth:`snapshot` (a worker's registrations; a name registered again replaces its entry)."""
        entries, families = snapshot
        for name, entry in entries.items():
            self.entries[name] = entry
            (self.families.add if name in families else self.families.discard)(name)


BUDGET = Budget()


def register(name: str, comparisons: int = 1, *, rate: float | None = None, sided: int = 2,
             basis: str = "normal", family: bool = False) -> float:
    """:meth:`Budget.register` on the global :data:`BUDGET`."""
    return BUDGET.register(name, comparisons, rate=rate, sided=sided, basis=basis, family=family)


def family_k(comparisons: int, *, rate: float = PER_COMPARISON, sided: int = 2) -> float:
    """The per-entry k of a family of ``comparisons`` entries at family-wise ``rate`` (Bonferroni:
    ``k_for(rate / comparisons)``), without registering it (for power tests and tables)."""
    check_int("comparisons", comparisons, minimum=1)
    return k_for(rate / comparisons, sided=sided)


def _log_term(rate: float, sided: int) -> float:
    check_real("rate", rate, low=0.0, high=0.5, low_open=True, high_open=False)
    if sided not in (1, 2):
        raise ValueError(f"sided must be 1 or 2; got {sided!r}")
    return math.log(2.0 * sided / rate)


def bernstein_halfwidth(stderr: float, samples: int, width: float, *, rate: float = EXACT_RATE,
                        sided: int = 2) -> float:
    """Empirical Bernstein half-width (Maurer & Pontil 2009, Thm 4) for the mean of ``samples`` i.i.d.
    draws in an interval of width ``width``, with ``stderr`` = sqrt(V_n / n) (V_n unbiased):
    SE sqrt(2 L) + 7 W L / (3 (n - 1)), L = ln(2 sided / rate) (each side at rate / sided).
    Holds for every n >= 2, no asymptotics."""
    check_real("stderr", stderr, low=0.0)
    check_real("width", width, low=0.0)
    n = check_int("samples", samples, minimum=2)
    big_l = _log_term(rate, sided)
    return float(stderr) * math.sqrt(2.0 * big_l) + 7.0 * float(width) * big_l / (3.0 * (n - 1))


def edgeworth_tail_ratio(skewness: float, samples: int, k: float) -> float:
    """Bound 1 + |g| (2k^2 + 1) phi(k) / (6 sqrt(n) (1 - Phi(k))) on the ratio of a one-sided tail of the
    studentised mean to the normal tail at k, from the first Edgeworth term (Hall 1987, q1(x) =
    g (2x^2 + 1) / 6 for the studentised mean; g the skewness of one draw). Two-sided tails: the term
    cancels (q1 is even), the error is O(1/n)."""
    n = check_int("samples", samples, minimum=2)
    check_real("k", k, low=0.0, low_open=True)
    mills = float(_normal.pdf(k) / _normal.sf(k))
    return 1.0 + abs(float(skewness)) * (2.0 * k * k + 1.0) * mills / (6.0 * math.sqrt(n))


def edgeworth_two_sided_ratio(skewness: float, excess_kurtosis: float, samples: int, k: float) -> float:
    """Bound on P(|T| > k) / P(|Z| > k) for the studentised mean T of ``samples`` i.i.d. draws, from the
    second Edgeworth term (the first cancels in a two-sided tail): Hall (1992, The Bootstrap and Edgeworth
    Expansion, Sec. 2.6) gives P(|T| <= x) = 2 Phi(x) - 1 + 2 q2(x) phi(x) / n + O(n^-2) with

        q2(x) = x [e (x^2 - 3) / 12 - g^2 (x^4 + 2 x^2 - 3) / 18 - (x^2 + 3) / 4]

    (g the skewness, e the excess kurtosis of one draw; the variance with divisor n, whose tail is the
    heavier of the two divisors). Returned: 1 + |q2(k)| phi(k) / (n (1 - Phi(k))), each term of q2 taken
    in absolute value. The last term is the t distribution's own (Gaussian draws)."""
    n = check_int("samples", samples, minimum=2)
    check_real("k", k, low=0.0, low_open=True)
    x = float(k)
    mills = float(_normal.pdf(x) / _normal.sf(x))
    q2 = x * (abs(float(excess_kurtosis)) * abs(x * x - 3.0) / 12.0
              + float(skewness) ** 2 * (x ** 4 + 2.0 * x * x - 3.0) / 18.0 + (x * x + 3.0) / 4.0)
    return 1.0 + q2 * mills / n


def edgeworth_prob_positive(mean, var, k3, k4=None):
    """P(X > 0) from the first cumulants of X, by the Edgeworth expansion of its CDF (Hall 1992, 2.2):
    with z = mean / sd, g = k3 / sd^3, e = k4 / sd^4 and the Hermite polynomials He,

        P(X > 0) = Phi(z) + phi(z) g He2(z) / 6                                (one term, ``k4`` None)
                          - phi(z) (e He3(z) / 24 + g^2 He5(z) / 72)           (two terms).

    For a sum of m i.i.d. terms the one-term form errs by O(1/m), the two-term form by O(m^-3/2).
    Arrays broadcast; var must be > 0. Not clipped to [0, 1]: a value outside says the expansion fails."""
    mean, var, k3 = (np.asarray(a, dtype=float) for a in (mean, var, k3))
    sd = np.sqrt(var)
    z, g = mean / sd, k3 / sd ** 3
    phi = np.exp(-0.5 * z * z) / math.sqrt(2.0 * math.pi)
    out = _normal.cdf(z) + phi * g * (z * z - 1.0) / 6.0
    if k4 is not None:
        e = np.asarray(k4, dtype=float) / var ** 2
        out = out - phi * (e * (z ** 3 - 3.0 * z) / 24.0 + g * g * (z ** 5 - 10.0 * z ** 3 + 15.0 * z) / 72.0)
    return out


def k_statistics(count: int, s1, s2, s3, s4) -> tuple:
    """(k1, k2, k3, k4), the unbiased cumulant estimates (Fisher's k-statistics), from ``count`` draws'
    power sums s_p = sum x^p (arrays broadcast). Central moments m_p from the raw ones, then
    k2 = n m2 / (n-1), k3 = n^2 m3 / ((n-1)(n-2)), k4 = n^2 ((n+1) m4 - 3 (n-1) m2^2) / ((n-1)(n-2)(n-3))."""
    n = check_int("count", count, minimum=4)
    mu = np.asarray(s1, dtype=float) / n
    r2, r3, r4 = (np.asarray(s, dtype=float) / n for s in (s2, s3, s4))
    m2 = r2 - mu * mu
    m3 = r3 - 3.0 * mu * r2 + 2.0 * mu ** 3
    m4 = r4 - 4.0 * mu * r3 + 6.0 * mu * mu * r2 - 3.0 * mu ** 4
    k2 = n * m2 / (n - 1)
    k3 = n * n * m3 / ((n - 1) * (n - 2))
    k4 = n * n * ((n + 1) * m4 - 3.0 * (n - 1) * m2 * m2) / ((n - 1) * (n - 2) * (n - 3))
    return mu, k2, k3, k4


@dataclass(frozen=True)
class MeanCheck:
    """|estimate - prediction| <= k SE + bias_bound."""

    estimate: float
    stderr: float
    prediction: float
    k: float
    bias_bound: float

    @property
    def z(self) -> float:
        return z_score(self.estimate - self.prediction, self.stderr)

    @property
    def tolerance(self) -> float:
        return self.k * self.stderr + self.bias_bound

    @property
    def passed(self) -> bool:
        return abs(self.estimate - self.prediction) <= self.tolerance

    def as_dict(self) -> dict:
        return {"estimate": self.estimate, "stderr": self.stderr, "prediction": self.prediction,
                "z": self.z, "k": self.k, "bias_bound": self.bias_bound,
                "tolerance": self.tolerance, "passed": self.passed}


def mean_check(estimate: float, stderr: float, prediction: float, *, k: float,
               bias_bound: float = 0.0, width: float | None = None, samples: int | None = None,
               rate: float = EXACT_RATE) -> MeanCheck:
    """Two-sided mean check. Normal basis: tolerance k SE + bias_bound. With ``width`` (the draws lie in
    an interval of that width) and ``samples``: the empirical Bernstein half-width at ``rate`` replaces
    k SE (k is then reported as that half-width / SE)."""
    check_real("stderr", stderr, low=0.0)
    check_real("bias_bound", bias_bound, low=0.0)
    check_real("k", k, low=0.0, low_open=True)
    if width is not None:
        half = bernstein_halfwidth(stderr, samples, width, rate=rate, sided=2)
        k = half / stderr if stderr > 0 else math.inf
        if not math.isfinite(k):  # SE = 0: the half-width is the range term alone
            return MeanCheck(float(estimate), 0.0, float(prediction), 1.0, float(bias_bound) + half)
    return MeanCheck(float(estimate), float(stderr), float(prediction), float(k), float(bias_bound))


@dataclass(frozen=True)
class OrderingCheck:
    """One-sided test of E X > 0 from a mean difference and its SE (X = S_ij - S_ik per sample):
    confirmed when mean > half-width, refuted when mean < -half-width (half-width = k SE on the normal
    basis, the empirical Bernstein half-width when ``halfwidth`` is set)."""

    mean: float
    stderr: float
    k: float
    halfwidth: float | None = None

    @property
    def z(self) -> float:
        return z_score(self.mean, self.stderr)

    @property
    def threshold(self) -> float:
        return self.k * self.stderr if self.halfwidth is None else self.halfwidth

    @property
    def verdict(self) -> str:
        """'confirmed', 'refuted' or 'inconclusive'."""
        if self.halfwidth is None:  # z rule (SE = 0 gives z = +-inf or 0)
            return "confirmed" if self.z > self.k else "refuted" if self.z < -self.k else "inconclusive"
        if self.mean > self.halfwidth:
            return "confirmed"
        if self.mean < -self.halfwidth:
            return "refuted"
        return "inconclusive"

    def as_dict(self) -> dict:
        out = {"mean": self.mean, "stderr": self.stderr, "z": self.z, "k": self.k, "verdict": self.verdict}
        if self.halfwidth is not None:
            out["bernstein_halfwidth"] = self.halfwidth
        return out


def ordering_check(mean: float, stderr: float, *, k: float, width: float | None = None,
                   samples: int | None = None, rate: float = EXACT_RATE) -> OrderingCheck:
    """One-sided ordering test. Normal basis: threshold k SE. With ``width`` and ``samples`` the
    one-sided empirical Bernstein half-width at ``rate`` is the threshold (reported as k = half / SE)."""
    check_real("stderr", stderr, low=0.0)
    check_real("k", k, low=0.0, low_open=True)
    if width is not None:
        half = bernstein_halfwidth(stderr, samples, width, rate=rate, sided=1)
        return OrderingCheck(float(mean), float(stderr), half / stderr if stderr > 0 else math.inf, half)
    return OrderingCheck(float(mean), float(stderr), float(k))


def clopper_pearson_interval(count: int, samples: int, *, rate: float = EXACT_RATE) -> tuple[float, float]:
    """Clopper-Pearson ("exact") binomial interval at two-sided level 1 - rate: its coverage is >= 1 - rate
    for every p and n (non-asymptotic; :meth:`Proportion.confidence_interval`)."""
    samples = check_int("samples", samples, minimum=1)
    count = check_int("count", count, minimum=0, maximum=samples)
    check_real("rate", rate, low=0.0, high=0.5, low_open=True, high_open=False)
    return Proportion(count, samples).confidence_interval(1.0 - float(rate), method="exact")


def wilson_interval(count: int, samples: int, *, k: float) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion at normal quantile k (two-sided level
    1 - 2 P(Z > k)): :meth:`Proportion.confidence_interval`."""
    samples = check_int("samples", samples, minimum=1)
    count = check_int("count", count, minimum=0, maximum=samples)
    check_real("k", k, low=0.0, low_open=True)
    return Proportion(count, samples).confidence_interval(1.0 - 2.0 * float(_normal.sf(k)))


# ------------------------------------------------------------------------------------------------------
# Trained-model decisions: one statistic per training seed, tests that can say no, Holm over the family
# ------------------------------------------------------------------------------------------------------
#: the family-wise error rate of all trained-model verdicts together (Holm's procedure over the family)
TRAINED_FWER = 0.05
#: the power at which a design's smallest detectable effect is reported
POWER = 0.8
RULES = ("directional", "equivalence")


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
    non-finite value makes every p NaN: it decides nothing."""

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

    def _upper(self, shift: float) -> float:
        """P(T >= (x - shift) / se): small when mu > shift is shown."""
        if not self.finite:
            return math.nan
        return float(_t.sf(z_score(self.mean - shift, self.se), self.df))

    def _lower(self, shift: float) -> float:
        """P(T <= (x - shift) / se): small when mu < shift is shown."""
        if not self.finite:
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
        pc, pr = self.p_confirm, self.p_refute
        if math.isnan(pc) or math.isnan(pr):
            return math.nan
        return min(1.0, 2.0 * min(pc, pr))

    def interval(self, level: float = 0.95) -> tuple[float, float]:
        """Student's (Welch's) two-sided interval of the statistic."""
        if not self.finite:
            return (math.nan, math.nan)
        q = float(_t.ppf(0.5 + _check_level(level) / 2, self.df)) * self.se
        return (self.mean - q, self.mean + q)

    def detectable(self, alpha: float) -> float:
        """The smallest effect the design detects with probability POWER at one-sided level alpha / 2 (the
        pair's share): (t_{1 - alpha/2} + t_{POWER}) se, at this design's seeds and measured spread. For an
        equivalence test, the smallest margin it confirms with that power when the true effect is 0."""
        if not self.finite:
            return math.nan
        k = float(_t.isf(alpha / 2, self.df))
        pw = float(_t.ppf(POWER if self.rule == "directional" else 0.5 + POWER / 2, self.df))
        return (k + pw) * self.se

    def to_json(self) -> dict:
        lo, hi = self.interval()
        return {"rule": self.rule, "side": self.side, "boundary": self.boundary, "margin": self.margin,
                "values": list(self.values), "other": None if self.other is None else list(self.other),
                "mean": self.mean, "se": self.se, "df": self.df, "interval": [lo, hi],
                "p_confirm": self.p_confirm, "p_refute": self.p_refute}


def holm(pvalues, alpha: float = TRAINED_FWER) -> list[bool]:
    """Holm's step-down procedure: which hypotheses are rejected at family-wise error rate ``alpha`` (NaN
    p-values are never rejected and count in the family)."""
    check_real("alpha", alpha, low=0.0, high=1.0, low_open=True, high_open=True)
    p = [1.0 if (x is None or math.isnan(x)) else float(x) for x in pvalues]
    m = len(p)
    out = [False] * m
    for rank, i in enumerate(sorted(range(m), key=lambda q: p[q])):
        if p[i] > alpha / (m - rank):
            break
        out[i] = True
    return out


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


__all__ += ["TRAINED_FWER", "POWER", "RULES", "SeedTest", "SeedDecision", "holm", "decide_family"]
