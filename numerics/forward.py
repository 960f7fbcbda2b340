"""The attention stack at finite width d, on a batch of token vectors in any orthonormal coordinates.

One layer, from state h (shape (batch, n, D)), with the shared layer definitions of
:mod:`lnrecency.model.layers` (the same objects the limit recursion uses on Gram matrices):

    S_ij = lam <N(h_i), N(h_j)>  (j <= i),   P = causal row softmax of S,
    o_i  = sum_{k <= i} P_ik N(h_k),          h' = Update(h, o).

LayerNorm's centring is the projection removing the component along a *given* unit vector ``u``, so
the direct sampler (coordinates of R^d, u = ones / sqrt(d)) and the d-independent Gram sampler (reduced
coordinates in which u = e_1) run this same code; the Gram sampler checks first that the normalisation
commutes with rotations fixing u (:func:`lnrecency.model.layers.check_rotation_invariance`).
"""
from __future__ import annotations

from typing import Iterator

import numpy as np

from lnrecency.model.config import ModelConfig
from lnrecency.model.layers import Arithmetic, causal_mask
from lnrecency.numerics.workspace import give_back, take

__all__ = ["forward"]

_FLOAT = Arithmetic()


def forward(x: np.ndarray, config: ModelConfig, layers: int, u: np.ndarray, sink: float | None = None, *,
            reuse: bool = False) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Yield (S, o) per layer: scores (batch, n, n) with zeros above the diagonal, outputs (batch, n, D).
    ``sink``: a logit bonus on key 1 in every softmax (:func:`lnrecency.theory.limit.iterate_limit`); S without it.
    ``reuse``: every layer writes into working arrays this call takes from its thread's pool
    (:mod:`lnrecency.numerics.workspace`) and gives back when it ends, so a layer's (S, o) are overwritten by this
    call's next layer (for a caller that reads them before asking for it), never by another call alive at once.
    The same numbers either way; ``x`` is never written."""
    mask = causal_mask(x.shape[1]).astype(np.float64)  # multiplied in float: no cast of a boolean mask per use
    lam, gamma = float(config.lam), float(config.gamma)
    norm, update = config.normalisation, config.update
    # a scaling normalisation gives every token the length gain, so S_ii = lam gain^2 >= S_ij (lam > 0)
    diagonal_is_max = norm.scales and not (sink is not None and sink > 0)
    b, n, dim = x.shape
    vec, sq = (b, n, dim), (b, n, n)
    # reuse: the arrays are this call's until it ends (taken out of the thread's pool), never another live call's
    owned = {name: take(f"forward.{name}", shape) for name, shape in
             (("nh", vec), ("s", sq), ("w", sq), ("o", vec), ("h", vec))} if reuse else {}
    ws = {name: owned[name][1] if reuse else None for name in ("nh", "s", "w", "o", "h")}
    try:
        yield from _layers(x, ws, norm, update, u, lam, gamma, sink, mask, diagonal_is_max, layers)
    finally:
        for name, (flat, _) in owned.items():
            give_back(f"forward.{name}", flat)


def _layers(x, ws, norm, update, u, lam, gamma, sink, mask, diagonal_is_max, layers):
    h = x
    for layer in range(layers):
        nh = norm.vectors(h, u, out=ws["nh"])
        s = np.matmul(nh, nh.swapaxes(1, 2), out=ws["s"])
        if lam != 1.0:
            s *= lam
        if sink is None:
            w = _FLOAT.causal_softmax(s, mask, diagonal_is_max=diagonal_is_max, out=ws["w"])
        else:
            biased = s.copy()
            biased[..., 0] += sink
            w = _FLOAT.causal_softmax(biased, mask, diagonal_is_max=diagonal_is_max, out=ws["w"])
        o = np.matmul(w, nh, out=ws["o"])
        s *= mask
        yield s, o
        if layer + 1 < layers:  # the last layer's state is not read
            h = update.vectors(h, o, gamma, out=ws["h"])
