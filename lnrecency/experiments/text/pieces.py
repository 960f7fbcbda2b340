"""A text tokenised piece by piece, so that memory is bounded by the text and its ids, not by a tokenizer's
per-token objects (offsets, strings), which cost 150-250 bytes per character while they live.

Pieces are cut where byte-level BPE pre-tokenisation splits anyway (after a newline that a non-space follows, else
before a space that follows a non-space), so the ids of the pieces joined equal the ids of the whole; a text with no
such place within a piece's length is cut at the length.
"""
from __future__ import annotations

import numpy as np

__all__ = ["PIECE_CHARS", "pieces", "token_stream"]

#: the longest piece of text tokenised at once: a tokenizer's per-token objects (offsets, strings) cost 150-250
#: bytes per character while they live, so a text is tokenised piece by piece and only the ids (4 bytes per
#: token) are kept: at most about 250 * PIECE_CHARS bytes of transient memory, whatever the text's length
PIECE_CHARS = 2**20


def _cut(text: str, start: int, limit: int) -> int:
    """Where the piece starting at ``start`` ends: the last newline in the window that a non-space follows, else
    the last space in it that follows a non-space (byte-level BPE pre-tokenisation splits at both, so the ids do
    not change), else ``start + limit`` (a text without a space in ``limit`` characters)."""
    end = start + limit  # the piece is text[start:cut] with start < cut <= end < len(text)
    q = text.rfind("\n", start, end)
    while q >= start and text[q + 1].isspace():
        q = text.rfind("\n", start, q)
    if q >= start:
        return q + 1
    q = text.rfind(" ", start + 1, end + 1)
    while q > start and text[q - 1].isspace():
        q = text.rfind(" ", start + 1, q)
    if q > start:
        return q
    return end


def pieces(text: str, limit: int = PIECE_CHARS) -> list[str]:
    """``text`` cut into pieces of at most ``limit`` characters (:func:`_cut`); a text of at most ``limit``
    characters is one piece."""
    out, start = [], 0
    while len(text) - start > limit:
        cut = _cut(text, start, limit)
        out.append(text[start:cut])
        start = cut
    out.append(text[start:])
    return out


def _ids_of(out) -> np.ndarray:
    """A tokenizer's ids for one piece, checked: a list or array of integers (never a float, string or None read as
    an id)."""
    try:
        a = np.asarray(out)
    except (TypeError, ValueError):
        a = None
    if a is None or a.ndim != 1 or not (a.size == 0 or np.issubdtype(a.dtype, np.integer)) or \
            (a.size and a.dtype == object):
        raise ValueError(f"the tokenizer must return a list of integer token ids; got {type(out).__name__}"
                         + (f" of {a.dtype}" if a is not None and a.size else "") + f": {str(out)[:60]}")
    return a.astype(np.int64)


def token_stream(encode, docs: list[str]) -> np.ndarray:
    """The ids of ``docs`` joined by blank lines, as int32, from ``encode(str) -> list[int]`` called piece by
    piece (:func:`pieces`): memory bounded by the text and its ids, not by the tokenizer's objects."""
    text = "\n\n".join(docs)
    parts = [_ids_of(encode(p)) for p in pieces(text)]
    ids = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
    if ids.size and (ids.min() < 0 or ids.max() >= 2**31):
        raise ValueError("the tokenizer gave token ids outside [0, 2^31)")
    return ids.astype(np.int32)
