"""A GGUF model for the one engine (:func:`lnrecency.probe_model`): its header checked, the load and every probe
estimated and refused above the time limit or the free memory, then loaded (:func:`open_model`); :func:`from_gguf`
hands the loaded model and its own tokenizer to the engine (its inputs, slopes, RP and sink are the engine's, as for
any transformers model; the older reader of its own went with issue 82) and measures the perplexity beside.

Perplexity (:func:`perplexity`): exp of the mean next-token loss over the first :data:`PPL_WINDOWS` text windows,
from the base model's last hidden state through the output layer
:data:`lnrecency.experiments.probes.gguf.PPL_ROWS` rows at a time, with positions on and (positions "off" or
"both") off.
"""
from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable

import numpy as np
import torch

from lnrecency.experiments.probes.gguf import (
    GGUF_CHUNK,
    PPL_ROWS,
    GGUFModel,
    check_header,
    estimate_load,
    estimate_probe,
    load_gguf,
)
from lnrecency.experiments.probes.model_inputs import Arguments
from lnrecency.experiments.probes.probe import MAX_SECONDS, ProbeResult, ProbeSettings

__all__ = ["from_gguf", "Loaded", "open_model", "text_bytes_peak", "perplexity", "PPL_WINDOWS"]

#: text windows over which the perplexity is measured
PPL_WINDOWS = 16


@dataclass
class Loaded:
    """A GGUF model loaded for probing: its source, header summary, model, tokenizer, load time."""

    src: object
    m: GGUFModel
    model: object
    tok: object
    load_seconds: float
    estimate: dict


#: bytes of memory per byte of text while it is tokenised piece by piece (the text as Python keeps it, its ids
#: as int64 then int32; measured: 60 MiB of text peaked at 850 MiB with a byte-level BPE tokenizer), and the
#: transient cost of one piece (lnrecency.experiments.text.text_windows.PIECE_CHARS characters at 250 bytes)
TEXT_BYTES_PER_BYTE = 14
PIECE_BYTES = 250


def text_bytes_peak(text=None) -> int:
    """Bytes of memory that reading and tokenising ``text`` (None: the default text) needs at its peak; a bad
    ``--text`` is refused here, before the model loads (lnrecency.experiments.text.text_windows.text_size)."""
    from lnrecency.experiments.text.text_windows import PIECE_CHARS, text_size

    size = text_size(text)
    return int(TEXT_BYTES_PER_BYTE * size + PIECE_BYTES * min(size, PIECE_CHARS))


def _extra_passes(st: ProbeSettings, no_rope: bool) -> int:
    """Perplexity passes beyond the probed one: positions on beside a text probe without them; both for a
    random probe without positions."""
    return (1 if no_rope else 0) if st.tokens == "text" else (2 if no_rope else 0)


def open_model(path, *, plan: list, max_model_mib: float | None = None, announce: bool = False,
               text=None) -> Loaded:
    """Read and check ``path``'s header, estimate the load and every probe of ``plan`` ((ProbeSettings,
    no_rope) pairs) with the tokenising of ``text`` (:func:`text_bytes_peak`), refuse above the time limit or the
    free memory, then load (module docstrings)."""
    from lnrecency.experiments.decoders.train import deterministic
    from lnrecency.experiments.probes.gguf import MAX_MODEL_MIB
    from lnrecency.experiments.run_cache import folder, make_folder
    from lnrecency.files.gguf_source import open_source
    from lnrecency.runtime.memory import available_memory
    from lnrecency.runtime.timelimit import refusal, time_limit

    t0 = time.perf_counter()
    src = open_source(path)
    m = check_header(src, MAX_MODEL_MIB if max_model_mib is None else max_model_mib)
    context = src.header.arch_int("context_length")
    seconds, peak = estimate_load(m)
    for st, no_rope in plan:
        if context is not None and st.n > context:
            raise ValueError(f"n must be <= the model's context {context}; got n={st.n}")
        s, b = estimate_probe(m, st, _extra_passes(st, no_rope), min(st.sequences, PPL_WINDOWS))
        seconds, peak = seconds + s, max(peak, b)
        if st.tokens == "text" or no_rope:  # the text is read and tokenised beside the loaded model
            peak = max(peak, estimate_load(m)[1] + text_bytes_peak(text))
    what = f"the probe of {src.name!r} ({m.layers} layers; " + ", ".join(
        f"n = {st.n} x {st.sequences} {st.tokens}{' without positions' if off else ''}" for st, off in plan) + ")"
    if seconds > time_limit(MAX_SECONDS):
        said = str(refusal(what, seconds, time_limit(MAX_SECONDS), "lower sequences or n (--sequences, --n)"))
        raise ValueError(said.replace("with --max-seconds", "with max_seconds (--max-seconds on the command line)"))
    free = available_memory()
    if peak > free:
        raise ValueError(f"{what} needs about {peak / 2**20:.0f} MiB at its peak (the load and the probe's sums), "
                         f"above the {free / 2**20:.0f} MiB free; lower n or sequences (--n, --sequences)")
    if announce:
        print(f"probe: loading {src.name} ({m.architecture}, {m.layers} layers, {m.float32_bytes / 2**20:.0f} MiB "
              f"float32); estimated {seconds:.0f} s, peak {peak / 2**20:.0f} MiB", file=sys.stderr, flush=True)
    with deterministic(1):
        model, tok = load_gguf(src, m, make_folder(folder("gguf")),  # no link on the way from the cache root
                               (lambda line: print(f"probe: {line}", file=sys.stderr, flush=True)) if announce
                               else None)
    return Loaded(src, m, model, tok, time.perf_counter() - t0, {"seconds": round(seconds, 1),
                                                                  "peak_mib": round(peak / 2**20)})


def _base_call(model, ids: torch.Tensor, no_rope: bool) -> torch.Tensor:
    """The base model's last hidden state (no output layer). An explicit all-ones attention mask keeps
    transformers from reading zero position ids as packed sequences."""
    b, n = ids.shape
    pos = torch.zeros(b, n, dtype=torch.long) if no_rope else torch.arange(n).expand(b, n)
    return model.model(input_ids=ids, attention_mask=torch.ones(b, n, dtype=torch.long), position_ids=pos,
                       use_cache=False).last_hidden_state


def _loss(model, hidden: torch.Tensor, ids: torch.Tensor) -> tuple[float, int]:
    """(summed next-token loss, tokens) of a batch from its last hidden state, PPL_ROWS rows at a time."""
    head = model.get_output_embeddings()
    cap = getattr(model.config, "final_logit_softcapping", None)
    h = hidden[:, :-1].reshape(-1, hidden.shape[-1])
    target = ids[:, 1:].reshape(-1)
    total = 0.0
    for r in range(0, h.shape[0], PPL_ROWS):
        z = head(h[r:r + PPL_ROWS]).to(torch.float64)
        if cap:
            z = torch.tanh(z / cap) * cap
        total += float((torch.logsumexp(z, -1) - z.gather(1, target[r:r + PPL_ROWS, None])[:, 0]).sum())
    return total, int(h.shape[0])


def perplexity(model, windows: np.ndarray, no_rope: bool, chunk: int = 8) -> float:
    """exp of the mean next-token loss over ``windows`` (module docstring)."""
    total, count = 0.0, 0
    with torch.no_grad():
        for a in range(0, len(windows), chunk):
            ids = torch.from_numpy(windows[a:a + chunk])
            t, c = _loss(model, _base_call(model, ids, no_rope), ids)
            total, count = total + t, count + c
    return math.exp(total / count)


def from_gguf(p: Path, tokenizer: Any, a: Arguments, run: Callable) -> ProbeResult:
    """A GGUF model: its header checked and the load and probe estimated (refused above the time limit or the free
    memory: :func:`lnrecency.experiments.probes.gguf_probe.open_model`), loaded, then the same engine; the
    perplexity of the first text windows beside. ``a``: lnrecency.probe_model's checked arguments (batch_size, when
    not given, :data:`~lnrecency.experiments.probes.gguf.GGUF_CHUNK`, which the peak estimate assumes); ``run``: its
    probe of a model object (lnrecency.experiments.probes.model_probe)."""
    from lnrecency.experiments.probes.attention_checks import target_device
    from lnrecency.runtime.timelimit import max_seconds as time_limit

    if tokenizer is not None:
        raise ValueError("tokenizer: a GGUF model carries its own tokenizer; leave tokenizer out")
    if a.positions == "zero":
        raise ValueError("positions='zero' applies to learned absolute positions; a GGUF model's are RoPE (use "
                         "positions='off')")
    where = target_device(a.device)
    st = ProbeSettings(n=a.window, sequences=a.sequences, seed=a.seed, tokens=a.kind, rate=a.rate)
    plan = [(st, a.positions == "off")] + ([(st, True)] if a.positions == "both" else [])
    with time_limit(a.max_seconds):
        loaded = open_model(p, plan=plan, max_model_mib=a.max_model_mib, announce=a.progress, text=a.text)
    if where is not None:
        loaded.model.to(where)
    res = run(loaded.model, loaded.tok, a if a.batch_size is not None else replace(a, batch_size=GGUF_CHUNK))
    ppl = {}
    if a.kind == "text":
        with torch.no_grad():
            first = res.inputs[:PPL_WINDOWS]
            for state in ("on", "off") if a.positions in ("off", "both") else ("on",):
                ppl[state] = round(perplexity(loaded.model, first, state == "off"), 4)
    m = loaded.m
    res.model.update({"kind": "gguf", "path": str(loaded.src.name), "architecture": m.architecture,
                      "sha256": loaded.src.sha256, "kv_heads": m.kv_heads, "width": m.width,
                      "estimate": loaded.estimate, "load_seconds": round(loaded.load_seconds, 1),
                      "perplexity": {**ppl, "windows": min(a.sequences, PPL_WINDOWS)} if ppl else None})
    res.model["seconds"] = round(res.model["seconds"] + loaded.load_seconds, 1)
    return res
