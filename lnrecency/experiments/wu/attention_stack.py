"""Wu et al.'s model (their ``models.SAN`` with ``pe=None``, ``mask_type="causal"``), with a normalisation that can
be inserted: L single-head causal self-attention layers of width D (query, key and value projections without bias,
no output projection, scores q.k / sqrt(D)), each layer's update added to its input (``residual``) or replacing it,
then the last token (the query) through 3 x (Linear D -> D, ReLU) and a Linear D -> labels.

``norm``: "none" (theirs), "layernorm" or "rmsnorm" (torch's, with their learned gain, and bias for LayerNorm) at
every attention layer's input (pre-norm: q, k and v are read from the normalised stream; the residual adds the raw
update). Nothing else changes, so an arm's difference from "none" is the normalisation alone.

``forward(x, trace=True)`` also returns each layer's pre-softmax scores and attention weights (B, T, T): the named
quantities the probe reads (:func:`probe`).

The mechanism's ablation (:func:`fixed_scale`): the paper's mechanism is the normalisation's per-token rescaling
(layer 1's outputs, means over more tokens at later positions, have smaller norms; the normalisation at layer 2's
input undoes that). Within ``with fixed_scale(model, scales)`` every normalisation divides by one constant per
layer (its mean per-token scale, :func:`mean_scales`) instead of each token's own: the centring (LayerNorm), the
learned gain and bias stay, only the position-dependent rescaling goes.
"""
from __future__ import annotations

import math
from contextlib import contextmanager

import numpy as np
import torch
from torch import nn

from lnrecency.runtime.arguments import check_choice, check_int

__all__ = ["NORMS", "AttentionStack", "probe", "fixed_scale", "mean_scales"]

NORMS = ("none", "layernorm", "rmsnorm")


class _Attention(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.query = nn.Linear(dim, dim, bias=False)
        self.key = nn.Linear(dim, dim, bias=False)
        self.value = nn.Linear(dim, dim, bias=False)
        self.scale = 1.0 / math.sqrt(dim)

    def forward(self, x: torch.Tensor):
        t = x.shape[1]
        scores = self.query(x) @ self.key(x).transpose(-1, -2) * self.scale
        mask = torch.ones(t, t, dtype=torch.bool, device=x.device).tril()
        weights = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)
        return weights @ self.value(x), scores, weights


class _Norm(nn.Module):
    """LayerNorm or RMSNorm as torch defines them (eps 1e-5 / float32's eps), written out so that the per-token
    scale can be read (``last_scale``) or fixed (``fixed``, a float: the ablation)."""

    def __init__(self, kind: str, dim: int) -> None:
        super().__init__()
        self.kind = kind
        self.weight = nn.Parameter(torch.ones(dim))
        self.bias = nn.Parameter(torch.zeros(dim)) if kind == "layernorm" else None
        self.eps = 1e-5 if kind == "layernorm" else float(torch.finfo(torch.float32).eps)
        self.fixed: float | None = None
        self.last_scale: torch.Tensor | None = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.kind == "layernorm":
            x = x - x.mean(dim=-1, keepdim=True)
            scale = torch.sqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps)
        else:
            scale = torch.sqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps)
        self.last_scale = scale.detach()
        y = x / (scale if self.fixed is None else self.fixed) * self.weight
        return y if self.bias is None else y + self.bias


def _norm(norm: str, dim: int) -> nn.Module:
    return nn.Identity() if norm == "none" else _Norm(norm, dim)


class AttentionStack(nn.Module):
    """The stack of the module docstring."""

    def __init__(self, dim: int = 64, layers: int = 2, labels: int = 32, *, residual: bool = False,
                 norm: str = "none", mlp_layers: int = 3) -> None:
        super().__init__()
        check_int("dim", dim, minimum=2)
        check_int("layers", layers, minimum=1)
        check_int("labels", labels, minimum=2)
        self.residual, self.norm = bool(residual), check_choice("norm", norm, NORMS)
        self.norms = nn.ModuleList(_norm(norm, dim) for _ in range(layers))
        self.attention = nn.ModuleList(_Attention(dim) for _ in range(layers))
        self.mlp = nn.ModuleList(nn.Linear(dim, dim) for _ in range(mlp_layers))
        self.out = nn.Linear(dim, labels)

    def forward(self, x: torch.Tensor, trace: bool = False):
        traces = []
        for norm, attn in zip(self.norms, self.attention):
            update, scores, weights = attn(norm(x))
            x = x + update if self.residual else update
            if trace:
                traces.append((scores, weights))
        h = x[:, -1]
        for lin in self.mlp:
            h = torch.relu(lin(h))
        logits = self.out(h)
        return (logits, traces) if trace else logits


@torch.no_grad()
def mean_scales(model: AttentionStack, x: np.ndarray, batch: int = 512) -> list[float]:
    """Each normalisation's per-token scale (sqrt of the variance, or of the mean square, plus eps) averaged over
    every token of the sequences ``x``: one constant per layer, from the intact model."""
    if model.norm == "none":
        raise ValueError("a model without normalisation has no scale to fix")
    was = model.training
    model.eval()
    sums = np.zeros(len(model.norms))
    for a in range(0, len(x), batch):
        model(torch.from_numpy(x[a:a + batch]))
        for k, nm in enumerate(model.norms):
            sums[k] += float(nm.last_scale.double().sum())
    model.train(was)
    return (sums / (len(x) * x.shape[1])).tolist()


@contextmanager
def fixed_scale(model: AttentionStack, scales: list[float]):
    """Within the block every normalisation of ``model`` divides by ``scales[l]`` (module docstring)."""
    if model.norm == "none" or len(scales) != len(model.norms):
        raise ValueError(f"fixed_scale needs a normalised model and one scale per layer; got norm {model.norm!r}, "
                         f"{len(scales)} scales for {len(model.norms)} layers")
    for nm, s in zip(model.norms, scales):
        nm.fixed = float(s)
    try:
        yield model
    finally:
        for nm in model.norms:
            nm.fixed = None


def _mean_se(v: np.ndarray) -> tuple[float, float]:
    return float(v.mean()), float(v.std(ddof=1) / math.sqrt(v.size)) if v.size > 1 else 0.0


@torch.no_grad()
def probe(model: AttentionStack, x: np.ndarray, items: int, batch: int = 512) -> list[dict]:
    """Per layer l, on the query row (the last token) of the sequences ``x`` (mean and SE over them):

    * ``slope``: the least-squares slope of the pre-softmax scores over the item-content keys 2 .. N (item index,
      the first item out, as every probe here leaves the first key out), logit per item (> 0: later items
      score higher, the paper's recency, in its own quantity);
    * ``rollout_first`` / ``rollout_last``: the attention rollout R^(l) = A^(l) ... A^(1) (Wu et al.'s cumulative
      context probability, their own quantity) of the query row on the first item's and the last item's content
      tokens (the two masses kept apart: a mean of ratios misleads);
    * ``first_attention``: the layer's attention to the first token averaged over the query rows 2 .. T (Gu et al.
      2024's per-head first-token score; their Sink^eps_1 counts the heads above eps = 0.3; one head per layer here).
    """
    was = model.training
    model.eval()
    keys = np.arange(2, items + 1, dtype=float)  # item index of content keys 2..N (token 2(k - 1), 0-based)
    c = (keys - keys.mean()) / ((keys - keys.mean()) @ (keys - keys.mean()))
    cols = 2 * (np.arange(2, items + 1) - 1)
    per: dict = {}
    for a in range(0, len(x), batch):
        _, traces = model(torch.from_numpy(x[a:a + batch]), trace=True)
        roll = None
        for layer, (scores, weights) in enumerate(traces, start=1):
            s = scores[:, -1].double().numpy()
            w = weights.double()
            roll = w if roll is None else w @ roll
            r = roll[:, -1].numpy()
            acc = per.setdefault(layer, {"slope": [], "rollout_first": [], "rollout_last": [], "first_attention": []})
            acc["slope"].append(s[:, cols] @ c)
            acc["rollout_first"].append(r[:, 0])
            acc["rollout_last"].append(r[:, 2 * (items - 1)])
            acc["first_attention"].append(w[:, 1:, 0].mean(dim=1).numpy())
    model.train(was)
    out = []
    for layer, acc in per.items():
        rec = {"layer": layer}
        for k, v in acc.items():
            rec[k], rec[f"{k}_se"] = _mean_se(np.concatenate(v))
        out.append(rec)
    return out
