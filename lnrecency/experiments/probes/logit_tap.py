"""Exact pre-softmax attention logits of a transformers model, streamed layer by layer.

:data:`TAP` is registered with transformers' public ``AttentionInterface`` (and the eager mask with
``AttentionMaskInterface``); a model loaded with ``attn_implementation=TAP`` computes its attention exactly as
transformers' eager path does (keys and values repeated over grouped-query heads, S = q k^T * scaling,
the optional tanh soft-cap, the mask added, softmax in float32, P V), and hands each layer's logits S and
weights P, as they are made, to the callback installed by :func:`tapping`. Nothing of a layer is kept for the
next: S and P are made in the same tensors layer after layer (overwritten, not allocated again), and a probe sums
what it needs before the next layer, so its memory is one layer's, whatever the depth.

The probe's three readers hand one layer's logits and weights at a time to its sums (``job``: the plan of
:mod:`lnrecency.experiments.probes.model_probe`): :func:`read_tapped` (this tap), :func:`read_bridge` (a
TransformerLens bridge's named hooks) and :func:`read_weights` (transformers' own ``output_attentions``, for a
family outside the attention interface (BLOOM, Falcon, MPT, GPT-Neo, ...): log P, the logits up to a per-row
constant, taken by a forward hook on each layer's attention module as it returns them and dropped from its output,
so the model keeps none). All three stream: the probe's memory is one layer's attention, whatever the depth.

The mask transformers builds is checked on every call: it must be the plain causal mask (0 on and below the
diagonal, at most -1e30 above it), so a sliding window shorter than n, a packed-sequence mask, or a padding
mask is refused instead of being read as the model's preference.
"""
from __future__ import annotations

import contextlib
import inspect
from functools import partial
from typing import Callable, Iterator

import torch

from lnrecency.experiments.probes.attention_checks import check_attention_weights

__all__ = ["TAP", "tapping", "register", "call_kwargs", "read_bridge", "read_tapped", "read_weights",
           "attention_modules"]

#: the attention implementation's name in transformers' registry
TAP = "lnrecency_tap"
_SINK: list = []
#: per installed callback, the tap's own state while it is installed: the tensors S, the masked logits and P are
#: made in, reused layer after layer (``buffers``, by name, shape, dtype and device), and the mask last found causal
#: (``mask``: the tensor, and where its entries are, their version and n)
_STATE: list = []


def _check_mask(mask: torch.Tensor | None, n: int, layer: int) -> None:
    if mask is None:
        raise ValueError(f"layer {layer}: the model passed no attention mask; the probe reads causal models with "
                         f"an explicit mask only")
    state = _STATE[-1] if _STATE else {}
    seen = (mask.data_ptr(), tuple(mask.shape), mask.stride(), mask.dtype, mask.device, mask._version, n)
    if state.get("mask") is not None and state["mask"][1] == seen:
        return  # the tensor (or a view of the same entries) checked at an earlier layer and not written since: its
        # memory is kept alive by the reference held below, and every write bumps its version counter
    m = mask[..., -n:, -n:]
    below = torch.ones(n, n, dtype=torch.bool, device=m.device).tril()
    if bool((m.masked_select(below.expand_as(m)) != 0).any()) or bool((m.masked_select(~below.expand_as(m))
                                                                      > -1e30).any()):
        raise ValueError(f"layer {layer}: the model's attention mask is not the causal mask at n = {n} (a sliding "
                         f"window shorter than n, or packed or padded inputs); refused")
    if _STATE:
        state["mask"] = (mask, seen)


def _buffer(name: str, shape: tuple, like: torch.Tensor) -> torch.Tensor:
    """The installed callback's tensor ``name`` of this shape, dtype and device, made once and reused layer after
    layer (a fresh tensor of B H n^2 entries every layer is memory handed back and faulted in again)."""
    key = (name, tuple(shape), like.dtype, like.device)
    buffers = _STATE[-1].setdefault("buffers", {})
    if key not in buffers:
        for old in [k for k in buffers if k[0] == name]:  # one of each name: another shape replaces it
            del buffers[old]
        buffers[key] = torch.empty(shape, dtype=like.dtype, device=like.device)
    return buffers[key]


def tap_attention(module, query, key, value, attention_mask, scaling=None, dropout=0.0, softcap=None, **kwargs):
    """transformers' eager attention, with S and P handed to the installed callback (see the module doc). With a
    callback installed, S, the masked logits and P are made in tensors reused layer after layer (the same operations
    into given outputs, the same numbers): the callback's S and P are valid during its call only."""
    if scaling is None:
        scaling = module.head_dim ** -0.5
    groups = getattr(module, "num_key_value_groups", 1)
    k = key.repeat_interleave(groups, dim=1) if groups > 1 else key
    v = value.repeat_interleave(groups, dim=1) if groups > 1 else value
    layer = int(getattr(module, "layer_idx", -1))
    if not _SINK:
        s = torch.matmul(query, k.transpose(2, 3)) * scaling
        if softcap is not None:
            s = torch.tanh(s / softcap) * softcap
        logits = s + attention_mask if attention_mask is not None else s
        p = torch.nn.functional.softmax(logits, dim=-1, dtype=torch.float32).to(query.dtype)
        return torch.matmul(p, v).transpose(1, 2).contiguous(), None
    shape = query.shape[:-1] + (k.shape[-2],)
    _check_mask(attention_mask, shape[-1], layer + 1)
    s = torch.matmul(query, k.transpose(2, 3), out=_buffer("s", shape, query)).mul_(scaling)
    if softcap is not None:
        s.div_(softcap).tanh_().mul_(softcap)
    logits = torch.add(s, attention_mask, out=_buffer("logits", shape, s)) if attention_mask is not None else s
    if logits.dtype == torch.float32:
        p = torch.softmax(logits, -1, out=_buffer("p", shape, logits))
    else:
        p = torch.nn.functional.softmax(logits, dim=-1, dtype=torch.float32).to(query.dtype)
    out = torch.matmul(p, v).transpose(1, 2).contiguous()
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
    (B, H, n, n), made in tensors the tap reuses at the next layer: valid during the call (clone them to keep them)."""
    _SINK.append(callback)
    _STATE.append({})
    try:
        yield
    finally:
        _SINK.pop()
        _STATE.pop()


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
    """The exact logits from transformers' attention interface (:mod:`logit_tap`), layer by layer. The weights are
    not checked again here: :func:`tap_attention` makes P itself from S and a mask checked to be the plain causal
    mask (so P is causal and full-window by construction, and a weight that underflows to 0 under a huge logit gap
    is not mistaken for a masked key), and the probe's float64 sums refuse any S or P that is not finite."""
    ids = torch.from_numpy(job.windows[start:stop]).to(job.where)
    seen: list[int] = []
    name = type(job.model).__name__

    def take(layer: int, s: torch.Tensor, p: torch.Tensor) -> None:
        if layer != len(seen):
            raise ValueError(f"{name}: the tap saw layer {layer + 1} after {len(seen)} layers; refused (the probe "
                             f"reads the layers in order)")
        seen.append(layer)
        emit(layer, {"logits": s.detach().to("cpu", torch.float32), "weights": p.detach().to("cpu", torch.float32)})

    with torch.no_grad(), tapping(take):
        job.model(**call_kwargs(job, ids, False, off))
    if len(seen) != job.n_layers:
        raise ValueError(f"{name}: the tap saw {len(seen)} of its {job.n_layers} layers' attention; refused")


def attention_modules(model, n_layers: int) -> list[list[torch.nn.Module]]:
    """Each decoder layer's attention modules, layer by layer: in the model's list of its ``n_layers`` decoder layers
    (the first ``ModuleList`` of that length with one in every layer), the modules whose class is named as attention
    (BLOOM's and Falcon's ``self_attention``, MPT's ``attn``, GPT-Neo's ``attn`` and the ``attn.attention`` it wraps,
    XGLM's, StableLM's and BioGPT's ``self_attn``, ...). A wrapper and the module it wraps both; the first to return
    the weights gives them. ValueError naming the model when no such list is found (a hybrid model with attention in
    some layers only)."""
    for _, mod in model.named_modules():
        if isinstance(mod, torch.nn.ModuleList) and len(mod) == n_layers:
            found = [[m for m in layer.modules() if m is not layer and "Attention" in type(m).__name__]
                     for layer in mod]
            if all(found):
                return found
    raise ValueError(f"{type(model).__name__}: no list of its {n_layers} decoder layers with an attention module in "
                     f"each; the probe cannot read its attention weights layer by layer; refused")


@contextlib.contextmanager
def _eager(model) -> Iterator[None]:
    """The model's config set to eager attention for the block, restored after, where ``set_attn_implementation``
    left it otherwise: a family outside the attention interface refuses the switch (transformers warns and keeps
    sdpa), and Falcon under sdpa returns ``output_attentions`` weights built with sdpa's mask, not causal."""
    cfg = model.config
    before = getattr(cfg, "_attn_implementation", None)
    if before in (None, "eager"):
        yield
        return
    cfg._attn_implementation = "eager"
    try:
        yield
    finally:
        cfg._attn_implementation = before


def read_weights(job, off: bool, start: int, stop: int, emit) -> None:
    """transformers' own attention weights (``output_attentions``, eager), for a family outside the attention
    interface, streamed: a forward hook on each layer's attention module (:func:`attention_modules`; registered for
    the call, first of the module's hooks, removed after) takes the weights P as the module returns them, checks them
    causal and full-window, hands ``{"logits": log P (0 above the diagonal), "weights": P}`` (float32) to
    ``emit(layer0, record)`` and replaces them in the module's output by None, so that neither the model nor
    transformers' output recorder keeps any: one layer's weights alive at a time. Refused by name when a layer's
    weights do not arrive, arrive twice or out of order, or have another shape."""
    ids = torch.from_numpy(job.windows[start:stop]).to(job.where)
    b, n = ids.shape
    name = type(job.model).__name__
    above = ~torch.ones(n, n, dtype=torch.bool).tril()
    seen: list[int] = []

    def grab(layer: int, module, args, output):
        if not isinstance(output, (tuple, list)) or len(output) < 2 or output[1] is None:
            return None  # no weights here (a wrapper whose inner module gave them already)
        w = output[1]
        if layer != len(seen):
            raise ValueError(f"{name}: layer {layer + 1}'s attention weights arrived after {len(seen)} layers' "
                             f"({'a layer read twice' if layer < len(seen) else 'a layer without weights'}); "
                             f"refused (the probe reads each layer once, in order)")
        if not torch.is_tensor(w) or tuple(w.shape) != (b, job.n_heads, n, n):
            raise ValueError(f"{name}: layer {layer + 1}'s attention ({type(module).__name__}) returned "
                             f"{tuple(w.shape) if torch.is_tensor(w) else type(w).__name__} where weights of shape "
                             f"(batch {b}, {job.n_heads} heads, {n}, {n}) belong; refused")
        check_attention_weights(w, layer + 1, name)
        seen.append(layer)
        p = w.detach().to("cpu", torch.float32)
        emit(layer, {"logits": torch.log(p).masked_fill_(above, 0.0), "weights": p})
        kept = list(output)
        kept[1] = None  # the model keeps no weights: none in its output, none in transformers' recorder
        return tuple(kept) if isinstance(output, tuple) else kept

    handles = [m.register_forward_hook(partial(grab, q), prepend=True)
               for q, mods in enumerate(attention_modules(job.model, job.n_layers)) for m in mods]
    try:
        with torch.no_grad(), _eager(job.model):
            out = job.model(**call_kwargs(job, ids, True, off))
    finally:
        for h in handles:
            h.remove()
    left = [q + 1 for q, a in enumerate(getattr(out, "attentions", None) or ()) if a is not None]
    if len(seen) != job.n_layers or left:
        raise ValueError(f"{name} returned attention weights to the probe for {len(seen)} of its {job.n_layers} "
                         f"layers{f' and kept those of layers {left}' if left else ''}; refused")
