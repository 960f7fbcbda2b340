"""The attention rollout at finite width d by Monte Carlo, with standard errors (the limit:
:func:`lnrecency.theory.rollout.limit_rollout`; definitions there).

Each draw is the model's forward pass on iid embeddings (:mod:`lnrecency.numerics.forward`, drawn exactly as
:func:`lnrecency.numerics.simulate.simulate_scores` draws them, so the same seed gives the same inputs); its causal
weights P^(l) = softmax of its scores, and its rollout the product of its layers' mixes. The estimate is the mean
over draws of the rollout and its standard error (sample standard deviation / sqrt(samples)). The product of
weights is not the product of expected weights: at finite d the two differ by O(1/d) (a covariance), which is the
gap the limit comparison measures.

>>> from lnrecency.numerics.rollout import simulate_rollout
>>> est = simulate_rollout(4, 2, 64, 200, seed=0, norm="layernorm")
>>> est.mean.shape, est.stderr.shape, est.samples
((2, 4, 4), (2, 4, 4), 200)
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from lnrecency.model.config import ModelConfig, make_config
from lnrecency.model.layers import Arithmetic, causal_mask
from lnrecency.numerics.forward import forward
from lnrecency.numerics.samplers import Representation, draw_range, embed
from lnrecency.runtime.arguments import check_choice, check_int
from lnrecency.runtime.memory import available_memory
from lnrecency.theory.rollout import MIXES, rollout_of

__all__ = ["RolloutEstimate", "simulate_rollout"]

#: draws per forward batch
BATCH = 256


@dataclass(frozen=True)
class RolloutEstimate:
    """The Monte Carlo rollout: ``mean`` and ``stderr`` (layers, n, n), ``[l-1, i-1, j-1]`` for R^(l)_ij, over
    ``samples`` draws at width ``d`` (zero above the diagonal, where the rollout is exactly 0)."""

    mean: np.ndarray
    stderr: np.ndarray
    samples: int
    d: int
    config: ModelConfig
    mix: str

    def z(self, reference: np.ndarray) -> np.ndarray:
        """(mean - reference) / stderr on and below the diagonal (0 where both are exact), NaN above it."""
        diff = self.mean - np.asarray(reference, dtype=float)
        low = np.tril(np.ones(self.mean.shape[-2:], dtype=bool))
        with np.errstate(divide="ignore", invalid="ignore"):
            z = np.where(self.stderr > 0, diff / self.stderr, np.where(diff == 0, 0.0, np.inf * np.sign(diff)))
        return np.where(low, z, np.nan)


def simulate_rollout(n: int, layers: int, d: int, samples: int, *, seed: Any, config: ModelConfig | None = None,
                     mix: str = "auto", method: str = "gram", **params: Any) -> RolloutEstimate:
    """Mean and standard error of the attention rollout over ``samples`` draws at width ``d`` (module docstring);
    ``mix`` as in :func:`lnrecency.theory.rollout.limit_rollout`, ``method`` as in
    :func:`lnrecency.numerics.simulate.simulate_scores`."""
    n = check_int("n", n, minimum=1)
    layers = check_int("layers", layers, minimum=1)
    d = check_int("d", d, minimum=2)
    samples = check_int("samples", samples, minimum=2)
    check_choice("mix", mix, MIXES)
    check_choice("method", method, ("direct", "gram"))
    cfg = make_config(config, **params)
    rep = Representation(n, d, method)
    batch = min(BATCH, samples)
    need = 8 * batch * (n + 1) * rep.dim * 4 + 8 * batch * layers * n * n * 3
    if need > available_memory():
        raise MemoryError(f"simulate_rollout(n={n}, layers={layers}, d={d}) needs about {need / 2**20:.0f} MiB per "
                          f"batch of {batch} draws; lower d or n")
    residual = cfg.residual if mix == "auto" else mix == "residual"
    gamma = float(cfg.gamma) if residual else None
    mask = causal_mask(n)
    total = np.zeros((layers, n, n))
    square = np.zeros((layers, n, n))
    scale = Arithmetic()
    for start in range(0, samples, batch):
        stop = min(samples, start + batch)
        x = embed(draw_range(rep, seed, start, stop), cfg, d)
        weights = np.empty((stop - start, layers, n, n))
        for layer, (s, _) in enumerate(forward(x, cfg, layers, rep.u)):
            weights[:, layer] = scale.causal_softmax(s, mask)
        r = rollout_of(weights, gamma=gamma)
        total += r.sum(axis=0)
        square += (r * r).sum(axis=0)
    mean = total / samples
    var = np.maximum(square / samples - mean * mean, 0.0) * samples / (samples - 1)
    return RolloutEstimate(mean, np.sqrt(var / samples), samples, d, cfg, mix)
