"""Streaming moments of Monte Carlo draws (the summaries they produce, Estimate and Proportion, are
lnrecency.inference.stats's).

Moments are merged chunk by chunk with the pairwise update of Chan, Golub and LeVeque (1979):
for two groups (n_a, mean_a, M2_a) and (n_b, mean_b, M2_b), with delta = mean_b - mean_a,

    mean = mean_a + delta * n_b / n,   M2 = M2_a + M2_b + delta^2 * n_a n_b / n,   n = n_a + n_b,

which is numerically stable in float64 (no sum of squares of large numbers is ever formed).
The standard error of a sample mean is sqrt(M2 / (n - 1) / n).
"""
from __future__ import annotations

import numpy as np

__all__ = ["Moments", "moments"]


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
