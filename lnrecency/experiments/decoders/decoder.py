"""One causal decoder definition (torch), trained or parameter-free
(:mod:`lnrecency.experiments.decoders.decoder_config`).

A block, from the residual stream h (batch, n, d):

    y   = N_pre(h)                      (pre / both; identity map otherwise)
    S   = (W_Q y)(W_K y)^T * scale      per head, causal mask; scale = 1/sqrt(d_head), or lam (identity)
    P   = row softmax of S;  a = P (W_V y) per head, concatenated, then W_O  (identity: a = P y, no W_O)
    a   = N_post(a)                     (post / both)
    h'  = h + gamma a   or   a          (gamma = 1 when trained; the theory's gamma for the identity)
    MLP (optional): h'' = h' + MLP(N_pre2(h'))  or  MLP(N_pre2(h'))

The identity decoder uses the theory's normalisation N exactly as the Monte Carlo does (the numpy map
``lnrecency.model.layers.Normalisation.vectors``, float64, centring along u = ones / sqrt(d)), so the decoder and
:mod:`lnrecency.numerics` compute the same function of the same inputs.

``forward(tokens | embeds, trace=True)`` also returns a :class:`LayerTrace` per layer: what the probe reads.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Iterator

import numpy as np
import torch
from torch import nn

from lnrecency.experiments.decoders.decoder_config import DecoderConfig
from lnrecency.model.layers import NORMALISATIONS

__all__ = ["Decoder", "LayerTrace", "build", "fix_first_share", "imposed_weights", "impose_first_share"]


@dataclass
class LayerTrace:
    """One layer's activations on a batch (all detached). Shapes: B batch, H heads, n positions."""

    normed: torch.Tensor  # (B, n, d): the attention input y (after N_pre)
    logits: torch.Tensor  # (B, H, n, n): S, 0 above the diagonal
    weights: torch.Tensor  # (B, H, n, n): P
    values: torch.Tensor  # (B, H, n, d_head): W_V y per head
    head_out: torch.Tensor  # (B, H, n, d_head): P V per head (before W_O)
    attn_out: torch.Tensor  # (B, n, d): the block's attention output added to the stream (after W_O, N_post)
    mid: torch.Tensor  # (B, n, d): the stream after the attention update
    mlp_in: torch.Tensor | None  # (B, n, d): the MLP's normalised input
    out: torch.Tensor  # (B, n, d): the stream after the block


class TheoryNorm(nn.Module):
    """The theory's N (lnrecency.model.layers.NORMALISATIONS) on float64 tensors, through its numpy map."""

    def __init__(self, name: str, d: int):
        super().__init__()
        self.norm = NORMALISATIONS[name]
        self.u = np.full(d, 1.0 / math.sqrt(d))

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        x = h.detach().numpy()
        if self.norm.scales and not np.isfinite(np.einsum("...i,...i->...", x, x)).all():
            # |h|^2 overflows float64 (e.g. a residual weight near 1e300): N(h) would read 0 or NaN
            raise ValueError("the residual stream overflows float64 before the normalisation (|h|^2 is not "
                             "finite); lower --gamma")
        return torch.from_numpy(np.ascontiguousarray(self.norm.vectors(x, self.u)))


def _norm(cfg: DecoderConfig, where: str) -> nn.Module:
    """The normalisation module at ``where`` ("pre" or "post") or the identity map when not placed there."""
    placed = cfg.placement in (where, "both")
    if cfg.is_identity:
        return TheoryNorm(cfg.identity.norm, cfg.d_model) if where == "pre" else nn.Identity()
    if not placed or cfg.norm == "none":
        return nn.Identity()
    if cfg.norm == "rmsnorm":
        return nn.RMSNorm(cfg.d_model, eps=1e-5)
    if cfg.norm in ("centre", "layernorm-stopscale"):
        return PartNorm(cfg.d_model, cfg.norm)
    norm = nn.LayerNorm(cfg.d_model)
    if cfg.norm == "layernorm-fixgain":
        norm.weight.requires_grad_(False)  # stays at its initial 1 (the optimiser skips it; a checkpoint keeps it)
    return norm


class PartNorm(nn.Module):
    """LayerNorm taken apart (plan v5's P arms; ``weight``, ``bias`` and ``eps`` as :class:`torch.nn.LayerNorm`
    names them): "centre" y = weight * (h - mean h) + bias, no per-token scale; "layernorm-stopscale" LayerNorm's
    forward with its per-token 1 / sigma held out of the gradient (``detach``)."""

    def __init__(self, d: int, kind: str):
        super().__init__()
        self.kind, self.eps = kind, 1e-5
        self.weight = nn.Parameter(torch.ones(d))
        self.bias = nn.Parameter(torch.zeros(d))

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        c = h - h.mean(-1, keepdim=True)
        if self.kind == "layernorm-stopscale":
            c = c / torch.sqrt(h.var(-1, unbiased=False, keepdim=True) + self.eps).detach()
        return c * self.weight + self.bias


@functools.lru_cache(maxsize=64)
def _rotary_table(n: int, dh: int, dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
    """cos and sin of the rotary angles (computed in float64, then cast), once per shape: every forward pass of a
    training reads the same table (read only)."""
    inv = 1.0 / (10000.0 ** (torch.arange(0, dh, 2, dtype=torch.float64) / dh))
    ang = torch.arange(n, dtype=torch.float64)[:, None] * inv[None, :]
    return torch.cos(ang).to(dtype), torch.sin(ang).to(dtype)


def rotary_embedding(x: torch.Tensor) -> torch.Tensor:
    """Rotary position embedding (base 10000) of x (B, H, n, d_head) at positions 0..n-1."""
    cos, sin = _rotary_table(x.shape[-2], x.shape[-1], x.dtype)
    x1, x2 = x[..., 0::2], x[..., 1::2]
    return torch.stack([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1).flatten(-2)


def fix_first_share(w: torch.Tensor, share) -> torch.Tensor:
    """The sink ablation (issue 50): every query i >= 2 gives key 1 the same share of its attention, the content
    keys 2..i their weights renormalised to the rest; query 1 (which sees only key 1) is unchanged. ``share``: a
    number in [0, 1) (0 removes the first key), or "mean": per sequence and head, the mean share the queries i >= 2
    gave key 1 (the share kept, its dependence on the position removed)."""
    out = w.clone()
    first = w[..., 1:, 0]  # (..., n - 1)
    c = first.mean(-1, keepdim=True).expand_as(first) if share == "mean" else torch.full_like(first, float(share))
    content = w[..., 1:, 1:]
    total = content.sum(-1, keepdim=True)
    out[..., 1:, 1:] = torch.where(total > 0, content / total.clamp_min(1e-300), content) * (1 - c)[..., None]
    out[..., 1:, 0] = c
    return out


def imposed_weights(s: torch.Tensor, share: torch.Tensor) -> torch.Tensor:
    """Causal attention weights (..., n, n) from the logits ``s`` with the first key's share *set* (plan v4's U1 and
    U2, issue 76): query i >= 2 (0-based row r >= 1) gives key 1 the share ``share[r]``, and keys 2..i share the rest
    in the proportions of their own softmax; query 1 sees only key 1. Gradients flow through those proportions (and
    the values), never through the first key's share, so training cannot move it."""
    n = s.shape[-1]
    c = share[1:n].to(device=s.device, dtype=s.dtype)[:, None].expand(*s.shape[:-2], n - 1, 1)  # rows 2..n
    low = torch.ones(n - 1, n - 1, dtype=torch.bool).tril()
    content = torch.softmax(s[..., 1:, 1:].masked_fill(~low, float("-inf")), dim=-1)  # keys 2..i of rows 2..n
    top = torch.zeros_like(s[..., :1, :])
    top[..., 0] = 1.0
    return torch.cat([top, torch.cat([c, content * (1 - c)], dim=-1)], dim=-2)


class Attention(nn.Module):
    def __init__(self, cfg: DecoderConfig):
        super().__init__()
        self.cfg = cfg
        #: layer's first-key share per query row, set (:func:`impose_first_share`); None: the softmax's own
        self.imposed: torch.Tensor | None = None
        if cfg.is_identity:
            self.scale = float(cfg.identity.lam)
        else:
            d = cfg.d_model
            self.q, self.k, self.v = (nn.Linear(d, d, bias=False) for _ in range(3))
            self.o = nn.Linear(d, d, bias=False)
            self.scale = 1.0 / math.sqrt(cfg.head_dim)

    def forward(self, y: torch.Tensor, keep: torch.Tensor | None = None, first_share=None):
        b, n, d = y.shape
        h, dh = self.cfg.n_heads, self.cfg.head_dim
        if self.cfg.is_identity:
            q = k = v = y[:, None]
        else:
            q, k, v = (m(y).view(b, n, h, dh).transpose(1, 2) for m in (self.q, self.k, self.v))
            if self.cfg.positions == "rotary":
                q, k = rotary_embedding(q), rotary_embedding(k)
        s = (q @ k.transpose(-1, -2)) * self.scale
        mask = torch.ones(n, n, dtype=torch.bool).tril()
        if self.imposed is not None:
            w = imposed_weights(s, self.imposed)
        else:
            w = torch.softmax(s.masked_fill(~mask, float("-inf")), dim=-1)
        if first_share is not None:
            w = fix_first_share(w, first_share)
        heads = w @ v
        if keep is not None:  # ablation: the outputs of the heads not kept are set to 0 (before W_O)
            heads = heads * keep.to(heads.dtype)[None, :, None, None]
        out = heads.transpose(1, 2).reshape(b, n, d)
        if not self.cfg.is_identity:
            out = self.o(out)
        return out, s.masked_fill(~mask, 0.0), w, v, heads


class Block(nn.Module):
    def __init__(self, cfg: DecoderConfig):
        super().__init__()
        self.cfg = cfg
        self.gamma = float(cfg.identity.gamma) if cfg.is_identity else 1.0
        self.pre = _norm(cfg, "pre")
        self.attn = Attention(cfg)
        self.post = _norm(cfg, "post")
        if cfg.mlp:
            self.pre2 = _norm(cfg, "pre")
            self.mlp = nn.Sequential(nn.Linear(cfg.d_model, cfg.mlp_ratio * cfg.d_model), nn.GELU(),
                                     nn.Linear(cfg.mlp_ratio * cfg.d_model, cfg.d_model))

    def _update(self, h: torch.Tensor, a: torch.Tensor, gamma: float) -> torch.Tensor:
        return h + gamma * a if self.cfg.residual else a

    def forward(self, h: torch.Tensor, trace: bool, keep: torch.Tensor | None = None, first_share=None):
        y = self.pre(h)
        a, s, w, v, heads = self.attn(y, keep, first_share)
        a = self.post(a)
        mid = self._update(h, a, self.gamma)
        out, mlp_in = mid, None
        if self.cfg.mlp:
            mlp_in = self.pre2(mid)
            out = self._update(mid, self.mlp(mlp_in), 1.0)
        if not trace:
            return out, None
        det = lambda t: None if t is None else t.detach()  # noqa: E731
        return out, LayerTrace(det(y), det(s), det(w), det(v), det(heads), det(a), det(mid), det(mlp_in),
                               det(out))


class Decoder(nn.Module):
    """The decoder of a :class:`DecoderConfig`. ``forward`` returns (next-token logits or None for the
    identity decoder, list of LayerTrace or None)."""

    def __init__(self, cfg: DecoderConfig):
        super().__init__()
        self.cfg = cfg
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layers))
        if cfg.is_identity:
            return
        self.tok = nn.Embedding(cfg.vocab, cfg.d_model)
        self.pos = nn.Embedding(cfg.context, cfg.d_model) if cfg.positions == "learned" else None
        self.final = _norm(cfg, "pre")
        self.head = nn.Linear(cfg.d_model, cfg.vocab, bias=False)
        for name, p in self.named_parameters():
            if p.dim() >= 2:  # every W and embedding: N(0, init_std^2) (the init the theory's section assumes)
                nn.init.normal_(p, 0.0, cfg.init_std)
            elif name.endswith("bias"):
                nn.init.zeros_(p)

    def embed(self, tokens: torch.Tensor, positions: bool = True) -> torch.Tensor:
        """Token embeddings plus learned position embeddings (``positions=False``: token embeddings only,
        seed 002's Figure 6)."""
        n = tokens.shape[1]
        if n > self.cfg.context:
            raise ValueError(f"sequence length {n} exceeds the model's context {self.cfg.context}")
        x = self.tok(tokens)
        if self.pos is not None and positions:
            x = x + self.pos(torch.arange(n))
        return x

    def forward(self, tokens: torch.Tensor | None = None, *, embeds: torch.Tensor | None = None,
                trace: bool = False, keep_heads: dict | None = None, positions: bool = True,
                first_share: dict | None = None):
        """``keep_heads``: {layer index (0-based): the heads whose outputs are kept}; the other heads of that
        layer are ablated (output 0). ``positions=False``: no position embeddings. ``first_share``: {layer index
        (0-based): a share in [0, 1) or "mean"}: that layer's attention to the first token fixed at one share for
        every query (:func:`fix_first_share`, the sink ablation)."""
        traces = [] if trace else None
        h = None
        for q, h, tr in self.layers(tokens, embeds=embeds, trace=trace, keep_heads=keep_heads, positions=positions,
                                    first_share=first_share):
            if trace:
                traces.append(tr)
        logits = None if self.cfg.is_identity else self.head(self.final(h))
        return logits, traces

    def layers(self, tokens: torch.Tensor | None = None, *, embeds: torch.Tensor | None = None, trace: bool = True,
               keep_heads: dict | None = None, positions: bool = True,
               first_share: dict | None = None) -> Iterator[tuple[int, torch.Tensor, LayerTrace | None]]:
        """The blocks one at a time, as :meth:`forward` runs them: (0-based layer, its output, its trace or None),
        so that a reader can take a layer's trace and let it go before the next is made (the probe's stream)."""
        if (tokens is None) == (embeds is None):
            raise ValueError("give exactly one of tokens and embeds")
        if embeds is None:
            if self.cfg.is_identity:
                raise ValueError("the identity decoder takes embeds (the theory's input vectors), not tokens")
            embeds = self.embed(tokens, positions)
        h = embeds
        keep_heads = keep_heads or {}
        for q, block in enumerate(self.blocks):
            keep = None
            if q in keep_heads:
                keep = torch.zeros(self.cfg.n_heads)
                keep[list(keep_heads[q])] = 1.0
            h, tr = block(h, trace, keep, (first_share or {}).get(q))
            yield q, h, tr


def impose_first_share(model: Decoder, shares: dict | None) -> Decoder:
    """Set the first key's share of attention, row by row, in the given layers of ``model`` (in place; returned):
    ``shares`` {layer index (0-based): the share of each query row 1..context (the first, which sees only the first
    key, is not used)}; None or {} leaves every layer its own softmax. Kept through training, the probe and
    ``copy.deepcopy`` (a plain attribute, not a weight: a checkpoint records it in its config.json, ``interventions``,
    and :func:`lnrecency.experiments.decoders.train.load` restores it)."""
    for attn in (b.attn for b in model.blocks):
        attn.imposed = None
    for layer, profile in (shares or {}).items():
        if isinstance(layer, bool) or not isinstance(layer, int) or not 0 <= layer < len(model.blocks):
            raise ValueError(f"shares: a layer index must be an integer in [0, {len(model.blocks) - 1}]; got "
                             f"{layer!r}")
        p = torch.as_tensor(profile, dtype=torch.float64).flatten()
        if p.numel() < model.cfg.context or not bool(torch.isfinite(p).all()) or bool(((p < 0) | (p > 1)).any()):
            raise ValueError(f"shares: layer {layer}'s profile must hold at least context = {model.cfg.context} "
                             f"shares in [0, 1]; got {p.numel()} values in [{float(p.min()):g}, {float(p.max()):g}]")
        model.blocks[layer].attn.imposed = p
    return model


def build(cfg: DecoderConfig, seed: int) -> Decoder:
    """The decoder of ``cfg`` with its initial weights drawn from ``seed`` (torch's CPU generator)."""
    torch.manual_seed(int(seed))
    model = Decoder(cfg)
    if cfg.is_identity:
        model = model.double()
    return model
