"""The inputs of a probe of a transformers model, every argument checked before any is built: windows of text in
the model's own tokenizer (``texts=``, at most the command line's --text bound), token ids given as an integer array
(``tokens=``, its shape read from the data), or the neutral random control (content tokens uniformly, the model's
BOS first where it has one)."""
from __future__ import annotations

import numpy as np

from lnrecency.experiments.probes.probe_settings import ProbeSettings

__all__ = ["model_inputs", "check_texts", "check_tokens"]


def _content_tokens(model, tokenizer) -> np.ndarray:
    cfg = model.config
    vocab = int(cfg.vocab_size)
    special = {getattr(cfg, k, None) for k in ("bos_token_id", "eos_token_id", "pad_token_id")}
    if tokenizer is not None:  # the tokenizer's special and added tokens too (as a GGUF model's control draws)
        special |= set(getattr(tokenizer, "all_special_ids", []) or [])
        special |= set(getattr(tokenizer, "added_tokens_decoder", {}) or {})
    special = {int(v) for v in special if isinstance(v, int) and 0 <= v < vocab}
    return np.setdiff1d(np.arange(vocab), sorted(special))


def _bos_of(model, tokenizer) -> int | None:
    """The BOS the model's tokenizer puts first (None when it adds none); without a tokenizer, the config's."""
    if tokenizer is not None:
        bos = getattr(tokenizer, "bos_token_id", None)
        try:
            first = tokenizer("a")["input_ids"][0]
        except (TypeError, KeyError, IndexError):
            first = None
        return bos if isinstance(bos, int) and first == bos else None
    bos = getattr(model.config, "bos_token_id", None)
    return bos if isinstance(bos, int) and 0 <= bos < int(model.config.vocab_size) else None


def _bos_choice(model, tokenizer, bos: str) -> int | None:
    """The token put first in every window under ``bos`` (lnrecency.experiments.probes.probe.BOS_CHOICES)."""
    from lnrecency.experiments.probes.probe_settings import bos_token

    vocab = int(model.config.vocab_size)
    declared = getattr(tokenizer, "bos_token_id", None) if tokenizer is not None else None
    if not isinstance(declared, int):
        declared = getattr(model.config, "bos_token_id", None)
    declared = declared if isinstance(declared, int) and 0 <= declared < vocab else None
    return bos_token(declared, _bos_of(model, tokenizer) is not None, bos, "bos (--bos on the command line)")


def encoder(tokenizer):
    """``piece -> ids`` through ``tokenizer``, its output checked: a mapping or encoding with ``input_ids`` (a
    tokenizer that returns None or no ids is refused by name, not left to a TypeError)."""
    def encode(piece: str):
        out = tokenizer(piece, add_special_tokens=False)
        try:
            ids = out["input_ids"]
        except (TypeError, KeyError, IndexError):
            ids = getattr(out, "input_ids", None)
        if ids is None:
            raise ValueError(f"tokenizer: {type(tokenizer).__name__} returned {type(out).__name__} with no "
                             f"input_ids for a piece of text; the tokenizer must return a list of integer token ids "
                             f"as input_ids")
        return ids
    return encode


def model_inputs(model, tokenizer, texts, tokens, st: ProbeSettings, bos: str = "model",
                 text=None) -> tuple[np.ndarray, str]:
    """(sequences, n) token ids of a probe and what they are: ``texts`` (strings) or, when ``st.tokens`` is "text"
    and no texts are given, the file or folder ``text`` (None: the default text), in the model's tokenizer;
    ``tokens`` (ids, used as given); else the random control."""
    vocab = int(model.config.vocab_size)
    if texts is not None or st.tokens == "text":
        from lnrecency.experiments.text.text_windows import read_text, text_windows, token_stream

        docs, source = (check_texts(texts), "") if texts is not None else read_text(text)
        if tokenizer is None:
            raise ValueError("tokenizer: text inputs (texts=, text=) need the model's tokenizer (tokenizer=...)")
        ids = token_stream(encoder(tokenizer), docs)
        first = _bos_choice(model, tokenizer, bos)
        return (text_windows(ids, st.n, st.sequences, st.seed, first),
                "text windows" + (f" of {source}" if source else "")
                + (", BOS first" if first is not None else ", no BOS"))
    if tokens is not None:
        arr = check_tokens(tokens)
        if arr.min() < 0 or arr.max() >= vocab:
            raise ValueError(f"tokens= holds ids outside [0, {vocab - 1}] (the model's vocabulary); got ids from "
                             f"{int(arr.min())} to {int(arr.max())}")
        return arr.astype(np.int64), "the tokens given"
    content = _content_tokens(model, tokenizer)
    if content.size == 0:
        raise ValueError(f"the model's vocabulary of {vocab} tokens has no content token (every id is special: BOS, "
                         f"EOS, padding); the random control needs one; give tokens= or texts=")
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([st.seed, 0x6a5d])))
    out = content[rng.integers(0, content.size, size=(st.sequences, st.n))]
    first = _bos_choice(model, tokenizer, bos)
    if first is not None:
        out[:, 0] = first
    return out, "the neutral random control (content tokens uniformly" + (", BOS first)" if first is not None else ")")


def check_texts(texts) -> list[str]:
    """texts= as a list of strings: a string or a list or tuple of strings, holding text, at most MAX_TEXT_BYTES in
    all (the command line's --text bound), checked before any is tokenised."""
    from lnrecency.experiments.text.text_windows import MAX_TEXT_BYTES

    if isinstance(texts, str):
        docs = [texts]
    elif isinstance(texts, (list, tuple)) and all(isinstance(d, str) for d in texts):
        docs = list(texts)
    else:
        raise ValueError(f"texts must be a string or a list of strings; got {type(texts).__name__}")
    total = sum(len(d) for d in docs)  # characters: at least one byte each
    if total > MAX_TEXT_BYTES or sum(len(d.encode("utf-8", "surrogatepass")) for d in docs) > MAX_TEXT_BYTES:
        raise ValueError(f"texts holds more than {MAX_TEXT_BYTES} bytes of text (the probe's limit, as for --text); "
                         f"pass a sample of it")
    if not any(d.strip() for d in docs):
        raise ValueError("texts must hold some text; got only empty or blank strings")
    return docs


def check_tokens(tokens) -> np.ndarray:
    """tokens= as an integer array (sequences, n), its shape read from the data: at least 8 sequences of 3 to 1,024
    tokens (the probe's bounds)."""
    if isinstance(tokens, (str, bytes)):
        raise ValueError(f"tokens must be an integer array (sequences, n); got {type(tokens).__name__}")
    try:
        arr = np.asarray(tokens)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"tokens must be an integer array (sequences, n); got {type(tokens).__name__}: "
                         f"{str(exc)[:80]}") from None
    if arr.ndim != 2 or arr.dtype == bool or not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"tokens must be an integer array (sequences, n) of token ids; got {arr.dtype} of shape "
                         f"{arr.shape}")
    return arr
