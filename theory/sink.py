"""The attention sink in the parameter-free model (issue 50): a first token that attention favours.

Language models trained with BOS first give it a large, position-dependent share of layer 1's attention, and in
the project's LayerNorm models layer 2 reads that share (issue 50). Here the d -> infinity model gets the simplest
such sink: a logit bonus ``b`` on key 1 in every layer's softmax (:func:`lnrecency.theory.limit.iterate_limit`,
``sink``); the scores S = lam Gh are reported without it, and key 1 is left out of the slope, as in the probe.

In closed form (layer 2, alpha = 0, no residual; :func:`closed_form_layer2`, proved in :func:`sign_of_slope`):
with Z_j = e^b + (j - 2) + e^lam the layer-1 normaliser of row j >= 2 and E = e^lam,

    layer-1 share of the sink at row i:  P_i1 = e^b / Z_i                      (decays like 1/i)
    O_ij = (e^{2b} + (j - 2) + E) / (Z_i Z_j)          (2 <= j < i, the output Gram)
    without normalisation:  S^(2)_ij = lam O_ij,                  in j: (A + j) / (B + j)
    normalised:             S^(2)_ij = lam O_ij / sqrt(O_ii O_jj), in j: (A + j) / sqrt(C + j)
    with A = e^{2b} + E - 2, B = e^b + E - 2, C = e^{2b} + e^{2 lam} - 2,

so without normalisation the keys' scores *fall* with j whenever b > 0 (A > B: earlier-token bias, growing with
the sink), and are flat at b = 0 (the no-sink theory); normalised they rise with j for every b >= 0
(2C > A: recency), by an amount that shrinks as the sink grows (the slope is about e^{-2b} / 2 per key for large
b). The sink's decaying share is what carries the normalised recency here too: the output o_j is mostly the sink's
token, with weight P_j1, and its length falls with j; the normalisation divides it out, and what is left grows
with the content keys a row shares with row i.

**A learned read-out** (issue 67, ours). Trained models add to layer 2's logits a read-out of each key's component
along the first token. In the limit (alpha = 0: the input tokens orthonormal, so layer 1's normalised states are the
tokens themselves) that component is exact: with the residual h^(2)_j = e_j + gamma sum_k P_jk e_k, so key j's
normalised coordinate along e_1 is c_j = gamma P_j1 / sqrt(G^(2)_jj) for j >= 2 (without a normalisation at layer 2:
gamma P_j1). :func:`readout_slope` is the layer-2 slope of S_ij = lam Gh_ij + g c_j for a gain g: the sink limit's
slope plus g times the slope of c (:func:`bos_coordinate`). The gain is measured from a model (the level of its
read-out, :func:`lnrecency.experiments.studies.v3_paths.readout_gain`), never fitted to the slope it predicts.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import sympy

from lnrecency.inference.recency_slope import layer_slope
from lnrecency.model.config import ModelConfig
from lnrecency.runtime.arguments import check_exact, check_flag, check_real

__all__ = ["SinkLimit", "sink_limit", "closed_form_layer2", "sign_of_slope", "bos_coordinate", "readout_slope"]


@dataclass(frozen=True)
class SinkLimit:
    """The limit with a sink of bonus ``b``: ``scores`` (layers, n, n) S = lam Gh (NaN above the diagonal),
    ``shares`` (layers, n) the sink's share P_i1 of each row's attention, and the layer slope over keys >= 2."""

    n: int
    b: float
    config: ModelConfig
    scores: np.ndarray
    shares: np.ndarray

    def slope(self, layer: int) -> float:
        """The layer's recency slope, key 1 (the sink) left out
        (:func:`lnrecency.inference.recency_slope.layer_slope`); ``layer`` counts from 1."""
        from lnrecency.runtime.arguments import check_int

        layers = self.scores.shape[0]
        layer = check_int("layer", layer, minimum=1, maximum=layers)
        return layer_slope(self.scores[layer - 1], skip=1)


def sink_limit(n: int, layers: int = 2, *, b: float, config: ModelConfig | None = None, **params: Any) -> SinkLimit:
    """The float64 limit of the stack with a logit bonus ``b`` on key 1 in every softmax (module docstring).
    The model comes from ``config`` or keywords (norm, residual, gamma, lam, alpha), as in
    :func:`lnrecency.theory.limit.limit_scores`."""
    from lnrecency.model.config import make_config
    from lnrecency.runtime.arguments import check_int
    from lnrecency.theory.limit import check_memory, check_time, iterate_limit, limit_backend

    b = float(check_real("b", b, low=-50.0, high=50.0))
    n, layers = check_int("n", n, minimum=1), check_int("layers", layers, minimum=1)
    cfg, backend = make_config(config, **params), limit_backend(None, False)
    check_memory(n, layers)
    check_time(n, layers)
    with np.errstate(over="ignore", invalid="ignore"):
        run = list(iterate_limit(n, layers, cfg, backend, last_output=False, sink=b))
    scores = np.stack([np.asarray(layer.scores, dtype=float) for layer in run])
    shares = np.stack([np.asarray(layer.weights, dtype=float)[:, 0] for layer in run])
    if not (np.isfinite(scores[:, np.tril(np.ones((n, n), dtype=bool))]).all() and np.isfinite(shares).all()):
        raise ValueError(f"the float64 limit with sink b = {b} overflows at n = {n}; use a smaller |b| or lam")
    return SinkLimit(n, b, cfg, scores, shares)


def closed_form_layer2(normalised: bool, lam: Any = None, b: Any = None):
    """(S^(2)_ij, P_i1) as sympy expressions in the symbols i, j (2 <= j < i), b and lam (or the values given), at
    alpha = 0 without a residual (module docstring)."""
    i, j = sympy.symbols("i j", positive=True)
    normalised = check_flag("normalised", normalised)
    lam = sympy.Symbol("lam", positive=True) if lam is None else check_exact("lam", lam, low=0.0, low_open=True)
    b = sympy.Symbol("b", real=True) if b is None else check_exact("b", b)
    e, big = sympy.exp(b), sympy.exp(lam)

    def z(k):
        return e + (k - 2) + big

    o_ij = (e ** 2 + (j - 2) + big) / (z(i) * z(j))
    if not normalised:
        return lam * o_ij, e / z(i)

    def o_kk(k):
        return (e ** 2 + (k - 2) + sympy.exp(2 * lam)) / z(k) ** 2

    return lam * o_ij / sympy.sqrt(o_kk(i) * o_kk(j)), e / z(i)


def sign_of_slope(normalised: bool) -> dict:
    """The sign of d S^(2)_ij / d j for 2 <= j < i, b >= 0, lam > 0, from the closed form: the j-dependent factor
    f(j) and the sign of d log f / d j, simplified by sympy to an expression whose sign is evident."""
    normalised = check_flag("normalised", normalised)
    j = sympy.Symbol("j", positive=True)
    lam = sympy.Symbol("lam", positive=True)
    b = sympy.Symbol("b", nonnegative=True)
    a = sympy.exp(2 * b) + sympy.exp(lam) - 2
    if normalised:
        c = sympy.exp(2 * b) + sympy.exp(2 * lam) - 2
        f = (a + j) / sympy.sqrt(c + j)
        # d log f / dj = 1/(a + j) - 1/(2 (c + j)) = (2c - a + j) / (2 (a + j)(c + j))
        numerator = sympy.expand(2 * c - a + j)
    else:
        bb = sympy.exp(b) + sympy.exp(lam) - 2
        f = (a + j) / (bb + j)
        # d log f / dj = 1/(a + j) - 1/(bb + j) = (bb - a) / ((a + j)(bb + j))
        numerator = sympy.expand(bb - a)
    derivative = sympy.simplify(sympy.diff(sympy.log(f), j))
    return {"f": f, "dlogf_dj": derivative, "numerator": numerator,
            "check": sympy.simplify(derivative - numerator / (2 * (a + j) * (c + j)) if normalised
                                    else derivative - numerator / ((a + j) * (bb + j))) == 0}


def bos_coordinate(n: int, *, b: float, config: ModelConfig | None = None, **params: Any) -> np.ndarray:
    """Each key's coordinate c_j along the first token at layer 2's normalised input, in the limit with a sink of
    bonus ``b`` (module docstring): (n,), NaN at j = 1 (the sink itself, out of every slope). Needs alpha = 0 (the
    tokens orthonormal); the model comes from ``config`` or keywords, as in :func:`sink_limit`."""
    from lnrecency.model.config import make_config
    from lnrecency.runtime.arguments import check_int
    from lnrecency.theory.limit import check_memory, check_time, iterate_limit, limit_backend

    b = float(check_real("b", b, low=-50.0, high=50.0))
    n = check_int("n", n, minimum=2)
    cfg = make_config(config, **params)
    if float(cfg.alpha) != 0.0:
        raise ValueError(f"bos_coordinate needs alpha = 0 (orthonormal tokens); got alpha={float(cfg.alpha):g}")
    check_memory(n, 2)
    check_time(n, 2)
    with np.errstate(over="ignore", invalid="ignore"):
        first, second = iterate_limit(n, 2, cfg, limit_backend(None, False), last_output=False, sink=b)
    share = np.asarray(first.weights, dtype=float)[:, 0]
    weight = float(cfg.gamma) if cfg.residual else 1.0
    c = weight * share
    if cfg.normalisation.scales:
        c = c / np.sqrt(np.diag(np.asarray(second.gram, dtype=float)))
    c[0] = np.nan
    if not np.isfinite(c[1:]).all():
        raise ValueError(f"the float64 limit with sink b = {b} overflows at n = {n}; use a smaller |b| or lam")
    return c


def readout_slope(n: int, *, b: float, gain: float, config: ModelConfig | None = None, **params: Any) -> float:
    """The layer-2 slope of S_ij = lam Gh_ij + gain c_j (module docstring): :func:`sink_limit`'s slope plus ``gain``
    times the slope of the row-constant read-out of :func:`bos_coordinate` (key 1 left out, as in the probe)."""
    gain = float(check_real("gain", gain, low=-1e6, high=1e6))
    base = sink_limit(n, 2, b=b, config=config, **params).slope(2)
    c = bos_coordinate(n, b=b, config=config, **params)
    return base + gain * layer_slope(np.tile(c, (n, 1)), skip=1)
