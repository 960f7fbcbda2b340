"""Exact pre-softmax attention logits of a transformers model, streamed layer by layer.

:data:`TAP` is registered with transformers' public ``AttentionInterface`` (and the eager mask with
``AttentionMaskInterface``); a model loaded with ``attn_implementation=TAP`` computes its attention exactly as
transformers' eager path does (keys and values repeated over grouped-query heads, S = q k^T * scaling,
the optional tanh soft-cap, the mask added, softmax in float32, P V), and hands each layer's logits S and
weights P, as they are made, to the callback installed by :func:`tapping`. Nothing is kept between layers: a
probe sums what it needs and lets the tensors go, so its memory is one layer's, whatever the depth.

The probe's three readers hand one layer's logits and weights at a time to its sums (``job``: the plan of
:mod:`lnrecency.experiments.probes.model_probe`): :func:`read_tapped` (this tap), :func:`read_bridge` (a
TransformerLens bridge's named hooks) and :func:`read_weights` (transformers' own ``output_attentions``, for a
family outside the attention interface: log P, the logits up to a per-row constant).

The mask transformers builds is checked on every call: it must be the plain causal mask (0 on and below the
diagonal, at most -1e30 above it), so a sliding window shorter than n, a packed-sequence mask, or a padding
mask is refused instead of being read as the model's preference.
"""
from __future__ import annotations

import contextlib
import inspect
from typing import Callable, Iterator

import torch

from lnrecency.experiments.probes.attention_checks import check_attention_weights

__all__ = ["TAP", "tapping", "register", "call_kwargs", "read_bridge", "read_tapped", "read_weights"]

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


def call_kwargs(job, ids: torch.Tensor, attentions: bool, off: bool) -> dict:
    b, n = ids.shape
    kwargs = {"input_ids": ids, "attention_mask": torch.ones(b, n, dtype=torch.long, device=job.where),
              "output_attentions": attentions, "use_cache": False}
    if "logits_to_keep" in inspect.signature(job.model.forward).parameters:
        kwargs["logits_to_keep"] = 1  # the output layer on the last position only: no (B, n, vocabulary) logits
    if job.takes_positions and job.scheme in ("rope", "learned"):
        kwargs["position_ids"] = (torch.zeros(b, n, dtype=torch.long, device=job.where) if off
                                  else torch.arange(n, device=job.where).expand(b, n))
    return kwargs


def read_bridge(job, start: int, stop: int, emit) -> None:
    """A TransformerLens bridge's own named hooks: blocks.L.attn.hook_attn_scores (the masked pre-softmax scores)
    and hook_pattern (the weights), one layer handed on at a time."""
    ids = torch.from_numpy(job.windows[start:stop]).to(job.where)
    n = ids.shape[1]
    above = ~torch.ones(n, n, dtype=torch.bool, device=job.where).tril()
    got: dict = {}

    def grab(t: torch.Tensor, hook) -> torch.Tensor:
        layer, kind = int(hook.name.split(".")[1]), hook.name.rsplit(".", 1)[1]
        got.setdefault(layer, {})[kind] = t.detach()
        if len(got[layer]) == 2:
            rec = got.pop(layer)
            p = rec["hook_pattern"]
            check_attention_weights(p, layer + 1, f"TransformerLens {type(job.bridge).__name__}")
            emit(layer, {"logits": rec["hook_attn_scores"].masked_fill(above, 0.0).to("cpu", torch.float32),
                         "weights": p.to("cpu", torch.float32)})
        return t

    hooks = [(f"blocks.{q}.attn.{kind}", grab) for q in range(job.n_layers)
             for kind in ("hook_attn_scores", "hook_pattern")]
    with torch.no_grad():
        job.bridge.run_with_hooks(ids, fwd_hooks=hooks)
    if got:
        raise ValueError(f"TransformerLens {type(job.bridge).__name__}: layers {sorted(got)} gave scores or weights "
                         f"without the other; refused")


def read_tapped(job, off: bool, start: int, stop: int, emit) -> None:
    """The exact logits from transformers' attention interface (:mod:`logit_tap`), layer by layer."""
    ids = torch.from_numpy(job.windows[start:stop]).to(job.where)
    seen: list[int] = []
    name = type(job.model).__name__

    def take(layer: int, s: torch.Tensor, p: torch.Tensor) -> None:
        check_attention_weights(p, layer + 1, name)
        if layer != len(seen):
            raise ValueError(f"{name}: the tap saw layer {layer + 1} after {len(seen)} layers; refused (the probe "
                             f"reads the layers in order)")
        seen.append(layer)
        emit(layer, {"logits": s.detach().to("cpu", torch.float32), "weights": p.detach().to("cpu", torch.float32)})

    with torch.no_grad(), tapping(take):
        job.model(**call_kwargs(job, ids, False, off))
    if len(seen) != job.n_layers:
        raise ValueError(f"{name}: the tap saw {len(seen)} of its {job.n_layers} layers' attention; refused")


def read_weights(job, off: bool, start: int, stop: int) -> list:
    """transformers' own attention weights (output_attentions), for a family outside the attention interface."""
    ids = torch.from_numpy(job.windows[start:stop]).to(job.where)
    b, n = ids.shape
    with torch.no_grad():
        out = job.model(**call_kwargs(job, ids, True, off))
    atts = getattr(out, "attentions", None)
    name = type(job.model).__name__
    if atts is None or len(atts) != job.n_layers or any(x is None or x.shape != (b, job.n_heads, n, n) for x in atts):
        raise ValueError(f"{name} returned no attention weights of shape (batch, {job.n_heads} heads, {n}, {n}) for "
                         f"each of its {job.n_layers} layers; refused")
    traces = []
    for q, att in enumerate(atts):
        check_attention_weights(att, q + 1, name)
        p = att.detach().to("cpu", torch.float64)
        logits = torch.log(p.clamp_min(1e-300)).masked_fill(~torch.ones(n, n, dtype=torch.bool).tril(), 0.0)
        traces.append({"logits": logits, "weights": p})
    return traces
