"""Layer 2 of a trained attn2 decoder taken apart (plan v3, issue 67): the exact path decomposition of its logits and
the three interventions of the plan, in float64 from the model's own weights.

The attn2 decoders are pre-normalisation, residual, attention only, without positions (NoPE). Layer 2's input is
the residual stream h_j = e_j + sum_h sum_k P1_h[j, k] O_h v_h(y1_k): a key's own embedding e_j, the BOS path (the
k = 1 terms: layer 1's weight on BOS times BOS's value, in the stream's space) and the other content (k >= 2). The
normalisation maps h_j to y_j = g * C(h_j) / sigma_j + b (LayerNorm: C centres, sigma_j = sqrt(var h_j + eps);
RMSNorm: C = identity, sigma_j = sqrt(mean h_j^2 + eps), b = 0; centring only: sigma_j = 1; none: y_j = h_j). As C
is linear, each key splits exactly into one term per path over the same per-token scale sigma_j, plus the bias b,
and so does each layer-2 logit s_ij = scale (W_Q y_i) . (W_K y_j) (the query kept whole). The layer slope is
linear in the logits (:func:`lnrecency.inference.recency_slope.layer_slope`, the first key left out), so the paths'
slopes sum to the model's slope.

Each normalised path's logit is u_ij r_j with r_j = 1 / sigma_j. Within a row, over the keys the slope reads, it is
split exactly (the row's slope weights sum to zero, so a row constant has no slope) into
  * ``scale``: mean_j(u_ij) (r_j - mean r): the per-token scale's decay, the paper's mechanism;
  * ``numerator``: (u_ij - mean u) mean_j(r_j): the path's own change along the keys (for the BOS path: the decay of
    layer 1's BOS share);
  * ``interaction``: the rest, (u_ij - mean u)(r_j - mean r).
"""
from __future__ import annotations

import numpy as np

from lnrecency.inference.recency_slope import row_slope_weights, row_weights

__all__ = ["PATHS", "Layer2", "layer2", "decompose", "slopes", "layer2_slopes", "intervened_logits", "INTERVENTIONS",
           "readout_gain", "affine_readout", "readout_shape"]

#: the paths of a layer-2 key, in the order reported
PATHS = ("own", "bos", "other", "bias")
#: the plan's interventions: (a) layer 2's QK replaced by c I, (b) the BOS value direction removed from the keys,
#: (c) the per-token scale at layer 2's input fixed to its mean over the window's tokens 2..n
INTERVENTIONS = ("qk_identity", "bos_direction", "scale_fixed")
SKIP = 1  # the first key (BOS, or the first text token: the sink either way) is left out of every slope
CHUNK = 400  # windows per float64 pass of layer2_slopes (memory: about 100 MB at n = 64)


class Layer2:
    """What layer 2 reads, per window (float64 numpy; B windows, n positions, d width, H heads of width dh):
    ``parts`` {own, bos, other}: (B, n, d) the stream's paths; ``sigma`` (B, n) the per-token scale (ones without
    a normalisation); ``g``, ``b`` (d,) the gain and bias; ``centre``; ``wq``, ``wk`` (H, dh, d); ``scale``;
    ``bos_value`` (B, d): layer 1's head-mean value vector of the first token in the stream's space."""

    def __init__(self, parts, sigma, g, b, centre, wq, wk, scale, bos_value, norm):
        self.parts, self.sigma, self.g, self.b, self.centre = parts, sigma, g, b, centre
        self.wq, self.wk, self.scale, self.bos_value, self.norm = wq, wk, scale, bos_value, norm

    def shape(self, x: np.ndarray) -> np.ndarray:
        """The normalisation's linear part: g * C(x) (no scale, no bias)."""
        if self.centre:
            x = x - x.mean(-1, keepdims=True)
        return x * self.g

    def normed(self, sigma: np.ndarray | None = None) -> np.ndarray:
        """y = g * C(h) / sigma + b (B, n, d), with the model's own sigma or the one given."""
        h = sum(self.parts.values())
        return self.shape(h) / (self.sigma if sigma is None else sigma)[..., None] + self.b

    def logits(self, q_in: np.ndarray, k_in: np.ndarray) -> np.ndarray:
        """Head-mean layer-2 logits (B, n, n) of query inputs ``q_in`` and key inputs ``k_in`` (B, n, d)."""
        q = np.einsum("hed,bnd->bhne", self.wq, q_in)
        k = np.einsum("hed,bnd->bhne", self.wk, k_in)
        return self.scale * np.einsum("bhie,bhje->bij", q, k) / self.wq.shape[0]


def layer2(model, tokens: np.ndarray) -> Layer2:
    """Layer 2's inputs taken apart for ``tokens`` (B, n), from the model's weights in float64. The model must be an
    attn2 decoder (pre-normalisation, residual, no MLP, no positions): anything else is refused."""
    import copy

    import torch

    cfg = model.cfg
    if (cfg.n_layers != 2 or cfg.mlp or not cfg.residual or cfg.placement != "pre" or cfg.positions != "none"
            or cfg.is_identity):
        raise ValueError(f"the path decomposition reads attn2 decoders (2 layers, pre-normalisation, residual, no MLP, "
                         f"no positions); got {cfg.label()}")
    m = copy.deepcopy(model).double().eval()
    d, heads = cfg.d_model, cfg.n_heads
    dh = d // heads
    with torch.no_grad():
        x = torch.from_numpy(np.asarray(tokens, dtype=np.int64))
        e = m.embed(x)
        b1, b2 = m.blocks
        y1 = b1.pre(e)
        _, _, w1, v1, _ = b1.attn(y1)  # w1 (B, H, n, n), v1 (B, H, n, dh)
        wo = b1.attn.o.weight.view(d, heads, dh)  # out = sum_h O_h head_h
        vo = torch.einsum("bhkc,dhc->bhkd", v1, wo)  # each key's value per head in the stream's space
        bos = torch.einsum("bhj,bhd->bjd", w1[..., 0], vo[:, :, 0])
        every = torch.einsum("bhjk,bhkd->bjd", w1, vo)
        parts = {"own": e.numpy(), "bos": bos.numpy(), "other": (every - bos).numpy()}
        h2 = e + every
        mid = b2.pre(h2)  # the model's own layer-2 input, to check the reconstruction against
        norm = cfg.norm
        if norm in ("layernorm", "layernorm-stopscale", "layernorm-fixgain"):  # the same forward
            sigma = torch.sqrt(h2.var(-1, unbiased=False) + b2.pre.eps)
            g, bias, centre = b2.pre.weight, b2.pre.bias, True
        elif norm == "centre":  # no per-token scale
            sigma = torch.ones(h2.shape[:2], dtype=torch.float64)
            g, bias, centre = b2.pre.weight, b2.pre.bias, True
        elif norm == "rmsnorm":
            sigma = torch.sqrt(h2.pow(2).mean(-1) + b2.pre.eps)
            g, bias, centre = b2.pre.weight, torch.zeros(d, dtype=torch.float64), False
        else:
            one = torch.ones(d, dtype=torch.float64)
            sigma, g, bias, centre = torch.ones(h2.shape[:2], dtype=torch.float64), one, 0 * one, False
        wq = b2.attn.q.weight.view(heads, dh, d)
        wk = b2.attn.k.weight.view(heads, dh, d)
        out = Layer2(parts, sigma.numpy(), g.numpy(), bias.numpy(), centre, wq.numpy(), wk.numpy(),
                     float(b2.attn.scale), vo[:, :, 0].mean(1).numpy(), norm)
    if not np.allclose(out.normed(), mid.numpy(), rtol=1e-9, atol=1e-9):
        raise ValueError("the decomposition does not rebuild the model's layer-2 input: the decoder is not the one "
                         "this code reads")
    return out


def slopes(logits: np.ndarray) -> np.ndarray:
    """Each window's layer slope (B,) of head-mean logits (B, n, n), the first key left out."""
    n = logits.shape[-1]
    w, omega = row_slope_weights(n, SKIP), row_weights(n, SKIP)
    return np.einsum("i,bij,ij->b", omega, logits, w)


def layer2_slopes(model, windows: np.ndarray, decompose: bool) -> tuple[np.ndarray, dict | None, float]:
    """Per-window layer-2 slopes (the first key left out), the path decomposition's slopes averaged over the windows
    (``decompose``), and the largest gap between layer 1's first-key share and its imposed profile (0 when none is
    imposed), in float64 chunks of :data:`CHUNK` windows: what plans v4 and v5 read from each model."""
    import torch

    out, paths, gap = [], {}, 0.0
    profile = model.blocks[0].attn.imposed
    for a in range(0, len(windows), CHUNK):
        chunk = windows[a:a + CHUNK]
        l2 = layer2(model, chunk)
        y = l2.normed()
        out.append(slopes(l2.logits(y, y)))
        if decompose:
            for name, p in _decompose(l2)["paths"].items():
                paths[name] = paths.get(name, 0.0) + p["slope"] * len(chunk)
        if profile is not None:
            with torch.no_grad():
                _, traces = model(torch.from_numpy(np.asarray(chunk, dtype=np.int64)), trace=True)
            first = traces[0].weights[..., 1:, 0].double()
            gap = max(gap, float((first - profile[1:chunk.shape[1]]).abs().max()))
    return np.concatenate(out), ({k: v / len(windows) for k, v in paths.items()} if decompose else None), gap


def _row_parts(u: np.ndarray, r: np.ndarray, w: np.ndarray, omega: np.ndarray) -> tuple[float, float, float]:
    """(scale, numerator, interaction) slopes of the logits u_ij r_j (B, n, n) x (B, n), mean over windows."""
    keys = w != 0  # the keys each row's slope reads
    cnt = np.maximum(keys.sum(-1), 1)
    u_bar = np.where(keys, u, 0.0).sum(-1) / cnt  # (B, n)
    r_row = np.where(keys, r[:, None, :], 0.0)
    r_bar = r_row.sum(-1) / cnt  # (B, n)
    du = u - u_bar[..., None]
    dr = r[:, None, :] - r_bar[..., None]
    def slope(x):
        return float(np.einsum("i,bij,ij->b", omega, x, w).mean())
    return slope(u_bar[..., None] * dr), slope(du * r_bar[..., None]), slope(du * dr)


def decompose(l2: Layer2) -> dict:
    """Each path's share of the layer-2 slope, mean over the windows: {"total", "sum_error", "paths": {path:
    {"slope", "scale", "numerator", "interaction"}}}; the bias path has no per-token scale (its numerator is its
    slope). ``sum_error``: |sum of the paths - total|, float rounding when the split is exact."""
    y = l2.normed()
    q_in = y
    n = y.shape[1]
    w, omega = row_slope_weights(n, SKIP), row_weights(n, SKIP)
    total = float(slopes(l2.logits(q_in, y)).mean())
    r = 1.0 / l2.sigma
    paths, summed = {}, 0.0
    for name in PATHS:
        if name == "bias":
            key = np.broadcast_to(l2.b, y.shape)
            s = float(slopes(l2.logits(q_in, key)).mean())
            paths[name] = {"slope": s, "scale": 0.0, "numerator": s, "interaction": 0.0}
        else:
            u = l2.logits(q_in, l2.shape(l2.parts[name]))  # the path's logit before the per-token scale
            s = float(slopes(u * r[:, None, :]).mean())
            sc, nu, ia = _row_parts(u, r, w, omega)
            paths[name] = {"slope": s, "scale": sc, "numerator": nu, "interaction": ia}
        summed += paths[name]["slope"]
    return {"total": total, "sum_error": abs(summed - total), "paths": paths}


_decompose = decompose  # layer2_slopes' argument of that name hides the function


def intervened_logits(l2: Layer2, kind: str, intact: np.ndarray | None = None) -> np.ndarray:
    """Head-mean layer-2 logits (B, n, n) under one of the plan's :data:`INTERVENTIONS`."""
    y = l2.normed()
    if kind == "qk_identity":  # W_Q W_K^T per head -> c_h I, c_h matching the intact logits' RMS over the window
        n = y.shape[1]
        low = np.tril(np.ones((n, n), dtype=bool))
        q = np.einsum("hed,bnd->bhne", l2.wq, y)
        k = np.einsum("hed,bnd->bhne", l2.wk, y)
        per_head = l2.scale * np.einsum("bhie,bhje->bhij", q, k)
        plain = np.einsum("bid,bjd->bij", y, y)
        rms_plain = np.sqrt(np.mean(plain[:, low] ** 2))
        c = np.sqrt(np.mean(per_head[:, :, low] ** 2, axis=(0, 2))) / rms_plain  # (H,)
        return float(c.mean()) * plain
    if kind == "bos_direction":  # the keys' component along layer 1's BOS value, after the normalisation's map
        u = l2.shape(l2.bos_value)  # (B, d)
        u = u / np.linalg.norm(u, axis=-1, keepdims=True)
        keys = y - np.einsum("bjd,bd->bj", y, u)[..., None] * u[:, None, :]
        return l2.logits(y, keys)
    if kind == "scale_fixed":  # sigma_j -> its mean over the window's tokens 2..n, queries and keys alike
        fixed = np.broadcast_to(l2.sigma[:, 1:].mean(-1, keepdims=True), l2.sigma.shape)
        yf = l2.normed(fixed)
        return l2.logits(yf, yf)
    raise ValueError(f"intervention must be one of {', '.join(INTERVENTIONS)}; got {kind!r}")


def _coordinate(l2: Layer2) -> tuple[np.ndarray, np.ndarray]:
    """(the BOS-path logits (B, n, n), each key's coordinate (B, n) along the first token's layer-1 value direction
    after the normalisation's map, in the theory's units: a normalised vector of length 1, the coordinate / sqrt(d))."""
    y = l2.normed()
    u = l2.shape(l2.bos_value)
    u = u / np.linalg.norm(u, axis=-1, keepdims=True)
    keys = l2.shape(l2.parts["bos"]) / l2.sigma[..., None]
    return l2.logits(y, keys), np.einsum("bjd,bd->bj", keys, u) / np.sqrt(y.shape[-1])


def affine_readout(coordinate: np.ndarray, logit: np.ndarray, read: np.ndarray) -> dict:
    """The read-out's shape from (row, key) pairs (issue 76, item 2): ``logit`` (B, n, n) against the key's
    ``coordinate`` (B, n), over the pairs ``read`` (n, n) marks. ``level``: mean logit / mean coordinate (the gain of
    :func:`readout_gain`, a line through the origin); ``gain``, ``intercept``, ``r2``: the least-squares line
    logit = intercept + gain x coordinate (it passes through the means, so level = gain + intercept / mean coordinate
    exactly); ``within``: the least-squares gain within rows (each row its own intercept: what a row's slope sees)."""
    c = np.broadcast_to(coordinate[:, None, :], logit.shape)[:, read]
    x = logit[:, read]
    cm, xm = float(c.mean()), float(x.mean())
    dc, dx = c - cm, x - xm
    gain = float((dc * dx).sum() / (dc * dc).sum())
    resid = dx - gain * dc
    full = np.broadcast_to(coordinate[:, None, :], logit.shape)
    cnt = np.maximum(read.sum(-1), 1)

    def within_row(v: np.ndarray) -> np.ndarray:  # each pair minus its row's mean over the pairs read
        return np.where(read, v - (np.where(read, v, 0.0).sum(-1) / cnt)[..., None], 0.0)
    cw, xw = within_row(full), within_row(logit)
    return {"level": xm / cm, "gain": gain, "intercept": xm - gain * cm, "mean_coordinate": cm,
            "r2": float(1 - (resid * resid).sum() / (dx * dx).sum()),
            "within": float((cw * xw).sum() / (cw * cw).sum())}


def readout_shape(l2: Layer2) -> dict:
    """The first token's read-out fitted in shape, not assumed proportional (issue 76, item 2): the fits of
    :func:`affine_readout` over the pairs a slope reads, the slope of the coordinate and of the BOS path (the path
    decomposition's), and the BOS path's slope as each read-out predicts it from the coordinate's slope: ``level`` x,
    ``gain`` x (the intercept has no slope) and ``within`` x slope(coordinate)."""
    logit, coordinate = _coordinate(l2)
    n = logit.shape[-1]
    fit = affine_readout(coordinate, logit, row_slope_weights(n, SKIP) != 0)
    slope_c = float(slopes(np.broadcast_to(coordinate[:, None, :], logit.shape)).mean())
    return {**fit, "coordinate_slope": slope_c, "bos_path": float(slopes(logit).mean()),
            **{f"predicted_{k}": fit[k] * slope_c for k in ("level", "gain", "within")}}


def readout_gain(l2: Layer2) -> float:
    """The gain of the model's read-out of the first token (issue 67; :func:`lnrecency.theory.sink.readout_slope`),
    measured from the *level* of its logits, never their slope: the mean BOS-path logit over the keys the slope reads,
    divided by the mean coordinate of those keys along the first token's layer-1 value direction after the
    normalisation's map, in the theory's units (a normalised vector of length 1: the coordinate / sqrt(d))."""
    y = l2.normed()
    u = l2.shape(l2.bos_value)
    u = u / np.linalg.norm(u, axis=-1, keepdims=True)
    keys = l2.shape(l2.parts["bos"]) / l2.sigma[..., None]
    coordinate = np.einsum("bjd,bd->bj", keys, u) / np.sqrt(y.shape[-1])
    n = y.shape[1]
    read = row_slope_weights(n, SKIP) != 0  # the (row, key) pairs a slope reads
    logit = l2.logits(y, keys)[:, read].mean()
    level = np.broadcast_to(coordinate[:, None, :], (y.shape[0], n, n))[:, read].mean()
    return float(logit / level)
