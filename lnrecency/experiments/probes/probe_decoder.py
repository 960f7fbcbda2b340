"""The probe on our own decoders: inputs (the identity configuration's Gaussian draws, or tokens of the task or
random tokens), the traces read layer by layer, the model's assumptions (norms, cosines, QK distance) and the
induction score; and these decoders as :func:`lnrecency.probe_model`'s input (:func:`from_checkpoint`,
:func:`from_decoder`).

As the one engine's input, a decoder is a checkpoint folder written by ``lnrecency train`` (a task model, or a
``train lm`` model with its corpus and tokenizer), a training result
(:class:`lnrecency.experiments.decoders.train.TrainResult`, which knows its task) or a bare decoder object
(:class:`lnrecency.experiments.decoders.decoder.Decoder`; the identity decoder is one). Its layers are read as the
blocks make them (:func:`probe_decoder`: the exact logits, weights, values and states, one layer alive at a time;
norm profiles and Gram panels beside the slopes).

Every argument of probe_model is honoured or refused by name:

* ``tokens``: "task" (the training distribution: the default for a checkpoint or a training result), "task-no-bos",
  "bos-response", "random" (the neutral control: the default for a bare decoder, whose task is not known), "text"
  (a ``train lm`` model: windows of ``text`` in its own tokenizer), or an array of ids (sequences, n). The identity
  decoder takes the theory's Gaussian inputs only (``tokens`` left out, or "random"). The windows are drawn in
  blocks of :data:`BLOCK` whatever ``batch_size``, so the same seed probes the same windows;
* ``texts`` (strings): refused (a ``train lm`` model reads ``text``, a file or folder);
* ``positions``: "on"; "off" and "zero" leave a decoder's learned position embeddings out (the same thing for these
  models); "both": on and off on the same windows, with the paired difference; a decoder without positions takes
  "off" and says so ("zero" is refused there); rotary positions cannot be switched off here (refused);
* ``n``, ``sequences``: default :data:`~lnrecency.experiments.probes.model_inputs.DECODER_N` (shortened to the
  model's context) and :data:`~lnrecency.experiments.probes.model_inputs.DECODER_SEQUENCES`;
* ``bos``: "model"; "first" (a task model's windows start with its BOS already; a ``train lm`` model has none:
  refused); "none" (a task model: the task without its BOS, read as tokens "task-no-bos", every key in the slopes;
  refused with tokens "random" or "bos-response"; a ``train lm`` model: nothing changes); the identity decoder takes
  "model" only;
* ``device``: the CPU, where these models are trained and probed deterministically (anything else refused);
  ``batch_size``: windows per step; ``slopes_only``, ``maps``, ``max_seconds``, ``rate``, ``seed``, ``progress``:
  as for any model, except that slopes_only defaults to False at every n, the time estimate is
  :func:`~lnrecency.experiments.probes.probe_costs.probe_seconds` and the early estimate comes after the second
  step; ``ablate_sink``: the sink ablation ({layer: share}, or "LAYER:SHARE,..."); ``tokenizer`` and
  ``max_model_mib``: refused.
"""
from __future__ import annotations

import dataclasses
import hashlib
import math
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Callable, Iterable

import numpy as np
import torch

from lnrecency.experiments.probes.model_inputs import DECODER_KINDS, DECODER_N, DECODER_SEQUENCES, Arguments
from lnrecency.experiments.probes.probe import THEORY_INPUTS, ProbeResult, ProbeSettings, check_probe_cost, probe
from lnrecency.experiments.probes.probe_costs import probe_seconds
from lnrecency.experiments.probes.probe_settings import check_first_share  # noqa: F401 (its home before)


# ------------------------------------------------------------------------------------------------------
# Decoders of lnrecency.experiments.decoders (trained or identity)
# ------------------------------------------------------------------------------------------------------
def _identity_inputs(cfg, settings: ProbeSettings) -> Callable[[int, int], torch.Tensor]:
    """The theory's embeddings at width d (numerics.samplers, direct representation, the Monte Carlo's
    stream for this seed): sequence b of the stream is the Monte Carlo's draw b."""
    from lnrecency.numerics.samplers import Representation, draw_range, embed

    rep = Representation(settings.n, cfg.d_model, "direct")

    def inputs(start: int, stop: int) -> torch.Tensor:
        return torch.from_numpy(embed(draw_range(rep, settings.seed, start, stop), cfg.identity, cfg.d_model))
    return inputs


def token_inputs(model, settings: ProbeSettings, task: str | None) -> Callable[[int, int], torch.Tensor]:
    from lnrecency.experiments.decoders.tasks import batch, bos_response_tokens, random_tokens

    cfg = model.cfg
    if settings.n > cfg.context:
        raise ValueError(f"n must be <= the model's context {cfg.context}; got n={settings.n}")

    def inputs(start: int, stop: int) -> torch.Tensor:
        rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([settings.seed, start])))
        if settings.tokens in ("task", "task-no-bos"):
            if task is None:
                raise ValueError(f"--tokens {settings.tokens} needs a model trained on a task")
            if settings.tokens == "task":
                toks, _ = batch(task, settings.n, stop - start, cfg.vocab, rng)
            else:  # the same task without its BOS: one token longer, BOS dropped
                toks = batch(task, settings.n + 1, stop - start, cfg.vocab, rng)[0][:, 1:]
        elif settings.tokens == "bos-response":
            toks = bos_response_tokens(settings.n, stop - start, cfg.vocab, rng)
        else:
            toks = random_tokens(settings.n, stop - start, cfg.vocab, rng)
        return torch.from_numpy(toks)
    return inputs


def _trace_dicts(traces: Iterable) -> list:
    return [{"logits": t.logits, "weights": t.weights, "values": t.values, "head_out": t.head_out,
             "normed": t.normed, "attn_out": t.attn_out, "mid": t.mid, "mlp_in": t.mlp_in, "out": t.out}
            for t in traces]


def assumptions_of(model, inputs: torch.Tensor | None = None) -> dict:
    """Distances from the theory's assumptions: per layer and head, d(W_Q^T W_K) = ||Sym - c I||_F / ||Sym||_F
    (Sym the symmetric part, c = tr(Sym) / d; 0 for a multiple of I; a rank-r matrix is at least
    sqrt(1 - r/d) away, ``rank_floor``) and the antisymmetric share ||Anti||_F / ||M||_F; the embeddings'
    anisotropy as the mean cosine of distinct token embeddings and of distinct positions' inputs."""
    cfg = model.cfg
    if cfg.is_identity:
        return {"identity": True, "w_qk_distance": 0.0, "w_qk_antisymmetric": 0.0, "w_o": False, "mlp": False,
                "positions": "none", "trained": False, "alpha_config": float(cfg.identity.alpha),
                "alpha_inputs": mean_cosine(inputs) if inputs is not None else None}
    out = {"identity": False, "w_o": True, "mlp": cfg.mlp, "positions": cfg.positions,
           "rank_floor": math.sqrt(1.0 - cfg.head_dim / cfg.d_model), "layers": []}
    dh = cfg.head_dim
    for l0, block in enumerate(model.blocks):
        wq, wk = block.attn.q.weight.detach().double(), block.attn.k.weight.detach().double()
        heads = []
        for h in range(cfg.n_heads):
            mq, mk = wq[h * dh:(h + 1) * dh], wk[h * dh:(h + 1) * dh]
            heads.append(qk_distance(mq.T @ mk))
        out["layers"].append({"layer": l0 + 1, "heads": heads})
    emb = model.tok.weight.detach().double()
    out["alpha_tokens"] = mean_cosine(emb[None])
    if inputs is not None:
        out["alpha_inputs"] = mean_cosine(inputs)
    return out


def qk_distance(m: torch.Tensor) -> dict:
    sym, anti = (m + m.T) / 2, (m - m.T) / 2
    d = m.shape[0]
    c = torch.trace(sym) / d
    norm = torch.linalg.norm(sym)
    return {"distance": float(torch.linalg.norm(sym - c * torch.eye(d, dtype=m.dtype)) / norm) if norm > 0 else None,
            "antisymmetric": (float(torch.linalg.norm(anti) / torch.linalg.norm(m))
                              if torch.linalg.norm(m) > 0 else None),
            "scale": float(c)}


def mean_cosine(x: torch.Tensor) -> float:
    """Mean cosine between distinct rows of each x[b] (B, n, d), averaged over b."""
    x = x.to(torch.float64)
    u = x / torch.linalg.norm(x, dim=-1, keepdim=True).clamp_min(1e-300)
    g = u @ u.transpose(-1, -2)
    n = g.shape[-1]
    return float(((g.sum((-1, -2)) - torch.diagonal(g, dim1=-2, dim2=-1).sum(-1)) / (n * (n - 1))).mean())


def induction_regions(n: int, bos: bool = True) -> dict:
    """The induction task's row regions (1-based rows): the first copy of r and the second (with its BOS first,
    [BOS, r, r, ...]; without it, [r, r, ...])."""
    m = (n - 1) // 2 if bos else n // 2
    first = 2 if bos else 1
    return {"first copy": list(range(first, first + m)), "second copy": list(range(first + m, n + 1))}


def probe_decoder(model, settings: ProbeSettings, *, task: str | None = None, info: dict | None = None,
                  progress: bool = False, light: bool = False,
                  inputs: Callable[[int, int], torch.Tensor] | None = None,
                  first_share: dict | None = None, positions: bool = True, maps: bool = True,
                  slopes_only: bool = False) -> ProbeResult:
    """:func:`probe` on a decoder of :mod:`lnrecency.experiments.decoders` (trained or identity), read layer by
    layer as its blocks make them (:meth:`lnrecency.experiments.decoders.decoder.Decoder.layers`: one layer's traces
    alive at a time); ``inputs``: the token sequences (start, stop) -> (stop - start, n), where the model's inputs
    are not a generated task's (a ``train lm`` model: :func:`lnrecency.experiments.text.lm_inputs.lm_inputs`).
    ``first_share``: the sink ablation, {layer (1-based): a share in [0, 1) or "mean"} (:func:`check_first_share`,
    :func:`lnrecency.experiments.decoders.decoder.fix_first_share`), stated in the result's model info.
    ``positions``: False leaves the learned position embeddings out. ``maps``, ``slopes_only``: :func:`probe`'s.
    (:func:`lnrecency.probe_model` is the public front: it checks every argument and calls this.)"""
    from lnrecency.experiments.decoders.train import deterministic

    cfg = model.cfg
    if cfg.is_identity:  # the theory's Gaussian inputs: no tokens, no BOS (every key enters the slopes)
        settings = dataclasses.replace(settings, tokens=THEORY_INPUTS)
    if inputs is not None and settings.n > cfg.context:
        raise ValueError(f"n must be <= the model's context {cfg.context}; got n={settings.n}")
    make = (_identity_inputs(cfg, settings) if cfg.is_identity else inputs if inputs is not None
            else token_inputs(model, settings, task))

    fixed = {q - 1: v for q, v in check_first_share(first_share, cfg.n_layers).items()}

    def traces_of(start: int, stop: int, emit) -> None:
        x = make(start, stop)
        with torch.no_grad():
            source = {"embeds": x} if cfg.is_identity else {"tokens": x}
            for q, _, tr in model.layers(**source, trace=True, positions=positions, first_share=fixed):
                emit(q, _trace_dicts([tr])[0])

    light = light or slopes_only
    # before any input; the steps stay those of a probe that held every layer at once (a task's windows are drawn
    # per step: the same steps, the same windows as before the probe streamed)
    chunk = check_probe_cost(cfg.n_layers, cfg.n_heads, settings.n, cfg.d_model, settings, light)
    settings = dataclasses.replace(settings, chunk=chunk)
    regions = None
    if task == "induction" and settings.tokens in ("task", "task-no-bos"):
        regions = induction_regions(settings.n, bos=settings.tokens == "task")
    with deterministic(1):
        first = make(0, min(settings.chunk, settings.sequences))
        with torch.no_grad():
            embedded = first if cfg.is_identity else model.embed(first, positions)
        assumptions = assumptions_of(model, embedded)
        info = {"kind": "identity" if cfg.is_identity else "lnrecency-decoder", "config": cfg.as_dict(),
                **(info or {})}
        if fixed:
            info["sink_ablation"] = {str(q + 1): v for q, v in fixed.items()}
        return probe(traces_of, n_layers=cfg.n_layers, n_heads=cfg.n_heads, settings=settings, model_info=info,
                     assumptions=assumptions, progress=progress, light=light, width=cfg.d_model, regions=regions,
                     stream=True, maps=maps, slopes_only=slopes_only,
                     logits_note=("identity: S_ij = lam <N(h_i), N(h_j)> (the theory's score)" if cfg.is_identity
                                  else "attention logits S = (W_Q y_i).(W_K y_j) / sqrt(d_head) (exact)"))


def induction_score(model, *, n: int = 33, sequences: int = 128, seed: int = 0) -> tuple[float, list]:
    """The standard induction score on repeated random sequences [BOS, r_1..r_m, r_1..r_m]: per head, the mean
    attention weight from a position of the second copy to the token after that token's first occurrence
    (offset m - 1 back). Returns (max over heads, [[per head] per layer])."""
    from lnrecency.experiments.decoders.tasks import batch

    cfg = model.cfg
    n = min(n, cfg.context)
    m = (n - 1) // 2
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, 7])))
    toks, _ = batch("induction", n, sequences, cfg.vocab, rng)
    with torch.no_grad():
        _, tr = model(torch.from_numpy(toks), trace=True)
    q = np.arange(m + 1, 2 * m + 1)  # 0-based query positions of the second copy
    key = q - m + 1
    per = [[float(t.weights[:, h, q, key].mean()) for h in range(cfg.n_heads)] for t in tr]
    return max(max(p) for p in per), per


# ------------------------------------------------------------------------------------------------------
# The decoders as lnrecency.probe_model's input (the module docstring's list)
# ------------------------------------------------------------------------------------------------------
#: the windows of a task or a corpus are drawn this many at a time, whatever the batch size (the draw of
#: lnrecency.experiments.probes.probe_decoder.token_inputs is seeded per block)
BLOCK = 64


def is_decoder(model: Any) -> bool:
    """Whether ``model`` is one of this project's decoders or a training result holding one."""
    from lnrecency.experiments.decoders.decoder import Decoder
    from lnrecency.experiments.decoders.train import TrainResult

    return isinstance(model, (Decoder, TrainResult))


def _refuse_early(a: Arguments, tokenizer: Any) -> None:
    """What no decoder of this project takes, refused before a checkpoint is read."""
    if tokenizer is not None:
        raise ValueError("tokenizer: this project's decoders carry their own inputs (a task, or a train lm model's "
                         "corpus tokenizer); leave tokenizer out")
    if a.texts is not None:
        raise ValueError("texts: a train lm model reads text= (a file or folder) in its own tokenizer; this "
                         "project's decoders take no strings")
    if a.device is not None:
        from lnrecency.experiments.probes.attention_checks import parse_device

        if parse_device(a.device).type != "cpu":
            raise ValueError(f"device={str(a.device)!r}: this project's decoders are probed on the CPU, where they "
                             f"are trained (deterministic); leave device out or give 'cpu'")


def from_checkpoint(p: Path, tokenizer: Any, a: Arguments) -> ProbeResult:
    """A checkpoint folder of ``lnrecency train`` (validated as data: lnrecency.experiments.decoders.train.load)."""
    from lnrecency.experiments.decoders.train import load

    _refuse_early(a, tokenizer)
    model, meta = load(p)
    training = meta.get("training") or {}
    return _probe(model, training.get("task"), meta, {"path": str(p), "training": training}, a)


def from_decoder(model: Any, tokenizer: Any, a: Arguments) -> ProbeResult:
    """A decoder object, or a training result (its task known)."""
    from lnrecency.experiments.decoders.train import TrainResult

    _refuse_early(a, tokenizer)
    if isinstance(model, TrainResult):
        training = asdict(model.settings)
        if training.get("task") == "lm":
            raise ValueError("model: a train lm TrainResult does not hold its corpus and tokenizer; probe its "
                             "checkpoint folder (lnrecency train lm --out DIR), where they are recorded")
        return _probe(model.model, training.get("task"), None, {"training": training}, a)
    return _probe(model, None, None, {}, a)


@dataclass(frozen=True)
class _Plan:
    """One decoder probe's checked plan."""

    st: ProbeSettings
    make: Callable[[int, int], torch.Tensor] | None  # token windows (None: the identity's or the task's own draw)
    task: str | None
    states: tuple  # the probes to run: ("on",), ("off",) or ("on", "off")
    first: dict
    what: str


def _kind(a: Arguments, cfg, task: str | None, lm: bool) -> str:
    """The kind of inputs, after the model's default and ``bos``."""
    if cfg.is_identity:
        if a.kind != "random" or a.bos != "model":
            raise ValueError(f"{'bos' if a.bos != 'model' else 'tokens'}: the identity decoder takes the theory's "
                             f"inputs (Gaussian vectors, no tokens); leave tokens and bos out")
        return THEORY_INPUTS
    kind = ("task" if task is not None else "random") if a.kind_default else a.kind
    if kind == "text" and not lm:
        raise ValueError(f"tokens='text' needs a model with its own tokenizer (a train lm checkpoint); this model "
                         f"was trained on {'task ' + repr(task) if task else 'a task not known here'}")
    if kind in DECODER_KINDS and task is None:
        raise ValueError(f"tokens={kind!r} needs the model's task: give its checkpoint folder or its TrainResult "
                         f"(a bare Decoder does not know it), or tokens='random'")
    if lm and kind in ("task-no-bos", "bos-response"):
        raise ValueError(f"tokens={kind!r}: a train lm model has no BOS; it takes 'task', 'text', 'random' or ids")
    if a.bos == "first" and lm:
        raise ValueError("bos='first': a train lm model has no BOS token (its windows are corpus tokens only); "
                         "allowed here: 'model', 'none'")
    if a.bos == "none" and not lm:
        if kind not in ("task", "task-no-bos"):
            raise ValueError(f"bos='none' with tokens={kind!r}: a task model's probe without BOS is tokens='task' "
                             f"(read as 'task-no-bos')")
        kind = "task-no-bos"
    return kind


def _states(a: Arguments, scheme: str) -> tuple:
    if a.positions in ("off", "zero", "both") and scheme == "rotary":
        raise ValueError(f"positions={a.positions!r}: this decoder's positions are rotary, which the probe cannot "
                         f"switch off; allowed here: 'on'")
    if a.positions == "zero" and scheme != "learned":
        raise ValueError(f"positions='zero' replaces learned position embeddings by zeros; this decoder's positions "
                         f"are {scheme!r} (use positions='off')")
    return {"on": ("on",), "off": ("off",), "zero": ("off",), "both": ("on", "off")}[a.positions]


def _blocks(make: Callable[[int, int], torch.Tensor], sequences: int) -> Callable[[int, int], torch.Tensor]:
    """``make`` drawn :data:`BLOCK` windows at a time (its seed per block), sliced to any (start, stop): the
    windows do not depend on the steps the probe takes."""
    cache: dict = {}

    def block(k: int) -> torch.Tensor:
        if k not in cache:
            cache.clear()
            cache[k] = make(k * BLOCK, min((k + 1) * BLOCK, sequences))
        return cache[k]

    def windows(start: int, stop: int) -> torch.Tensor:
        parts = [block(k)[max(start - k * BLOCK, 0):stop - k * BLOCK]
                 for k in range(start // BLOCK, (stop - 1) // BLOCK + 1)]
        return torch.cat(parts) if len(parts) > 1 else parts[0]
    return windows


def _plan(model, task: str | None, meta: dict | None, a: Arguments) -> _Plan:
    """Every check against the model, then the settings and the windows' source."""
    from lnrecency.experiments.text.lm_inputs import is_lm, lm_inputs

    cfg = model.cfg
    lm = meta is not None and is_lm(meta)
    kind = _kind(a, cfg, task, lm)
    states = _states(a, cfg.positions)
    n = DECODER_N if a.n_default else a.n
    if a.n_default and 3 <= cfg.context < n:
        n = cfg.context
    if n > cfg.context and not cfg.is_identity:
        raise ValueError(f"n must be <= the model's context {cfg.context}; got n={n}")
    first = check_first_share(a.ablate_sink, cfg.n_layers, "ablate_sink")
    st = ProbeSettings(n=n, sequences=DECODER_SEQUENCES if a.sequences_default else a.sequences, seed=a.seed,
                       tokens=kind, rate=a.rate, chunk=a.batch_size or BLOCK)
    if kind == THEORY_INPUTS:
        return _Plan(st, None, task, states, first, "the theory's inputs (Gaussian vectors at width d)")
    if a.ids is not None:
        if a.ids.min() < 0 or a.ids.max() >= cfg.vocab:
            raise ValueError(f"tokens= holds ids outside [0, {cfg.vocab - 1}] (the model's vocabulary); got ids "
                             f"from {int(a.ids.min())} to {int(a.ids.max())}")
        ids = torch.from_numpy(np.ascontiguousarray(a.ids, dtype=np.int64))
        return _Plan(st, lambda start, stop: ids[start:stop], task, states, first, "the tokens given")
    base = (lm_inputs(meta, cfg.vocab, n, kind, a.seed, st.sequences, text=a.text) if lm
            else token_inputs(model, replace(st, chunk=BLOCK), task))
    what = {"task": f"the training distribution ({'corpus held-out windows' if lm else 'task ' + repr(task)})",
            "task-no-bos": f"task {task!r} without its BOS", "bos-response": "BOS scattered in mid-sequence",
            "random": "the neutral random control", "text": "text windows in the model's own tokenizer"}[kind]
    return _Plan(st, _blocks(base, st.sequences), task, states, first, what)


def _probe(model, task: str | None, meta: dict | None, info: dict, a: Arguments) -> ProbeResult:
    from lnrecency.runtime.timelimit import max_seconds

    if model.training:
        model.eval()
    plan = _plan(model, task, meta, a)
    cfg, st = model.cfg, plan.st
    seen: list = []
    make = plan.make
    if make is not None:  # the windows probed, kept as they are drawn, in order (res.inputs)
        def make(start: int, stop: int, _draw=plan.make) -> torch.Tensor:
            x = _draw(start, stop)
            if sum(len(s) for s in seen) == start:  # a step not seen yet (the first windows are drawn twice)
                seen.append(x.numpy().copy())
            return x
    scheme = cfg.positions
    if a.progress:  # the plan, announced before any work (as a transformers model's probe does), once it is allowed
        import sys

        with max_seconds(a.max_seconds):
            check_probe_cost(cfg.n_layers, cfg.n_heads, st.n, cfg.d_model, st, bool(a.slopes_only))

        seconds = len(plan.states) * probe_seconds(cfg.n_layers, cfg.n_heads, st.n, cfg.d_model, st.sequences,
                                                   bool(a.slopes_only))
        print(f"probe: {'the identity decoder' if cfg.is_identity else 'a decoder of this project'}, "
              f"{cfg.n_layers} layers x {cfg.n_heads} heads, {st.sequences} windows of n = {st.n} ({st.tokens})"
              f"{' (positions on and off)' if len(plan.states) == 2 else ''}; estimated {seconds:.3g} s",
              file=sys.stderr, flush=True)
    results = []
    for state in plan.states:
        seen.clear()
        t0 = time.perf_counter()
        with max_seconds(a.max_seconds):
            res = probe_decoder(model, st, task=plan.task, progress=a.progress, info=dict(info), inputs=make,
                                first_share=plan.first, positions=state == "on", maps=a.maps,
                                slopes_only=bool(a.slopes_only))
        res.inputs = np.concatenate(seen)[:st.sequences] if seen else None
        res.model.update(_info(res, cfg, scheme, state, plan, a, time.perf_counter() - t0))
        results.append(res)
    res = results[0]
    if len(results) == 2:
        res.positions_off = results[1]
        res.model["positions"]["state"] = "on, and off on the same windows: " + results[1].model["positions"]["state"]
        res.model["seconds"] = round(res.model["seconds"] + results[1].model["seconds"], 2)
    return res


def _info(res: ProbeResult, cfg, scheme: str, state: str, plan: _Plan, a: Arguments, seconds: float) -> dict:
    off = {"none": "off: the decoder has no positional encoding", "learned": "off: the learned position embeddings "
           "left out (every token's input is its token embedding)"}.get(scheme)
    estimate = probe_seconds(cfg.n_layers, cfg.n_heads, plan.st.n, cfg.d_model, plan.st.sequences,
                             bool(a.slopes_only))
    out = {"inputs": plan.what, "positions": {"scheme": scheme, "state": "on" if state == "on" else off},
           "device": "cpu", "streamed": True, "maps": a.maps, "slopes_only": bool(a.slopes_only),
           "layers": cfg.n_layers, "heads": cfg.n_heads, "estimate_seconds": float(f"{estimate:.3g}"),
           "seconds": round(seconds, 2)}
    if res.inputs is not None:
        out["inputs_sha256"] = hashlib.sha256(np.ascontiguousarray(res.inputs, dtype=np.int64)).hexdigest()
    return out
