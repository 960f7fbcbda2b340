"""A local Hugging Face causal LM folder, read as data for :func:`lnrecency.probe_model` (``transformers``, optional
extra ``hf``): its config and side files validated, safetensors weights only, no remote code, nothing downloaded
(:func:`load_hf`); and the model's W_Q^T W_K per head against a multiple of I (:func:`qk_of`, LLaMA-style q_proj /
k_proj and GPT-2 c_attn attention; others: None), reported with the probe's assumptions.

``rope_off`` turns rotary embeddings off in LLaMA-family models for a block, as the authors did for their NoPE
checkpoint (concept/with_params.ipynb patches ``apply_rotary_pos_emb``); the probe itself switches positions off by
position ids (:func:`lnrecency.experiments.probes.model_probe.position_scheme`).
"""
from __future__ import annotations

import contextlib
import math
from pathlib import Path

import torch

from lnrecency.experiments.probes.declared_sizes import MAX_CONFIG_BYTES, MAX_DEPTH, SIZE_FIELDS

__all__ = ["load_hf", "check_loaded", "qk_of", "rope_off", "read_config"]


#: weight files that would be unpickled: refused by name (only safetensors are read)
PICKLE_SUFFIXES = (".bin", ".pt", ".pth", ".pkl", ".ckpt")
#: the largest model (float32 weights, counted on torch's meta device) the probe loads
MAX_MODEL_BYTES = 2**30
#: the other JSON files of a model folder (a tokenizer.json of a 50k vocabulary is a few MB)
MAX_SIDE_BYTES = 64 * 2**20
MAX_SIDE_DEPTH = 64
#: the safetensors dtypes a model's weights may have (integer and boolean tensors are refused)
FLOAT_DTYPES = ("F64", "F32", "F16", "BF16")


def read_config(folder: Path, name: str = "--hf") -> dict:
    """The folder's config.json, validated as data before transformers sees it: a regular file of at most
    MAX_CONFIG_BYTES, a JSON object nested at most MAX_DEPTH deep, no custom code (``auto_map``), a
    ``model_type`` that transformers knows."""
    from lnrecency.files.readers import read_json

    path = folder / "config.json"
    if not path.exists():
        raise ValueError(f"{name} must be a local Hugging Face model folder with a config.json; got {str(folder)!r}")
    data = read_json(path, what="model config", max_bytes=MAX_CONFIG_BYTES, max_depth=MAX_DEPTH)
    for what, (names, low, high) in SIZE_FIELDS.items():
        found = [(k, data[k]) for k in names if k in data]
        if not found:
            if what == "attention heads":
                raise ValueError(f"{str(path)!r}: model_type {data.get('model_type')!r:.40} states no attention heads "
                                 f"({' / '.join(names)}); the probe reads attention weights and cannot read this "
                                 "family")
            continue
        key, value = found[0]
        if type(value) is not int or not low <= value <= high:
            raise ValueError(f"{str(path)!r}: {key} must be an integer in [{low}, {high}]; got {value!r:.40}")
    if "auto_map" in data:
        raise ValueError(f"{str(path)!r} names custom code (auto_map): a model folder is data, its code never "
                         f"runs; refused")
    from transformers import CONFIG_MAPPING

    kind = data.get("model_type")
    if not isinstance(kind, str) or kind not in CONFIG_MAPPING:
        raise ValueError(f"{str(path)!r}: model_type {kind!r} is not a model family transformers knows; refused "
                         f"(custom model types would need their own code)")
    return data


def _side_files(folder: Path) -> None:
    """Every other JSON file transformers may read in the folder (generation_config.json, tokenizer files, the
    weights index) through the validating reader first: a regular file, at most MAX_SIDE_BYTES (a sparse file
    counts at its full size), nested at most MAX_SIDE_DEPTH, finite numbers only. The refusal names the file."""
    from lnrecency.files.readers import read_json

    for f in sorted(folder.glob("*.json")):
        if f.name != "config.json":
            try:
                read_json(f, what="model side file", max_bytes=MAX_SIDE_BYTES, max_depth=MAX_SIDE_DEPTH)
            except ValueError as exc:
                raise ValueError(f"{exc}; remove or repair it (the folder is data, validated before use)") from None


def _weights(folder: Path) -> None:
    """Only safetensors weights are read: a folder with pickle weights and no safetensors is refused by name."""
    from lnrecency.files.readers import safetensors_header

    safe = sorted(folder.glob("*.safetensors"))
    if safe:
        for f in safe:  # each header against its file, before transformers reads a weight
            header = safetensors_header(f, what="model weights", max_bytes=2 * MAX_MODEL_BYTES)
            bad = sorted((name, dtype) for name, (dtype, _) in header.items() if dtype not in FLOAT_DTYPES)
            if bad:
                raise ValueError(f"{str(f)!r}: tensor {bad[0][0][:60]!r} is {bad[0][1]} ({len(bad)} such); the probe "
                                 f"reads floating-point weights only ({', '.join(FLOAT_DTYPES)}), as for checkpoints")
        return
    pickles = sorted(f.name for f in folder.iterdir() if f.suffix in PICKLE_SUFFIXES)
    if pickles:
        raise ValueError(f"{str(folder)!r} holds pickle weights ({', '.join(pickles[:3])}): pickles are never "
                         f"loaded; convert them to model.safetensors")
    raise ValueError(f"{str(folder)!r} holds no model.safetensors")


def check_loaded(model, info: dict, where: str) -> None:
    """Refuse a loaded model whose weights are missing or mismatched (nothing is probed on freshly initialised
    weights) or not finite. ``info``: transformers' loading info; ``where``: the source, for the message."""
    bad = {k: v for k, v in info.items() if k in ("missing_keys", "unexpected_keys", "mismatched_keys") and v}
    if bad.get("missing_keys") or bad.get("mismatched_keys"):
        keys = list(bad.get("missing_keys", [])) + [str(m[0]) if isinstance(m, tuple) else str(m)
                                                    for m in bad.get("mismatched_keys", [])]
        raise ValueError(f"the weights in {where} do not match its config ({len(keys)} missing or "
                         f"mismatched, e.g. {keys[0]}): refused, nothing is probed on freshly initialised weights")
    for name, t in model.state_dict().items():
        if t.is_floating_point() and not bool(torch.isfinite(t).all()):
            raise ValueError(f"the weights in {where}: {name!r} holds NaN or infinite values; nothing is "
                             f"probed on it")


def load_hf(path: str | Path, name: str = "--hf"):
    """A local causal LM as data: its config and weights validated first (:func:`read_config`, safetensors
    only), ``trust_remote_code=False``, nothing downloaded, eager attention; weights missing from the
    checkpoint or not matching the config are refused (nothing is probed on freshly initialised weights). ``name``:
    what the refusals call the path (the flag on the command line, the argument in Python)."""
    try:
        import transformers
    except ImportError:
        raise ValueError(f"{name} needs the 'hf' extra: python3 -m pip install -e '.[hf]'") from None
    p = Path(path)
    if not p.is_dir():
        raise ValueError(f"{name} must be a local Hugging Face model folder; got {str(path)!r}")
    read_config(p, name)
    _side_files(p)
    _weights(p)
    transformers.utils.logging.set_verbosity_error()  # one line per outcome: no loading reports or bars
    transformers.utils.logging.disable_progress_bar()
    try:
        config = transformers.AutoConfig.from_pretrained(str(p), local_files_only=True, trust_remote_code=False)
        config._attn_implementation = "eager"  # the probe reads attention weights, whatever the folder asks
        with torch.device("meta"):  # the model's size, before anything is allocated
            nbytes = 4 * sum(t.numel() for t in transformers.AutoModelForCausalLM.from_config(config).parameters())
    except (OSError, ValueError, KeyError, ImportError, AttributeError, TypeError, RuntimeError) as exc:
        raise ValueError(f"cannot build a causal LM from {str(path)!r}: {type(exc).__name__}: "
                         f"{(str(exc).splitlines() or [''])[0][:300]}") from None
    if nbytes > MAX_MODEL_BYTES:
        raise ValueError(f"{str(p / 'config.json')!r} describes a model of {nbytes / 2**20:.0f} MiB of float32 "
                         f"weights, above the probe's limit {MAX_MODEL_BYTES / 2**20:.0f} MiB")
    try:
        model, info = transformers.AutoModelForCausalLM.from_pretrained(
            str(p), config=config, local_files_only=True, trust_remote_code=False, use_safetensors=True,
            attn_implementation="eager", dtype=torch.float32, output_loading_info=True)
    except (OSError, ValueError, KeyError, ImportError, AttributeError, TypeError, RuntimeError) as exc:
        raise ValueError(f"cannot load a causal LM from {str(path)!r}: {type(exc).__name__}: "
                         f"{(str(exc).splitlines() or [''])[0][:300]}") from None
    except Exception as exc:  # safetensors' own errors (a damaged file) have no common base class
        raise ValueError(f"cannot read the weights in {str(path)!r}: {type(exc).__name__}: "
                         f"{(str(exc).splitlines() or [''])[0][:300]}") from None
    check_loaded(model, info, repr(str(path)))
    model.eval()
    return model


@contextlib.contextmanager
def rope_off(model, enabled: bool):
    if not enabled:
        yield
        return
    import importlib

    family = type(model).__module__
    mod = importlib.import_module(family)
    if not hasattr(mod, "apply_rotary_pos_emb"):
        raise ValueError(f"--no-rope: {type(model).__name__} has no rotary embedding to turn off")
    saved = mod.apply_rotary_pos_emb
    mod.apply_rotary_pos_emb = lambda q, k, *args, **kwargs: (q, k)
    try:
        yield
    finally:
        mod.apply_rotary_pos_emb = saved


def qk_of(model) -> list | None:
    """Per layer, per head W_Q^T W_K distances, for LLaMA-style and GPT-2 attention; None otherwise."""
    cfg = model.config
    heads = getattr(cfg, "num_attention_heads", None) or getattr(cfg, "n_head", None)
    out = []
    for name, mod in model.named_modules():
        wq = wk = None
        if hasattr(mod, "q_proj") and hasattr(mod, "k_proj"):
            wq, wk = mod.q_proj.weight.detach().double(), mod.k_proj.weight.detach().double()
        elif type(mod).__name__ == "GPT2Attention" and hasattr(mod, "c_attn"):
            w = mod.c_attn.weight.detach().double().T  # Conv1D stores (in, 3 out)
            d = w.shape[1]
            wq, wk = w[:d], w[d:2 * d]
        if wq is None:
            continue
        dh = wq.shape[0] // heads
        kv = wk.shape[0] // dh
        group = torch.arange(heads) // (heads // kv)  # grouped-query attention: query head h reads key head g
        a, b = wq.reshape(heads, dh, -1), wk.reshape(kv, dh, -1)[group]
        out.append({"layer": len(out) + 1, "heads": _qk_distances(a, b)})
    return out or None


def _qk_distances(a: torch.Tensor, b: torch.Tensor) -> list[dict]:
    """Per head, :func:`lnrecency.experiments.probes.probe_decoder.qk_distance` of M = A^T B (A, B: heads x
    d_head x d) without forming the d x d matrix: every norm and trace through d_head x d_head products, all heads at
    once (|M|^2 = tr(A A^T B B^T), tr M = sum A * B, tr(M M) = tr((B A^T)^2); sym and anti are (M +- M^T) / 2)."""
    d = a.shape[-1]
    ba = b @ a.transpose(1, 2)
    sums = torch.stack([((a @ a.transpose(1, 2)) * (b @ b.transpose(1, 2))).sum((1, 2)),
                        (ba * ba.transpose(1, 2)).sum((1, 2)), (a * b).sum((1, 2))]).tolist()
    return [_qk_distance_from(m2, mm, ab / d, d) for m2, mm, ab in zip(*sums)]


def _qk_distance_from(m2: float, mm: float, c: float, d: int) -> dict:
    """:func:`_qk_distances` of one head from |M|^2, tr(M M) and the scale c = tr M / d."""
    sym2, anti2 = max((m2 + mm) / 2, 0.0), max((m2 - mm) / 2, 0.0)
    dist2 = max(sym2 - 2 * c * (c * d) + c * c * d, 0.0)
    return {"distance": math.sqrt(dist2 / sym2) if sym2 > 0 else None,
            "antisymmetric": math.sqrt(anti2 / m2) if m2 > 0 else None, "scale": c}
