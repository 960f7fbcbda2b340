"""Attention rollout in the exact d -> infinity limit: the quantity Wu et al. (ICML 2025, "On the Emergence of
Position Bias in Transformers", Theorem 4.1) prove their primacy result about, beside the per-layer scores the
paper (and claims T1, C2, C6) speak of.

Definitions (Abnar & Zuidema 2020; ours where stated):

* the **attention rollout** of layers 1..l is the product R^(l) = P^(l) P^(l-1) ... P^(1) of the causal attention
  weights (rows are probability vectors: R^(l)_ij is the cumulative probability that token i's layer-l
  representation traces back to input token j, "P^(t)(z_i = j)" in Wu et al.). Under a causal mask R^(l)_i1
  grows with l: the rollout concentrates on token 1 (primacy), Wu et al.'s Theorem 4.1.
* the **residual-aware rollout** (our definition, for models with the residual h' = h + gamma o): each layer mixes
  with A^(l) = (I + gamma P^(l)) / (1 + gamma), the identity path weighed against the attention path by their
  coefficients in the update, normalised so that rows stay probability vectors; with gamma = 1 it is Abnar &
  Zuidema's 0.5 I + 0.5 A. It ignores the normalisation's per-token gains 1 / |h_k| (a rollout counts paths of
  attention weight, not of vector length).

In the limit every P^(l) is deterministic (the limit recursion, :mod:`lnrecency.theory.limit`), so the rollout is
exact: no expectation of a product is taken. At finite d the Monte Carlo rollout
(:func:`lnrecency.numerics.rollout.simulate_rollout`) averages the product of each draw's weights; it tends to this
limit as d grows.

>>> from lnrecency.theory.rollout import limit_rollout
>>> r = limit_rollout(4, 2, norm="layernorm")
>>> r.shape, bool(abs(r[1].sum(axis=1) - 1).max() < 1e-12)
((2, 4, 4), True)
"""
from __future__ import annotations

from typing import Any

import numpy as np

from lnrecency.model.config import ModelConfig, make_config
from lnrecency.runtime.arguments import check_choice, check_int, check_real

__all__ = ["limit_rollout", "rollout_of", "uniform_rollout", "MIXES"]

#: how a layer mixes in the rollout: "auto" (the residual-aware mix when the model has the residual, else the
#: attention weights), "attention" (P^(l) always), "residual" ((I + gamma P^(l)) / (1 + gamma) always)
MIXES = ("auto", "attention", "residual")


#: seconds per n^3 of one layer's product (numpy float64 on this project's 2-core machine, BLAS on its threads;
#: measured 1.7e-11 to 3.4e-11 at n = 500-2000, benchmarks/bench_estimates.py --only rollout); the estimate is
#: this times the limit's load margin
ROLLOUT_SECONDS_PER_N3 = 2.2e-11
#: working arrays of a rollout: the weights (or their residual mix), the output, the running product and one temporary
ROLLOUT_ARRAYS = 4


def check_rollout_cost(n: int, matrices: int, what: str) -> None:
    """Refuse, before any allocation, a rollout of ``matrices`` (n, n) layers whose arrays exceed the available
    memory (MemoryError naming n) or whose products are estimated above the float64 time limit (ValueError)."""
    from lnrecency.runtime.memory import available_memory
    from lnrecency.runtime.timelimit import refusal, time_limit
    from lnrecency.theory.limit import ALWAYS_AVAILABLE, MAX_SECONDS

    need = (ROLLOUT_ARRAYS * matrices + 2) * n * n * 8
    if need > ALWAYS_AVAILABLE:
        limit = available_memory()
        if need > limit:
            raise MemoryError(f"{what} at n={n} over {matrices} layer(s) needs about {need / 2**20:.0f} MiB, more "
                              f"than the available {limit / 2**20:.0f} MiB; use a smaller n")
    seconds = rollout_seconds(n, matrices)
    limit_s = time_limit(MAX_SECONDS)
    if seconds > limit_s:
        raise refusal(f"{what} at n={n} over {matrices} layer(s)", seconds, limit_s, "use fewer layers or a smaller n")


def rollout_seconds(n: int, matrices: int) -> float:
    """Estimated seconds of a rollout of ``matrices`` (n, n) layers: one n^3 product a layer, with the load margin."""
    from lnrecency.theory.limit import LOAD_MARGIN

    return ROLLOUT_SECONDS_PER_N3 * LOAD_MARGIN * matrices * float(n) ** 3


def _check_gamma(gamma: Any) -> float | None:
    """The residual weight of the mix: None (attention alone) or a finite real > 0, as in the model's config."""
    if gamma is None:
        return None
    return float(check_real("gamma", gamma, low=0.0, low_open=True))


def _check_weights(weights: Any) -> np.ndarray:
    """A real array (..., layers, n, n) of finite causal weights: square in its last two axes, at least one layer."""
    try:
        w = np.asarray(weights)
    except (TypeError, ValueError) as e:
        raise ValueError(f"weights must be a real array (..., layers, n, n); got {type(weights).__name__}: {e}") \
            from None
    if w.dtype.kind not in "biuf" or w.dtype.kind == "b":
        raise ValueError(f"weights must be a real array (..., layers, n, n); got dtype {w.dtype}")
    if w.ndim < 3 or w.shape[-1] != w.shape[-2] or w.shape[-1] < 1 or w.shape[-3] < 1:
        raise ValueError(f"weights must be an array (..., layers, n, n) with n >= 1 and at least one layer; got shape "
                         f"{w.shape}")
    w = w.astype(float, copy=False)
    if not np.isfinite(w).all():
        raise ValueError("weights must be finite; got NaN or inf")
    return w


def rollout_of(weights: np.ndarray, *, gamma: float | None = None) -> np.ndarray:
    """The rollout of a stack of causal weights ``weights`` (..., layers, n, n): R^(l) = A^(l) ... A^(1) with
    A^(l) = P^(l) (``gamma`` None) or (I + gamma P^(l)) / (1 + gamma); the same shape, R^(l) at ``[..., l-1, :, :]``."""
    w = _check_weights(weights)
    gamma = _check_gamma(gamma)
    n = w.shape[-1]
    check_rollout_cost(n, int(np.prod(w.shape[:-2])), "rollout_of")
    if gamma is not None:
        w = (np.eye(n) + gamma * w) / (1.0 + gamma)
    out = np.empty_like(w)
    r = np.broadcast_to(np.eye(n), w.shape[:-3] + (n, n))
    for layer in range(w.shape[-3]):
        r = w[..., layer, :, :] @ r
        out[..., layer, :, :] = r
    return out


def uniform_rollout(n: int, layers: int, *, gamma: float | None = None) -> np.ndarray:
    """The rollout of uniform causal attention (every query attends equally to its keys, P_ij = 1/i for j <= i):
    the reference a measured rollout is read against, Wu et al.'s concentration with no learned preference at all.
    (layers, n, n), as :func:`rollout_of`; the last query's row counts paths, e.g. R^(2)_n1 = H_n / n and
    R^(2)_nn = 1 / n^2.

    >>> r = uniform_rollout(64, 2)
    >>> round(float(r[1, -1, 0]), 5), float(r[1, -1, -1]) == 1 / 64 ** 2
    (0.07412, True)
    """
    n, layers = check_int("n", n, minimum=1), check_int("layers", layers, minimum=1)
    gamma = _check_gamma(gamma)
    check_rollout_cost(n, layers, "uniform_rollout")
    p = np.tril(np.ones((n, n))) / np.arange(1, n + 1)[:, None]
    return rollout_of(np.broadcast_to(p, (layers, n, n)), gamma=gamma)


def limit_rollout(n: int, layers: int, *, config: ModelConfig | None = None, mix: str = "auto",
                  **params: Any) -> np.ndarray:
    """The exact d -> infinity attention rollout, a float64 array (layers, n, n): ``[l-1, i-1, j-1]`` is R^(l)_ij,
    the cumulative probability over the input tokens j of token i after layers 1..l (module docstring); zero above
    the diagonal, rows summing to 1.

    The model comes from ``config`` or from keywords (norm, residual, gamma, lam, alpha), as in
    :func:`lnrecency.theory.limit.limit_scores`; ``mix`` one of :data:`MIXES`.
    """
    from lnrecency.theory.limit import limit_trajectory

    n = check_int("n", n, minimum=1)
    layers = check_int("layers", layers, minimum=1)
    check_choice("mix", mix, MIXES)
    cfg = make_config(config, **params)
    weights = limit_trajectory(n, layers, config=cfg).weights.astype(float)
    residual = cfg.residual if mix == "auto" else mix == "residual"
    return rollout_of(weights, gamma=float(cfg.gamma) if residual else None)
