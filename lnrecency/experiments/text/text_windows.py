"""Windows of real text for a probe: n tokens each, from a local text, tokenised by the model's own tokenizer.

The default text is present wherever Python is: the Python Language Reference's topics that CPython ships
for ``help()`` (``pydoc_data/topics.py`` in the running interpreter's standard library, about 465 000
characters of English prose with code examples). The file is parsed with ``ast`` and its one dictionary
literal read by ``ast.literal_eval``: it is never imported or run. ``--text FILE|DIR`` takes any local text
instead (a folder: its text files, read through the corpus reader's bounded walk).

The documents are joined in a fixed order by blank lines and tokenised once; the token stream is cut into
non-overlapping windows of ``n - 1`` tokens (or n, when the model takes no BOS), and ``count`` of them are
drawn without replacement by the seed. Each window gets the model's BOS first where the model's tokenizer
adds one; either way the window's first key is the one left out of slopes and RP (reported as the sink).
"""
from __future__ import annotations

import ast
import sysconfig
from pathlib import Path

import numpy as np

from lnrecency.experiments.text.pieces import PIECE_CHARS, pieces, token_stream  # re-exported: text piece by piece

__all__ = ["default_text_path", "read_text", "text_size", "text_windows", "token_stream", "pieces", "DEFAULT_TEXT",
           "MAX_TEXT_BYTES", "PIECE_CHARS"]

#: what the default text is, in the report's words
DEFAULT_TEXT = "the Python Language Reference's help topics (pydoc_data/topics.py of the running CPython)"
#: the largest text read for windows
MAX_TEXT_BYTES = 64 * 2**20


def default_text_path() -> Path:
    return Path(sysconfig.get_paths()["stdlib"]) / "pydoc_data" / "topics.py"


def _topics(path: Path) -> list[str]:
    from lnrecency.files.readers import check_regular

    check_regular(path, "default text", 16 * 2**20)
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        values = [ast.literal_eval(node.value) for node in tree.body if isinstance(node, ast.Assign)]
    except (SyntaxError, ValueError, UnicodeDecodeError) as exc:
        raise ValueError(f"the default text {str(path)!r} is not the dictionary of help topics CPython ships "
                         f"({type(exc).__name__}); give --text FILE|DIR") from None
    topics = next((v for v in values if isinstance(v, dict) and v), None)
    if topics is None or not all(isinstance(v, str) for v in topics.values()):
        raise ValueError(f"the default text {str(path)!r} holds no dictionary of help topics; give --text FILE|DIR")
    return [topics[k] for k in sorted(topics)]


def _default_text() -> Path:
    path = default_text_path()
    if not path.exists():
        raise ValueError(f"the default text {str(path)!r} is missing from this Python; give --text FILE|DIR")
    return path


def _text_files(text: str | Path) -> list[Path]:
    """The files of ``--text`` (a file, or a folder's text files), checked before anything is read."""
    from lnrecency.experiments.text.corpus import corpus_files
    from lnrecency.files.readers import check_regular

    p = Path(text)
    if p.is_dir():
        files = corpus_files(p, flag="--text")[1]
        total = sum(f.stat().st_size for f in files)
        if total > MAX_TEXT_BYTES:
            raise ValueError(f"--text {str(text)!r} holds {total} bytes of text, above the limit {MAX_TEXT_BYTES}")
        return files
    if check_regular(p, "--text", MAX_TEXT_BYTES) == 0:  # an empty file, or one the system sizes as 0 (/proc)
        raise ValueError(f"--text {str(text)!r} is empty (0 bytes by its size); give a file or folder of text")
    return [p]


def text_size(text: str | Path | None = None) -> int:
    """Bytes of the text :func:`read_text` would read, with its refusals (``--text`` missing, not a file or a
    folder of text files, above :data:`MAX_TEXT_BYTES`) raised now, before anything is read: a probe refuses a bad
    ``--text`` before it loads a model."""
    if text is None:
        return _default_text().stat().st_size
    return sum(f.stat().st_size for f in _text_files(text))


def read_text(text: str | Path | None = None) -> tuple[list[str], str]:
    """(documents, description): the default text, or the text file or folder ``text``."""
    if text is None:
        return _topics(_default_text()), DEFAULT_TEXT
    p = Path(text)
    files = _text_files(p)
    docs = []
    for f in files:
        try:
            with open(f, "rb") as fh:
                raw = fh.read(MAX_TEXT_BYTES + 1)
            if len(raw) > MAX_TEXT_BYTES:
                raise ValueError(f"--text {str(f)!r} holds more than {MAX_TEXT_BYTES} bytes, the limit")
            docs.append(raw.decode("utf-8"))
        except UnicodeDecodeError:
            raise ValueError(f"--text {str(f)!r} is not UTF-8 text") from None
        except OSError as exc:
            raise ValueError(f"--text {str(f)!r} cannot be read: {exc.strerror or exc}") from None
    if not any(d.strip() for d in docs):
        raise ValueError(f"--text {str(text)!r} holds no text")
    return docs, f"{str(p)!r} ({len(files)} file{'s' if len(files) != 1 else ''})"


def text_windows(ids: list[int] | np.ndarray, n: int, count: int, seed: int, bos: int | None) -> np.ndarray:
    """(count, n) token windows cut from the stream ``ids`` (see the module docstring); ValueError naming
    how many windows the text holds when it holds fewer than ``count``."""
    body = n - 1 if bos is not None else n
    ids = np.asarray(ids, dtype=np.int64)
    slots = ids.size // body
    if slots < count:
        raise ValueError(f"the text holds {ids.size} tokens: {slots} windows of {body} tokens, fewer than the "
                         f"{count} asked for; lower --sequences or --n, or give a longer --text")
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, 0x7e47])))
    picks = np.sort(rng.choice(slots, size=count, replace=False))
    out = np.stack([ids[q * body:(q + 1) * body] for q in picks])
    if bos is not None:
        out = np.concatenate([np.full((count, 1), bos, dtype=np.int64), out], axis=1)
    return out
