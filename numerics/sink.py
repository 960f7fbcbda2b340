"""The attention sink at finite width d by Monte Carlo, with standard errors (the limit and the definitions:
:mod:`lnrecency.theory.sink`).

Each draw is the model's forward pass on iid embeddings (:func:`lnrecency.numerics.forward.forward` with its
``sink`` bonus on key 1, drawn as :func:`lnrecency.numerics.simulate.simulate_scores` draws them); per draw the
scores S (without the bonus), the sink's share P_i1 of each row's attention, and each layer's slope over keys
>= 2 (:func:`lnrecency.inference.recency_slope.layer_slope`). The estimates are means over draws with standard
errors (sample standard deviation / sqrt(samples)); the slope's is that of the per-draw slopes.

>>> from lnrecency.numerics.sink import simulate_sink
>>> est = simulate_sink(8, 2, 64, 200, b=2.0, seed=0, norm="layernorm")
>>> est.scores.shape, est.shares.shape, est.slopes.shape
((2, 8, 8), (2, 8), (2,))
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from lnrecency.inference.recency_slope import row_slope_weights, row_weights
from lnrecency.model.config import ModelConfig, make_config
from lnrecency.model.layers import Arithmetic, causal_mask
from lnrecency.numerics.forward import forward
from lnrecency.numerics.samplers import Representation, draw_range, embed
from lnrecency.runtime.arguments import check_int, check_real
from lnrecency.runtime.memory import available_memory

__all__ = ["SinkEstimate", "simulate_sink"]

#: draws per forward batch
BATCH = 256


@dataclass(frozen=True)
class SinkEstimate:
    """Means and standard errors over ``samples`` draws at width ``d``: ``scores`` / ``scores_se`` (layers, n, n),
    ``shares`` / ``shares_se`` (layers, n) the sink's share P_i1, ``slopes`` / ``slopes_se`` (layers,) the layer
    slope over keys >= 2."""

    scores: np.ndarray
    scores_se: np.ndarray
    shares: np.ndarray
    shares_se: np.ndarray
    slopes: np.ndarray
    slopes_se: np.ndarray
    samples: int
    d: int
    b: float
    config: ModelConfig


def simulate_sink(n: int, layers: int, d: int, samples: int, *, b: float, seed: Any,
                  config: ModelConfig | None = None, method: str = "gram", **params: Any) -> SinkEstimate:
    """Monte Carlo of the stack with a logit bonus ``b`` on key 1 in every softmax (module docstring)."""
    n = check_int("n", n, minimum=4)
    layers = check_int("layers", layers, minimum=1)
    d = check_int("d", d, minimum=2)
    samples = check_int("samples", samples, minimum=2)
    b = float(check_real("b", b, low=-50.0, high=50.0))
    cfg = make_config(config, **params)
    rep = Representation(n, d, method)
    batch = min(BATCH, samples)
    need = 8 * batch * (n + 1) * rep.dim * 4 + 8 * batch * layers * n * n * 3
    if need > available_memory():
        raise MemoryError(f"simulate_sink(n={n}, layers={layers}, d={d}) needs about {need / 2**20:.0f} MiB per "
                          f"batch of {batch} draws; lower d or n")
    mask = causal_mask(n)
    w, omega = row_slope_weights(n, 1), row_weights(n, 1)
    sums = {k: 0.0 for k in ("s", "s2", "p", "p2", "k", "k2")}
    soft = Arithmetic()
    for start in range(0, samples, batch):
        stop = min(samples, start + batch)
        x = embed(draw_range(rep, seed, start, stop), cfg, d)
        s_all = np.empty((stop - start, layers, n, n))
        p_all = np.empty((stop - start, layers, n))
        for layer, (s, _) in enumerate(forward(x, cfg, layers, rep.u, sink=b)):
            s_all[:, layer] = s
            biased = s.copy()
            biased[..., 0] += b
            p_all[:, layer] = soft.causal_softmax(biased, mask)[..., 0]
        k_all = np.einsum("blij,ij->bli", s_all, w) @ omega  # (batch, layers)
        for key, v in (("s", s_all), ("p", p_all), ("k", k_all)):
            sums[key] = sums[key] + v.sum(axis=0)
            sums[key + "2"] = sums[key + "2"] + (v * v).sum(axis=0)

    def mean_se(key):
        mean = sums[key] / samples
        var = np.maximum(sums[key + "2"] / samples - mean * mean, 0.0) * samples / (samples - 1)
        return mean, np.sqrt(var / samples)

    (s_m, s_se), (p_m, p_se), (k_m, k_se) = mean_se("s"), mean_se("p"), mean_se("k")
    return SinkEstimate(s_m, s_se, p_m, p_se, np.atleast_1d(k_m), np.atleast_1d(k_se), samples, d, b, cfg)
