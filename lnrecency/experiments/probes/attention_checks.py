"""What a model must be before a probe returns a number from it (issue 68): a causal decoder with attention heads
(an encoder, an encoder-decoder or an attention-free model refused by name), a full attention window over the n
keys (a declared sliding window or local layer shorter than n refused; the weights themselves checked causal and
full-window, layer by layer), one device holding all its weights (meta and offloaded refused), and, where a wrapper
(TransformerLens, nnsight) holds it, the transformers model inside."""
from __future__ import annotations

import functools
import math
from typing import Any

import torch

__all__ = ["unwrap", "NO_ATTENTION", "check_family", "declared_window", "device_of", "check_attention_weights",
           "target_device", "parse_device"]


def unwrap(model) -> tuple[Any, str | None]:
    """(the transformers model, what wrapped it): a TransformerLens ``TransformerBridge`` (TransformerLens 4) and an
    nnsight ``LanguageModel`` hold the transformers model they run, which is probed (the same weights, the same
    logits); anything else is returned as it is. A TransformerLens 3 ``HookedTransformer`` holds a
    re-implementation with its own weights (folded, centred) and no transformers model: refused by name."""
    module = type(model).__module__ or ""
    name = type(model).__name__
    if module.startswith("transformer_lens"):
        inner = getattr(model, "original_model", None)
        if not isinstance(inner, torch.nn.Module) or not hasattr(inner, "config"):
            raise ValueError(f"model: a TransformerLens {name} holds no transformers model to probe (TransformerLens "
                             f"3's HookedTransformer re-implements the model); give the transformers model it was "
                             f"loaded from, or TransformerLens 4's TransformerBridge")
        return inner, f"TransformerLens {name}"
    if module.startswith("nnsight"):
        inner = getattr(model, "_module", None)  # the module an nnsight Envoy wraps
        if not isinstance(inner, torch.nn.Module) or not hasattr(inner, "config"):
            raise ValueError(f"model: the nnsight {name} wraps no transformers model to probe; give the model itself")
        return inner, f"nnsight {name}"
    return model, None


#: model types with no attention weights to read (state-space and recurrent models)
NO_ATTENTION = ("mamba", "mamba2", "falcon_mamba", "rwkv", "xlstm", "recurrent_gemma")


def check_family(model) -> tuple[int, int]:
    """(layers, heads) of a causal decoder with attention heads; an encoder-decoder, a state-space or recurrent
    model, or one whose config states no layers or heads, refused by name."""
    cfg = model.config
    kind = str(getattr(cfg, "model_type", ""))
    what = f"{type(model).__name__} (model_type {kind!r})"
    if getattr(cfg, "is_encoder_decoder", False):
        raise ValueError(f"model: {what} is an encoder-decoder model; the probe reads causal decoders (each query's "
                         f"attention over its earlier tokens)")
    layers = next((v for v in (getattr(cfg, k, None) for k in ("num_hidden_layers", "n_layer", "num_layers"))
                   if type(v) is int and v > 0), None)
    heads = next((v for v in (getattr(cfg, k, None) for k in ("num_attention_heads", "n_head", "num_heads"))
                  if type(v) is int and v > 0), None)
    from transformers.models.auto.modeling_auto import MODEL_FOR_MASKED_LM_MAPPING_NAMES

    if kind in MODEL_FOR_MASKED_LM_MAPPING_NAMES and not getattr(cfg, "is_decoder", False):
        raise ValueError(f"model: {what} is an encoder (bidirectional attention; its config is not is_decoder); the "
                         f"probe reads causal decoders only")
    if kind in NO_ATTENTION or heads is None:
        raise ValueError(f"model: {what} has no attention heads to read (a state-space or recurrent model); the "
                         f"probe reads attention weights")
    if layers is None:
        raise ValueError(f"model: {what} states no number of layers in its config; refused")
    return layers, heads


def declared_window(cfg) -> tuple[int, str] | None:
    """The shortest attention window the config declares for any layer, and the field that says so (Mistral's and
    Qwen2's ``sliding_window``, Gemma's sliding layers, GPT-Neo's local layers), or None (every layer full)."""
    found = []
    sw = getattr(cfg, "sliding_window", None)
    if type(sw) is int and sw > 0 and getattr(cfg, "use_sliding_window", True) is not False:
        types = getattr(cfg, "layer_types", None)
        if not isinstance(types, (list, tuple)) or any("sliding" in str(t) for t in types):
            found.append((sw, "sliding_window"))
    ws, local = getattr(cfg, "window_size", None), getattr(cfg, "attention_layers", None)
    if type(ws) is int and ws > 0 and isinstance(local, (list, tuple)) and "local" in local:
        found.append((ws, "window_size (its local layers)"))
    return min(found) if found else None


def device_of(model, device) -> torch.device:
    """The device the probe runs on: the one device of the model's weights (``device``, if given, must be it)."""
    devices = {p.device for p in model.parameters()} | {b.device for b in model.buffers()}
    if any(d.type == "meta" for d in devices):
        raise ValueError(f"model: {type(model).__name__} has weights on the meta device (not loaded, or offloaded "
                         f"by accelerate); load its weights before probing")
    placed = getattr(model, "hf_device_map", None)
    if isinstance(placed, dict) and any(str(v) in ("cpu", "disk") for v in placed.values()) and len(
            {str(v) for v in placed.values()}) > 1:
        raise ValueError(f"model: {type(model).__name__} is offloaded (hf_device_map places parts on "
                         f"{sorted({str(v) for v in placed.values()})}); the probe runs a model on one device")
    if len(devices) > 1:
        raise ValueError(f"model: {type(model).__name__}'s weights are on several devices "
                         f"({', '.join(sorted(map(str, devices)))}); the probe runs a model on one device")
    here = devices.pop() if devices else torch.device("cpu")
    if device is None:
        return here
    want = parse_device(device)
    same = want.type == here.type and (want.index is None or here.index is None or want.index == here.index)
    if not same:
        raise ValueError(f"device={device!r}, but the model's weights are on {here}; move the model there first "
                         f"(the probe never moves it) or leave device out")
    return here


def check_attention_weights(p: torch.Tensor, layer: int, what: str) -> None:
    """Layer ``layer``'s attention weights (B, H, n, n) must be causal and full-window: no weight on a later key (an
    encoder's bidirectional attention), a positive weight on every key at or before the query (a key given exactly
    0 is masked: a sliding window or local layer shorter than n), and finite. Otherwise refused: its log would be
    read as the model's preference."""
    n = p.shape[-1]
    # exact and cheap, no copy of the tensor: finite iff its least and largest entries are (torch.amin and amax
    # propagate NaN; the two together take 0.7 of aminmax's time); with no negative weight, the mass above the
    # diagonal (one matrix-vector product against the upper triangle's indicator) is 0 iff every weight there is;
    # then the nonzeros are exactly the lower triangle's iff none on or below the diagonal is 0
    low_high = (torch.amin(p), torch.amax(p))
    if not all(math.isfinite(float(x)) for x in low_high):
        raise ValueError(f"layer {layer}: {what} returned attention weights that are not finite; refused")
    if float(low_high[0]) < 0:
        raise ValueError(f"layer {layer}: {what} returned negative attention weights; refused")
    if float(torch.mv(p.reshape(-1, n * n), _upper(n, p.dtype, str(p.device))).max()) > 0:
        raise ValueError(f"layer {layer}: {what} attends to later keys (weights above the diagonal): not a causal "
                         f"decoder (an encoder such as BERT, or a prefix mask); the probe reads causal attention only")
    if int(torch.count_nonzero(p)) != p.shape[0] * p.shape[1] * n * (n + 1) // 2:  # a zero on or below it
        zero = (p == 0) & torch.ones(n, n, dtype=torch.bool, device=p.device).tril()
        b, h, i, j = (int(x) for x in zero.nonzero()[0])
        raise ValueError(f"layer {layer}: {what} gives key {j + 1} no weight at all for query {i + 1} (head {h + 1}): "
                         f"a sliding window or local attention shorter than n = {n}, or a mask the probe cannot read; "
                         f"the slope would be read from masked logits; probe with a shorter n")


@functools.lru_cache(maxsize=16)
def _upper(n: int, dtype: torch.dtype, device: str) -> torch.Tensor:
    """The indicator of the n x n upper triangle above the diagonal, flattened (made once per size)."""
    return torch.ones(n, n, dtype=dtype, device=device).triu(1).reshape(-1)


def parse_device(device: Any) -> torch.device:
    """``device`` (a torch device or its name) as a torch device; ValueError naming it when torch cannot read it, or
    when it is a CUDA device and none is available here."""
    try:
        want = torch.device(device)
    except (TypeError, ValueError, RuntimeError):
        raise ValueError(f"device must be a torch device or its name ('cpu', 'cuda', 'cuda:0'); got {device!r}") \
            from None
    if want.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device={device!r}: no CUDA device is available here")
    return want


def target_device(device: Any) -> torch.device | None:
    """The device a model the probe loads itself goes to, checked before the load."""
    if device is None:
        return None
    want = parse_device(device)
    if want.type == "meta":
        raise ValueError("device='meta' holds no weights; the probe runs a model on a real device")
    return want
