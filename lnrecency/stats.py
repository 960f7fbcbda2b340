"""Calibrated Monte Carlo comparisons and the suite's false-alarm budget.

Every Monte Carlo check is one of
  * mean:      |estimate - prediction| <= k * SE + bias_bound          (two-sided, k = z_{1 - a/2})
  * ordering:  claim "E X > 0" is confirmed when X_bar / SE > k,      (one-sided, k = z_{1 - a})
               refuted when X_bar / SE < -k, inconclusive otherwise;
  * frequency: a proportion lies inside its Wilson interval at level 1 - a.
With a per-comparison false-alarm rate a, the probability that a *correct* claim fails by chance in one
run of m registered comparisons is, by the union (Bonferroni) bound, <= sum of the a's. The estimates are
means of >= 1000 i.i.d. samples with finite moments, so the normal tail is used for the SE (central limit
theorem; the approximation error of the tail is stated as part of the assumption, not bounded).

``BUDGET`` is the registry: each check calls :func:`register` with its name, the number of comparisons it
makes and the per-comparison rate it uses, and receives the matching k. ``proofs_check/conftest.py`` prints
``BUDGET.total()`` in pytest's terminal summary; the suite keeps it <= 1e-6.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from scipy.stats import binomtest as _binomtest
from scipy.stats import norm as _normal
from scipy.stats import t as _t

from lnrecency.config import check_int, check_real

__all__ = ["Estimate", "Proportion", "z_score", "PER_COMPARISON", "SUITE_LIMIT", "Budget", "BUDGET", "k_for", "register",
           "MeanCheck", "OrderingCheck", "mean_check", "ordering_check", "wilson_interval"]

#: default per-comparison false-alarm rate of one registered Monte Carlo comparison.
PER_COMPARISON = 1e-9
#: the suite's total false-alarm budget (union bound over all registered comparisons).
SUITE_LIMIT = 1e-6


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


def k_for(rate: float, *, sided: int = 2) -> float:
    """Normal quantile k with P(|Z| > k) = rate (sided=2) or P(Z > k) = rate (sided=1)."""
    check_real("rate", rate, low=0.0, high=0.5, low_open=True, high_open=False)
    if sided not in (1, 2):
        raise ValueError(f"sided must be 1 or 2; got {sided!r}")
    return float(_normal.isf(rate / sided))


@dataclass
class Budget:
    """Registry of Monte Carlo comparisons: name -> (comparisons, per-comparison rate)."""

    entries: dict = field(default_factory=dict)

    def register(self, name: str, comparisons: int = 1, *, rate: float = PER_COMPARISON,
                 sided: int = 2) -> float:
        """Record ``comparisons`` comparisons at false-alarm ``rate`` each; return their k.

        Registering the same name again replaces the entry (a check run twice is one check).
        """
        check_int("comparisons", comparisons, minimum=1)
        k = k_for(rate, sided=sided)
        self.entries[name] = (comparisons, rate)
        return k

    def total(self) -> float:
        """Union bound: P(some correct registered comparison fails by chance) <= sum m * a."""
        return float(sum(m * a for m, a in self.entries.values()))

    def comparisons(self) -> int:
        return int(sum(m for m, _ in self.entries.values()))

    def clear(self) -> None:
        self.entries.clear()


BUDGET = Budget()


def register(name: str, comparisons: int = 1, *, rate: float = PER_COMPARISON, sided: int = 2) -> float:
    """:meth:`Budget.register` on the global :data:`BUDGET`."""
    return BUDGET.register(name, comparisons, rate=rate, sided=sided)


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
               bias_bound: float = 0.0) -> MeanCheck:
    check_real("stderr", stderr, low=0.0)
    check_real("bias_bound", bias_bound, low=0.0)
    check_real("k", k, low=0.0, low_open=True)
    return MeanCheck(float(estimate), float(stderr), float(prediction), float(k), float(bias_bound))


@dataclass(frozen=True)
class OrderingCheck:
    """One-sided test of E X > 0 from a mean difference and its SE (X = S_ij - S_ik per sample)."""

    mean: float
    stderr: float
    k: float

    @property
    def z(self) -> float:
        return z_score(self.mean, self.stderr)

    @property
    def verdict(self) -> str:
        """'confirmed' (z > k), 'refuted' (z < -k) or 'inconclusive'."""
        if self.z > self.k:
            return "confirmed"
        if self.z < -self.k:
            return "refuted"
        return "inconclusive"

    def as_dict(self) -> dict:
        return {"mean": self.mean, "stderr": self.stderr, "z": self.z, "k": self.k,
                "verdict": self.verdict}


def ordering_check(mean: float, stderr: float, *, k: float) -> OrderingCheck:
    check_real("stderr", stderr, low=0.0)
    check_real("k", k, low=0.0, low_open=True)
    return OrderingCheck(float(mean), float(stderr), float(k))


def wilson_interval(count: int, samples: int, *, k: float) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion at normal quantile k (two-sided level
    1 - 2 P(Z > k)): :meth:`Proportion.confidence_interval`."""
    samples = check_int("samples", samples, minimum=1)
    count = check_int("count", count, minimum=0, maximum=samples)
    check_real("k", k, low=0.0, low_open=True)
    return Proportion(count, samples).confidence_interval(1.0 - 2.0 * float(_normal.sf(k)))
