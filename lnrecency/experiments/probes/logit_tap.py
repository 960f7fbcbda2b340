"""Exact pre-softmax attention logits of a transformers model, streamed layer by layer.

:data:`TAP` is registered with transformers' public ``AttentionInterface`` (and the eager mask with
``AttentionMaskInterface``); a model loaded with ``attn_implementation=TAP`` computes its attention exactly as
transformers' eager path does (keys and values repeated over grouped-query heads, S = q k^T * scaling,
the optional tanh soft-cap, the mask added, softmax in float32, P V), and hands each layer's logits S and
weights P, as they are made, to the callback installed by :func:`tapping`. Nothing is kept between layers: a
probe sums what it needs and lets the tensors go, so its memory is one layer's, whatever the depth.

The mask transformers builds is checked on every call: it must be the plain causal mask (0 on and below the
diagonal, at most -1e30 above it), so a sliding window shorter than n, a packed-sequence mask, or a padding
mask is refused instead of being read as the model's preference.
"""
from __future__ import annotations

import contextlib
from typing import Callable, Iterator

import torch

__all__ = ["TAP", "tapping", "register"]

#: the attention implementation's name in transformers' registry
TAP = "lnrecency_tap"
_SINK: list = []


def _check_mask(mask: torch.Tensor | None, n: int, layer: int) -> None:
    if mask is None:
        raise ValueError(f"layer {layer}: the model passed no attention mask; the probe reads causal models with "
                         f"an explicit mask only")
    m = mask[..., -n:, -n:]
    below = torch.ones(n, n, dtype=torch.bool, device=m.device).tril()
    if bool((m.masked_select(below.expand_as(m)) != 0).any()) or bool((m.masked_select(~below.expand_as(m))
                                                                      > -1e30).any()):
        raise ValueError(f"layer {layer}: the model's attention mask is not the causal mask at n = {n} (a sliding "
                         f"window shorter than n, or packed or padded inputs); refused")


def tap_attention(module, query, key, value, attention_mask, scaling=None, dropout=0.0, softcap=None, **kwargs):
    """transformers' eager attention, with S and P handed to the installed callback (see the module doc)."""
    if scaling is None:
        scaling = module.head_dim ** -0.5
    groups = getattr(module, "num_key_value_groups", 1)
    k = key.repeat_interleave(groups, dim=1) if groups > 1 else key
    v = value.repeat_interleave(groups, dim=1) if groups > 1 else value
    s = torch.matmul(query, k.transpose(2, 3)) * scaling
    if softcap is not None:
        s = torch.tanh(s / softcap) * softcap
    layer = int(getattr(module, "layer_idx", -1))
    if _SINK:
        _check_mask(attention_mask, s.shape[-1], layer + 1)
    logits = s + attention_mask if attention_mask is not None else s
    p = torch.nn.functional.softmax(logits, dim=-1, dtype=torch.float32).to(query.dtype)
    out = torch.matmul(p, v).transpose(1, 2).contiguous()
    if _SINK:
        _SINK[-1](layer, s, p)
    return out, None


def register() -> None:
    """Register :data:`TAP` with transformers (idempotent)."""
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface, eager_mask

    AttentionInterface.register(TAP, tap_attention)
    AttentionMaskInterface.register(TAP, eager_mask)


@contextlib.contextmanager
def tapping(callback: Callable[[int, torch.Tensor, torch.Tensor], None]) -> Iterator[None]:
    """Within the block, every tapped attention call hands (0-based layer, S, P) to ``callback``; S and P are
    (B, H, n, n)."""
    _SINK.append(callback)
    try:
        yield
    finally:
        _SINK.pop()
