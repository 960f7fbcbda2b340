"""Token embeddings at width d, drawn in two exactly equivalent representations.

Both draw the m = n + 1 raw vectors [z_1, ..., z_n, c] and build the embeddings of docs/model.md from them:
  * gaussian:   z, c ~ N(0, I_d / d),   x_i = sqrt(1 - alpha) z_i + sqrt(alpha) c;
  * normalized: z, c ~ N(0, I_d),       x_i = v_i / |v_i|,  v_i = z_i + sqrt(alpha / (1 - alpha)) c.

``direct``: the raw vectors in R^d; LayerNorm's unit vector is u = ones / sqrt(d).  Cost O(n^2 d).

``gram`` (d-independent, exact in distribution): rotate R^d so that u = e_1 (the law of iid Gaussian
vectors is rotation invariant). Then <u, z_a> are iid N(0, s^2) (s^2 = 1/d or 1), independent of the
other d - 1 coordinates, and every quantity the model computes (inner products, linear combinations,
the projection on u) depends on those d - 1 coordinates only through their m x m Gram matrix
W ~ Wishart_m(d - 1, s^2 I). By the Bartlett decomposition W = L L^T with L lower triangular,
L_kk = s sqrt(chi2(d - k)) (k = 1..m), L_kl = s N(0, 1) (k > l), all independent. Vector a is then
represented by the m + 1 coordinates (<u, z_a>, L_a1, ..., L_am) and u by e_1. This needs d - 1 >= m;
for d < n + 2 the gram method uses the direct coordinates (same law, and no more than n + 2 of them).

Reproducibility: the stream of draws is cut into fixed blocks of ``block_size(...)`` samples (a
function of n, d and the representation only, never of ``chunk``); block b is drawn by its own
np.random.Generator(PCG64(SeedSequence(seed, spawn_key=(b,)))), so results do not depend on how the
samples are chunked, and a run with more samples extends the stream of a shorter one.
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from lnrecency.model.config import ModelConfig

__all__ = ["Representation", "draw_range", "embed", "theory_gram", "RNG_BLOCK_BYTES"]

RNG_BLOCK_BYTES = 2**19  # bytes of raw draws per RNG block (at least one sample per block)


class Representation:
    """Coordinates of one method at width d: ``dim`` coordinates per vector, LayerNorm's unit vector ``u``."""

    def __init__(self, n: int, d: int, method: str):
        self.n, self.d, self.m = n, d, n + 1
        self.bartlett = method == "gram" and d - 1 >= self.m
        self.dim = self.m + 1 if self.bartlett else d
        if self.bartlett:
            self._rows, self._cols = np.tril_indices(self.m, k=-1)
            self._df = (d - 1 - np.arange(self.m)).astype(float)  # chi2(d - k), k = 1..m

    @property
    def u(self) -> np.ndarray:
        """LayerNorm's unit vector (1, ..., 1) / sqrt(d) in these coordinates (e_1 in the Bartlett form)."""
        if self.bartlett:
            return np.eye(1, self.dim)[0]
        return np.full(self.dim, 1.0 / math.sqrt(self.d))

    @property
    def name(self) -> str:
        return "bartlett" if self.bartlett else "direct"

    @property
    def randoms(self) -> int:
        """Random numbers :meth:`draw` takes per sample: every coordinate of the m vectors (direct), or the e_1
        column, the m chi variables and the m (m - 1) / 2 normals below the diagonal (Bartlett)."""
        return 2 * self.m + self._rows.size if self.bartlett else self.m * self.dim

    def block_size(self) -> int:
        return max(1, RNG_BLOCK_BYTES // (8 * self.m * self.dim))

    def draw(self, rng: np.random.Generator, size: int, out: np.ndarray | None = None) -> np.ndarray:
        """(size, m, dim) standard-scale (s = 1) raw vectors [z_1..z_n, c]; written into ``out`` (a C-contiguous
        float64 array of that shape) when given: the same numbers, without a new array and its copy."""
        if out is None:
            out = np.empty((size, self.m, self.dim))
        if not self.bartlett:
            return rng.standard_normal(out=out)
        out.fill(0.0)
        out[:, :, 0] = rng.standard_normal((size, self.m))
        diag = np.sqrt(rng.chisquare(self._df, size=(size, self.m)))
        idx = np.arange(self.m)
        out[:, idx, idx + 1] = diag
        out[:, self._rows, self._cols + 1] = rng.standard_normal((size, self._rows.size))
        return out


def draw_range(rep: Representation, entropy: int | Sequence[int], start: int, stop: int, *,
               out: np.ndarray | None = None) -> np.ndarray:
    """Raw draws of samples [start, stop) of the stream: block b comes from its own generator
    PCG64(SeedSequence(entropy, spawn_key=(b,))), so any range is reproducible on its own. ``out``: a C-contiguous
    float64 array of shape (stop - start, m, dim) to write them into (a worker's reused buffer: no fresh pages)."""
    size = rep.block_size()
    shape = (stop - start, rep.m, rep.dim)
    if out is None:
        out = np.empty(shape)
    elif out.shape != shape or out.dtype != np.float64 or not out.flags.c_contiguous:
        raise ValueError(f"out must be a C-contiguous float64 array of shape {shape}; got {out.dtype} {out.shape}")
    for b in range(start // size, (stop - 1) // size + 1):
        rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(entropy, spawn_key=(b,))))
        lo, hi = max(start - b * size, 0), min(stop - b * size, size)
        target = out[b * size + lo - start: b * size + hi - start]
        if (lo, hi) == (0, size):  # a whole block: drawn in place (no copy)
            rep.draw(rng, size, out=target)
        else:
            target[...] = rep.draw(rng, size)[lo:hi]
    return out


def embed(raw: np.ndarray, config: ModelConfig, d: int, out: np.ndarray | None = None) -> np.ndarray:
    """Embeddings (docs/model.md) x (batch, n, dim) from standard-scale raw vectors [z_1..z_n, c] (batch, n+1, dim);
    ``out``: a float64 array of that shape to write them into (the same numbers)."""
    alpha = float(config.alpha)
    z, c = raw[:, :-1, :], raw[:, -1:, :]
    if config.embedding == "gaussian":
        return np.divide(math.sqrt(1.0 - alpha) * z + math.sqrt(alpha) * c, math.sqrt(d), out=out)
    v = np.add(z, math.sqrt(alpha / (1.0 - alpha)) * c, out=out)
    v *= (1.0 / np.sqrt(np.einsum("...d,...d->...", v, v)))[..., None]  # 7x faster than np.linalg.norm here
    return v


def theory_gram(raw: np.ndarray, config: ModelConfig, d: int, u: np.ndarray, *,
                centred: bool = True) -> np.ndarray:
    """Per draw, the Gram matrix W whose law the finite-width theory expands (batch, n, n):
    Wishart_n(d - r, G0 / d), r = directions the normalisation removes, and the draw's scores are
    exactly the limit recursion started at W (:mod:`lnrecency.theory.finite_width`).

      gaussian:   W = Gram of the embeddings x_i, centred (P_u x_i) when the normalisation centres;
      normalized: W = (1 - alpha) Gram(v) / d of the unnormalised tokens v_i = z_i + sqrt(alpha/(1-alpha)) c
                  (the first layer sees its l2-normalised Gram; always uncentred).
    ``centred=False``: the uncentred Gram, Wishart_n(d, G0 / d) for every normalisation (mean exactly G0).
    """
    if config.embedding == "gaussian":
        x = embed(raw, config, d)
        if centred and config.normalisation.centres:
            x = x - (x @ u)[..., None] * u
        return x @ x.swapaxes(1, 2)
    alpha = float(config.alpha)
    v = raw[:, :-1, :] + math.sqrt(alpha / (1.0 - alpha)) * raw[:, -1:, :]
    return (1.0 - alpha) / d * (v @ v.swapaxes(1, 2))
