"""The layer recency slope's weights, defined once: the probe (:mod:`lnrecency.experiments.probes.probe`) and the
theory of the attention sink (:mod:`lnrecency.theory.sink`) read a layer's slope with the same row and key weights.

A row i's slope is the least-squares slope of its scores S_ij against the key j over skip < j < i
(:func:`row_slope_weights`); the layer's slope is the mean of the row slopes of rows with at least
:data:`MIN_KEYS` such keys, each weighted by its number of keys (:func:`row_weights`). ``skip`` = 1 leaves the first
key (BOS, the attention sink) out. :func:`layer_slope` applies both to one score matrix.
"""
from __future__ import annotations

import numpy as np

__all__ = ["MIN_KEYS", "row_slope_weights", "row_weights", "layer_slope"]

#: the fewest keys a row needs to enter the layer slope
MIN_KEYS = 3


def row_slope_weights(n: int, skip: int = 0) -> np.ndarray:
    """W (n, n) with sum_j W_ij S_ij = least-squares slope of S_ij against j over the keys skip < j < i of
    row i (1-indexed; rows with at least 2 such keys, zero rows otherwise; ``skip`` = 1 leaves the BOS key
    out)."""
    w = np.zeros((n, n))
    for i in range(skip + 3, n + 1):
        j = np.arange(skip + 1, i, dtype=float)
        c = j - j.mean()
        w[i - 1, skip: i - 1] = c / (c @ c)
    return w


def row_weights(n: int, skip: int = 0, min_keys: int = MIN_KEYS) -> np.ndarray:
    """omega (n,), summing to 1: the weight of row i in the layer's recency slope, proportional to its number
    of keys i - 1 - skip for rows with at least ``min_keys`` keys, 0 otherwise."""
    keys = np.arange(1, n + 1) - 1 - skip
    w = np.where(keys >= min_keys, keys, 0).astype(float)
    if w.sum() == 0:
        raise ValueError(f"n = {n} leaves no row with {min_keys} keys (BOS excluded: {bool(skip)}); raise n")
    return w / w.sum()


def layer_slope(scores: np.ndarray, skip: int = 0, min_keys: int = MIN_KEYS) -> float:
    """The layer slope of one (n, n) score matrix (entries above the diagonal and the skipped keys are not read):
    sum_i omega_i sum_j W_ij S_ij (module docstring)."""
    s = np.asarray(scores, dtype=float)
    n = s.shape[-1]
    w, omega = row_slope_weights(n, skip), row_weights(n, skip, min_keys)
    return float(omega @ np.nansum(np.where(w != 0, s, 0.0) * w, axis=-1))
