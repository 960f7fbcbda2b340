"""An estimate travels with its uncertainty: :class:`Estimate` (a value and its standard error) and
:class:`Proportion` (a count of successes), the z rule, Student-t intervals, and which SEs are float rounding."""
from __future__ import annotations

import math
from dataclasses import dataclass

from scipy.stats import binomtest as _binomtest
from scipy.stats import t as _t

from lnrecency.runtime.arguments import check_real

#: an estimate whose SE is below this (relative to max(1, |estimate|)) has no randomness (float rounding only,
#: e.g. the diagonal S_ii = lam under a normalisation): it is checked, shown, but not counted as a comparison
DETERMINISTIC_SE = 1e-12


def is_deterministic(estimate: float, stderr: float) -> bool:
    """Whether a Monte Carlo entry carries no randomness (:data:`DETERMINISTIC_SE`)."""
    return float(stderr) <= DETERMINISTIC_SE * max(1.0, abs(float(estimate)))


def z_score(diff: float, stderr: float) -> float:
    """The one z rule: diff / SE; with SE = 0 (a deterministic quantity) 0 when diff = 0, else +-inf."""
    diff, stderr = float(diff), float(stderr)
    if stderr > 0:
        return diff / stderr
    if math.isnan(diff) or math.isnan(stderr):
        return math.nan
    return 0.0 if diff == 0.0 else math.copysign(math.inf, diff)


def check_level(level: float) -> float:
    return float(check_real("level", level, low=0.0, high=1.0, low_open=True, high_open=True))


@dataclass(frozen=True)
class Estimate:
    """A Monte Carlo mean with its standard error over ``samples`` iid draws."""

    mean: float
    stderr: float
    samples: int

    def confidence_interval(self, level: float = 0.95) -> tuple[float, float]:
        """Two-sided Student-t interval mean +- t_{(1+level)/2, samples-1} * stderr."""
        q = float(_t.ppf(0.5 + check_level(level) / 2, self.samples - 1))
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
            confidence_level=check_level(level), method=method)
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
    half = float(_t.ppf(0.5 + check_level(level) / 2, len(v) - 1)) * sd / math.sqrt(len(v))
    return m, m - half, m + half
