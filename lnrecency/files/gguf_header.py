"""A GGUF file's header read and checked as data, before anything is dequantised (no torch, numpy or gguf).

GGUF (llama.cpp's format, versions 2 and 3): the magic ``GGUF``, a version, the tensor and metadata counts,
the metadata key/value pairs (typed scalars, strings, arrays), then one record per tensor (name, dimensions,
ggml type, data offset), then the aligned data. :func:`gguf_header` reads that header from any binary stream
(a file, or a member of a wheel read as a zip) with every length bounded *before* it is read:

* at most :data:`MAX_HEADER_BYTES` in all, :data:`MAX_TENSORS` tensors, :data:`MAX_KV` metadata pairs,
  strings of at most :data:`MAX_STRING` bytes, arrays of at most :data:`MAX_ARRAY` items, 4 dimensions;
* every tensor's ggml type is one of :data:`GGML_BLOCKS` (others are refused by name), its element count
  a whole number of blocks, its data inside the file (when the file's size is known) and not overlapping;
* the float32 size of all tensors is returned (``float32_bytes``) so that a caller refuses a model above its
  limit before any allocation. A crafted header that declares huge tensors is refused here in milliseconds.

Every refusal is a ValueError naming the file and what is wrong.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import BinaryIO

__all__ = ["GGUFHeader", "gguf_header", "GGML_BLOCKS", "MAX_HEADER_BYTES"]

#: the largest header read (a 262k-token vocabulary with scores and types is about 8 MB)
MAX_HEADER_BYTES = 64 * 2**20
MAX_TENSORS = 65536
MAX_KV = 4096
MAX_STRING = 1 << 20
MAX_ARRAY = 1 << 22
MAX_DIMS = 4
#: ggml tensor types the reader accepts: type id -> (name, elements per block, bytes per block)
GGML_BLOCKS = {0: ("F32", 1, 4), 1: ("F16", 1, 2), 2: ("Q4_0", 32, 18), 3: ("Q4_1", 32, 20), 6: ("Q5_0", 32, 22),
               7: ("Q5_1", 32, 24), 8: ("Q8_0", 32, 34), 10: ("Q2_K", 256, 84), 11: ("Q3_K", 256, 110),
               12: ("Q4_K", 256, 144), 13: ("Q5_K", 256, 176), 14: ("Q6_K", 256, 210), 30: ("BF16", 1, 2)}
_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9
#: metadata arrays kept in full (the tokenizer's token types decide the content tokens); other arrays keep
#: their length only
KEEP_ARRAYS = ("tokenizer.ggml.token_type",)


@dataclass
class GGUFHeader:
    """What a GGUF header states: ``metadata`` (arrays as their length, except :data:`KEEP_ARRAYS`),
    ``tensors`` name -> (ggml type name, dims, offset, stored bytes), their float32 size, the data section's
    start."""

    path: str
    version: int
    metadata: dict = field(default_factory=dict)
    tensors: dict = field(default_factory=dict)
    float32_bytes: int = 0
    data_start: int = 0
    header_bytes: int = 0

    @property
    def architecture(self) -> str | None:
        a = self.metadata.get("general.architecture")
        return a if isinstance(a, str) else None

    def arch_int(self, key: str) -> int | None:
        """``{architecture}.{key}`` as an int (None when absent or not an integer)."""
        v = self.metadata.get(f"{self.architecture}.{key}")
        return v if type(v) is int else None

    def elements(self, name: str) -> int:
        n = 1
        for d in self.tensors[name][1]:
            n *= d
        return n


class _Reader:
    def __init__(self, stream: BinaryIO, where: str, limit: int):
        self.stream, self.where, self.limit, self.pos = stream, where, limit, 0

    def take(self, n: int, what: str) -> bytes:
        if n < 0 or self.pos + n > self.limit:
            raise ValueError(f"{self.where}: the header's {what} ({n} bytes at byte {self.pos}) runs past the "
                             f"{self.limit}-byte bound on a GGUF header (or the file's end)")
        b = self.stream.read(n)
        if len(b) != n:
            raise ValueError(f"{self.where}: the file ends inside the header's {what} (byte {self.pos + len(b)}); "
                             f"truncated")
        self.pos += n
        return b

    def scalar(self, fmt: str, what: str):
        return struct.unpack(fmt, self.take(struct.calcsize(fmt), what))[0]

    def string(self, what: str, bound: int = MAX_STRING) -> str:
        n = self.scalar("<Q", f"{what} length")
        if n > bound:
            raise ValueError(f"{self.where}: the header's {what} declares {n} bytes, above the bound {bound}")
        try:
            return self.take(n, what).decode("utf-8")
        except UnicodeDecodeError:
            raise ValueError(f"{self.where}: the header's {what} is not UTF-8") from None

    def value(self, kind: int, key: str, depth: int = 0):
        if kind in _SCALARS:
            return self.scalar(_SCALARS[kind], f"value of {key!r}")
        if kind == _STRING:
            return self.string(f"string value of {key!r}")
        if kind == _ARRAY and depth == 0:
            item = self.scalar("<I", f"array type of {key!r}")
            n = self.scalar("<Q", f"array length of {key!r}")
            if n > MAX_ARRAY:
                raise ValueError(f"{self.where}: metadata array {key!r:.80} declares {n} items, above the bound "
                                 f"{MAX_ARRAY}")
            # every array is bounded by its declared size before any item is read: n fixed-size items, or n strings
            # of at least their 8-byte length each, must fit what is left of the header's bound
            least = struct.calcsize(_SCALARS[item]) if item in _SCALARS else 8 if item == _STRING else None
            if least is None:
                raise ValueError(f"{self.where}: metadata array {key!r:.80} has item type {item}, not a GGUF scalar "
                                 f"or string" + (" (nested arrays are refused)" if item == _ARRAY else ""))
            if self.pos + n * least > self.limit:
                raise ValueError(f"{self.where}: metadata array {key!r:.80} declares {n} items (at least "
                                 f"{n * least} bytes at byte {self.pos}), past the {self.limit}-byte bound on a GGUF "
                                 f"header (or the file's end)")
            if item in _SCALARS:  # fixed-size items: one bounded read
                raw = self.take(n * least, f"array {key!r}")
                if item == 7 and raw.translate(None, b"\x00\x01"):
                    raise ValueError(f"{self.where}: metadata array {key!r:.80} holds a bool that is neither 0 nor 1")
                return list(struct.unpack(f"<{n}{_SCALARS[item][1]}", raw)) if key in KEEP_ARRAYS else n
            for _ in range(n):
                self.string(f"string in array {key!r}")
            return n
        raise ValueError(f"{self.where}: metadata {key!r:.80} has value type {kind}, not a GGUF type"
                         + (" (nested arrays are refused)" if kind == _ARRAY else ""))


def gguf_header(stream: BinaryIO, *, where: str, file_bytes: int | None = None) -> GGUFHeader:
    """The header of the GGUF file read from ``stream`` (positioned at its start), checked as described in the
    module docstring. ``file_bytes``: the whole file's size, when known: every tensor's data must lie in it."""
    limit = MAX_HEADER_BYTES if file_bytes is None else min(MAX_HEADER_BYTES, file_bytes)
    r = _Reader(stream, where, limit)
    if r.take(4, "magic") != b"GGUF":
        raise ValueError(f"{where} is not a GGUF file (its first bytes are not 'GGUF')")
    version = r.scalar("<I", "version")
    if version not in (2, 3):
        raise ValueError(f"{where}: GGUF version {version}; versions 2 and 3 are read")
    n_tensors, n_kv = r.scalar("<Q", "tensor count"), r.scalar("<Q", "metadata count")
    if n_tensors > MAX_TENSORS or n_kv > MAX_KV:
        raise ValueError(f"{where}: the header declares {n_tensors} tensors and {n_kv} metadata pairs, above the "
                         f"bounds {MAX_TENSORS} and {MAX_KV}")
    h = GGUFHeader(where, version)
    for _ in range(n_kv):
        key = r.string("metadata key", 4096)
        h.metadata[key] = r.value(r.scalar("<I", f"type of {key!r}"), key)
    align = h.metadata.get("general.alignment", 32)
    if type(align) is not int or not 1 <= align <= 4096 or align & (align - 1):
        raise ValueError(f"{where}: general.alignment must be a power of two up to 4096; got {align!r:.40}")
    total = 0
    for _ in range(n_tensors):
        name = r.string("tensor name", 4096)
        dims = r.scalar("<I", f"dimension count of {name!r}")
        if not 1 <= dims <= MAX_DIMS:
            raise ValueError(f"{where}: tensor {name!r:.80} has {dims} dimensions; 1 to {MAX_DIMS} are read")
        shape = tuple(r.scalar("<Q", f"dimension of {name!r}") for _ in range(dims))
        kind = r.scalar("<I", f"type of tensor {name!r}")
        offset = r.scalar("<Q", f"offset of tensor {name!r}")
        if kind not in GGML_BLOCKS:
            raise ValueError(f"{where}: tensor {name!r:.80} has ggml type {kind}, not one this reader accepts "
                             f"({', '.join(v[0] for v in GGML_BLOCKS.values())})")
        if name in h.tensors:
            raise ValueError(f"{where}: tensor {name!r:.80} is declared twice")
        count = 1
        for d in shape:
            if not 1 <= d <= 2**40:
                raise ValueError(f"{where}: tensor {name!r:.80} has a dimension of {d}")
            count *= d
        label, block, nbytes = GGML_BLOCKS[kind]
        if count % block:
            raise ValueError(f"{where}: tensor {name!r:.80} holds {count} elements, not a whole number of {label} "
                             f"blocks of {block}")
        total += 4 * count
        if total > 2**50:
            raise ValueError(f"{where}: the tensors declare over 2^50 float32 bytes; refused")
        h.tensors[name] = (label, shape, offset, count // block * nbytes)
    h.header_bytes = r.pos
    h.data_start = -(-r.pos // align) * align
    h.float32_bytes = total
    end = 0
    for name, (label, shape, offset, nbytes) in sorted(h.tensors.items(), key=lambda kv: kv[1][2]):
        if offset % align or offset < end:
            raise ValueError(f"{where}: tensor {name!r:.80}'s data (offset {offset}) is misaligned or overlaps "
                             f"the previous tensor's")
        end = offset + nbytes
    if file_bytes is not None and h.data_start + end > file_bytes:
        raise ValueError(f"{where}: the tensors' data would end at byte {h.data_start + end}, past the file's "
                         f"{file_bytes} bytes (truncated or forged)")
    return h
