"""The attention stack of SPEC "Model", on a batch of token vectors in any orthonormal coordinates.

One layer, from state h (shape (batch, n, D)):

    S_ij = lam <N(h_i), N(h_j)>  (j <= i),   P = causal row softmax of S (row maximum subtracted),
    o_i  = sum_{k <= i} P_ik N(h_k),          h'_i = o_i  or  h_i + gamma o_i (residual).

Normalisations, exact at every finite width d:
  * none:      N(h) = h;
  * l2:        N(h) = h / |h|;
  * rmsnorm:   N(h) = h / rms(h) / sqrt(d) = h / |h|  (identical to l2 at every d);
  * layernorm: N(h) = (h - mean(h)) / std(h) / sqrt(d) with the population std, no eps, no affine map,
               = (h - <u, h> u) / |h - <u, h> u|,   u = (1, ..., 1) / sqrt(d):
               LayerNorm's centring is the projection removing the component along the unit vector u.
               It is NOT l2 at finite d (it discards one of the d directions).

Centring is written as a projection on a *given* unit vector ``u`` so that the direct sampler
(coordinates of R^d, u = ones / sqrt(d)) and the d-independent Gram sampler (reduced coordinates in
which u = e_1) run this same code. Only rotation-invariant operations are used (inner products, linear
combinations, the projection on u), which is what makes the reduced representation exact.
"""
from __future__ import annotations

from typing import Iterator

import numpy as np

from lnrecency.config import ModelConfig

__all__ = ["normalise", "forward"]


def normalise(h: np.ndarray, norm: str, u: np.ndarray) -> np.ndarray:
    """N(h) along the last axis (SPEC "Normalisation N"); ``u`` is the unit vector LayerNorm centres out."""
    if norm == "none":
        return h
    if norm == "layernorm":
        h = h - (h @ u)[..., None] * u
    return h / np.sqrt(np.einsum("...d,...d->...", h, h))[..., None]


def forward(x: np.ndarray, config: ModelConfig, layers: int, u: np.ndarray
            ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Yield (S, o) per layer: scores (batch, n, n) with zeros above the diagonal, outputs (batch, n, D)."""
    n = x.shape[1]
    lower = np.tril(np.ones((n, n)))
    masked = np.where(lower > 0, 0.0, -np.inf)  # causal mask added to the scores before the softmax
    lam, gamma = float(config.lam), float(config.gamma)
    h = x
    for _ in range(layers):
        nh = normalise(h, config.norm, u)
        s = nh @ nh.swapaxes(1, 2)
        s *= lam
        w = s + masked
        w -= w.max(axis=2, keepdims=True)
        np.exp(w, out=w)
        w /= w.sum(axis=2, keepdims=True)
        o = w @ nh
        s *= lower
        yield s, o
        h = h + gamma * o if config.residual else o
