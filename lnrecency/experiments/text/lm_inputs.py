"""The probe's inputs for a language model written by ``lnrecency train lm``: its own corpus and tokenizer.

A ``train lm`` checkpoint records its corpus (``corpus``: the folder; ``corpus_key``: the hash of its files and
the tokenizer's vocabulary). The corpus is read again through the validating reader and its key must match:
a corpus that changed since training is refused (its tokenizer or held-out split would differ). Inputs:

* ``task``: windows of the corpus's held-out files (every tenth file), the training distribution;
* ``text``: windows of ``--text FILE|DIR`` (default: the Python Language Reference's help topics, see
  :mod:`lnrecency.experiments.text.text_windows`) in the model's byte-level BPE;
* ``random``: tokens uniform over the vocabulary (a byte-level BPE trained here has no special token).

A ``train lm`` model is trained on windows without BOS, so none is added; the window's first key is left out
of slopes and RP like every probe's, and its attention share is reported as the sink.
"""
from __future__ import annotations

import os
from typing import Callable

import numpy as np
import torch

__all__ = ["lm_inputs", "is_lm"]


def is_lm(meta: dict) -> bool:
    return isinstance(meta.get("training"), dict) and meta["training"].get("task") == "lm"


def lm_inputs(meta: dict, vocab: int, n: int, tokens: str, seed: int, sequences: int,
              text=None) -> Callable[[int, int], torch.Tensor]:
    """``inputs(start, stop)`` -> (stop - start, n) token ids of a ``train lm`` model (module docstring)."""
    from lnrecency.experiments.text.corpus import CorpusData, load_corpus

    if tokens == "bos-response":
        raise ValueError("--tokens bos-response needs a model trained with BOS; a train lm model has none")
    if tokens == "random":
        def random(start: int, stop: int) -> torch.Tensor:
            rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, start, 0x1A])))
            return torch.from_numpy(rng.integers(0, vocab, size=(stop - start, n)))
        return random
    root, key = meta.get("corpus"), meta.get("corpus_key")
    if not isinstance(root, str) or not isinstance(key, str):
        raise ValueError("the checkpoint names no corpus (corpus, corpus_key): it was not written by train lm")
    from lnrecency.experiments.text.corpus import default_corpus

    default = os.path.realpath(root) == os.path.realpath(default_corpus())  # train lm's default: read by its rule
    try:
        corpus = load_corpus(None if default else root)  # as train lm read it (its default BPE vocabulary)
    except ValueError as exc:
        raise ValueError(f"the checkpoint's corpus {root!r} (the one it was trained on) cannot be read again: "
                         f"{str(exc).removeprefix('--corpus ')}") from None
    if corpus.key != key or corpus.vocab != vocab:
        raise ValueError(f"the corpus {root!r} changed since the model was trained (key {corpus.key}, the "
                         f"checkpoint's {key}); its tokenizer and held-out split would differ: refused")
    if tokens == "task":
        rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, 0x1B])))
        windows, _ = CorpusData(corpus).heldout(n, sequences, rng)
    else:
        from tokenizers import Tokenizer

        from lnrecency.experiments.text.text_windows import read_text, text_windows, token_stream

        docs, _ = read_text(text)
        tok = Tokenizer.from_str(corpus.tokenizer_json)
        ids = token_stream(lambda piece: tok.encode(piece).ids, docs)
        windows = text_windows(ids, n, sequences, seed, None)
    windows = np.ascontiguousarray(windows, dtype=np.int64)

    def fixed(start: int, stop: int) -> torch.Tensor:
        return torch.from_numpy(windows[start:stop])
    return fixed
