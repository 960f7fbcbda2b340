"""Streaming moments and the two summaries of a Monte Carlo answer: a mean and a proportion.

Moments are merged chunk by chunk with the pairwise update of Chan, Golub and LeVeque (1979):
for two groups (n_a, mean_a, M2_a) and (n_b, mean_b, M2_b), with delta = mean_b - mean_a,

    mean = mean_a + delta * n_b / n,   M2 = M2_a + M2_b + delta^2 * n_a n_b / n,   n = n_a + n_b,

which is numerically stable in float64 (no sum of squares of large numbers is ever formed).
The standard error of a sample mean is sqrt(M2 / (n - 1) / n).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from lnrecency.config import check_real

__all__ = ["Estimate", "Proportion", "Moments", "moments"]


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
        q = float(stats.t.ppf(0.5 + _check_level(level) / 2, self.samples - 1))
        return (self.mean - q * self.stderr, self.mean + q * self.stderr)

    def zscore(self, value: float = 0.0) -> float:
        """(mean - value) / stderr: the number of standard errors between the estimate and value."""
        diff = self.mean - float(value)
        if self.stderr == 0.0:
            return 0.0 if diff == 0.0 else math.copysign(math.inf, diff)
        return diff / self.stderr


@dataclass(frozen=True)
class Proportion:
    """Per-instance frequency ``count / samples`` of an event, with a binomial confidence interval."""

    count: int
    samples: int

    @property
    def estimate(self) -> float:
        return self.count / self.samples

    def confidence_interval(self, level: float = 0.95, method: str = "wilson") -> tuple[float, float]:
        """Wilson score (method="wilson") or Clopper-Pearson (method="exact") interval, scipy.stats.binomtest."""
        if method not in ("wilson", "exact"):
            raise ValueError(f"method must be 'wilson' or 'exact'; got {method!r}")
        ci = stats.binomtest(self.count, self.samples).proportion_ci(
            confidence_level=_check_level(level), method=method)
        return (float(ci.low), float(ci.high))


def moments(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(mean, M2) over axis 0 of a chunk: M2 = sum_b (x_b - mean)^2."""
    mean = x.mean(axis=0)
    dev = x - mean
    return mean, np.einsum("b...,b...->...", dev, dev)


class Moments:
    """Running count, mean and centred second moment M2 of arrays of a fixed shape (float64)."""

    def __init__(self, shape: tuple[int, ...]):
        self.count = 0
        self.mean = np.zeros(shape)
        self.m2 = np.zeros(shape)

    def merge(self, count: int, mean: np.ndarray, m2: np.ndarray) -> np.ndarray:
        """Merge a group's (count, mean, M2); return delta = mean_b - mean_a (before the update)."""
        total = self.count + count
        delta = mean - self.mean
        self.mean += delta * (count / total)
        self.m2 += m2 + delta * delta * (self.count * count / total)
        self.count = total
        return delta

    def add(self, x: np.ndarray) -> None:
        """Add a chunk of draws stacked along axis 0."""
        self.merge(x.shape[0], *moments(x))

    def stderr(self) -> np.ndarray:
        """sqrt(M2 / (n - 1) / n): the standard error of the mean (requires n >= 2)."""
        return np.sqrt(self.m2 / ((self.count - 1) * self.count))
