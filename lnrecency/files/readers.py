"""Files from outside are data: one validating reader per file format, used by every loader (checkpoints,
Hugging Face configs, the evidence store, experiment caches). Nothing here imports torch or numpy.

* :func:`read_json`: a regular file (not a FIFO, device or folder) of bounded size, UTF-8 JSON of the
  expected top-level type, nested at most ``max_depth`` deep, with only finite numbers (NaN, Infinity and
  overflowing literals such as 1e400 are refused while parsing);
* :func:`safetensors_header`: the header of a safetensors file read and checked without torch: its length
  within the file, a JSON object of tensors with known dtypes, shapes and data offsets that tile the data
  exactly; so a truncated, empty, forged or huge-header file is refused before the weights are read.

Every refusal is a ``ValueError`` naming the file and what is wrong (the CLI prints it as one line, exit 2).
"""
from __future__ import annotations

import errno
import json
import math
import os
import stat
from pathlib import Path
from typing import Any

from lnrecency.runtime.arguments import json_depth

__all__ = ["read_json", "safetensors_header", "check_regular", "open_plain", "SAFETENSORS_DTYPES"]

#: bytes per element of the safetensors dtypes a decoder's weights may have
SAFETENSORS_DTYPES = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "I16": 2, "I8": 1, "U8": 1,
                      "BOOL": 1}
#: the largest safetensors header read (its JSON lists the tensors; a real one is a few KB to a few MB)
MAX_HEADER_BYTES = 16 * 2**20


def check_regular(path: Path, what: str, max_bytes: int) -> int:
    """The size of ``path``, after checking that it is a regular file of at most ``max_bytes``."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise ValueError(f"{what} {str(path)!r} does not exist") from None
    except OSError as exc:
        raise ValueError(f"{what} {str(path)!r} cannot be read: {exc.strerror or exc}") from None
    if not stat.S_ISREG(st.st_mode):
        raise ValueError(f"{what} {str(path)!r} is not a regular file (a folder, FIFO or device is refused)")
    if st.st_size > max_bytes:
        raise ValueError(f"{what} {str(path)!r} holds {st.st_size} bytes, above the limit {max_bytes}")
    return st.st_size


def open_plain(path: Path, what: str, max_bytes: int):
    """``path`` opened for reading (binary) when it is a regular file of at most ``max_bytes`` and not a symbolic
    link: the link check of every file a stored or kept result reads (the file is opened with O_NOFOLLOW, so a link
    put in its place after the check is refused too). ValueError naming the file otherwise."""
    path = Path(path)
    try:
        if stat.S_ISLNK(os.lstat(path).st_mode):
            raise ValueError(f"{what} {str(path)!r} is a symbolic link; stored results are read only from plain "
                             f"files, never through a link")
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise ValueError(f"{what} {str(path)!r} does not exist") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise ValueError(f"{what} {str(path)!r} is a symbolic link; stored results are read only from plain "
                             f"files, never through a link") from None
        raise ValueError(f"{what} {str(path)!r} cannot be read: {exc.strerror or exc}") from None
    f = os.fdopen(fd, "rb")
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or st.st_size > max_bytes:
        f.close()
        raise ValueError(f"{what} {str(path)!r} is not a regular file of at most {max_bytes} bytes (a folder, FIFO, "
                         f"device or larger file is refused)")
    return f


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the number {text[:40]} overflows a float")
    return value


def _no_constant(text: str) -> float:
    raise ValueError(f"{text} is not a finite number")


def read_json(path: str | Path, *, what: str, max_bytes: int, max_depth: int, kind: type = dict,
              links: bool = True) -> Any:
    """The JSON value in ``path``, validated as described in the module docstring (``kind``: the required
    top-level type, dict or list; ``links=False``: a symbolic link is refused, :func:`open_plain`)."""
    path = Path(path)
    if links:
        check_regular(path, what, max_bytes)
    else:
        with open_plain(path, what, max_bytes) as f:
            raw = f.read(max_bytes + 1)
    where = f"{what} {str(path)!r}"
    try:
        data = json.loads((path.read_bytes() if links else raw).decode("utf-8"), parse_float=_finite_float,
                          parse_constant=_no_constant)
    except RecursionError:
        raise ValueError(f"{where} is nested deeper than {max_depth} levels") from None
    except UnicodeDecodeError:
        raise ValueError(f"{where} is not UTF-8 text") from None
    except ValueError as exc:
        raise ValueError(f"{where} is not valid JSON with finite numbers: {str(exc).splitlines()[0][:200]}") from None
    except OSError as exc:
        raise ValueError(f"{where} cannot be read: {exc.strerror or exc}") from None
    if not isinstance(data, kind):
        raise ValueError(f"{where} must hold a JSON {'object' if kind is dict else 'array'}; got "
                         f"{type(data).__name__}")
    if json_depth(data, max_depth) > max_depth:
        raise ValueError(f"{where} is nested deeper than {max_depth} levels")
    return data


def safetensors_header(path: str | Path, *, what: str, max_bytes: int) -> dict[str, tuple[str, tuple[int, ...]]]:
    """{tensor name: (dtype, shape)} of a safetensors file, checked against the file before any weight is
    read: 8-byte little-endian header length within the file and at most MAX_HEADER_BYTES, a JSON object,
    each tensor's dtype known, shape a list of non-negative integers, data offsets [begin, end) with
    end - begin = elements x dtype size, the tensors tiling the data region exactly."""
    path = Path(path)
    size = check_regular(path, what, max_bytes)
    where = f"{what} {str(path)!r}"
    if size < 8:
        raise ValueError(f"{where} is truncated ({size} bytes; a safetensors file starts with an 8-byte length)")
    with open(path, "rb") as f:
        n = int.from_bytes(f.read(8), "little")
        if n < 2 or n > MAX_HEADER_BYTES or 8 + n > size:
            raise ValueError(f"{where}: its header length {n} does not fit the file ({size} bytes) or the limit "
                             f"{MAX_HEADER_BYTES}; the file is truncated or not safetensors")
        raw = f.read(n)
    try:
        header = json.loads(raw.decode("utf-8"), parse_float=_finite_float, parse_constant=_no_constant)
    except (RecursionError, UnicodeDecodeError, ValueError):
        raise ValueError(f"{where}: its header is not a JSON object; the file is damaged or not safetensors") from None
    if not isinstance(header, dict) or json_depth(header, 4) > 4:
        raise ValueError(f"{where}: its header is not a flat JSON object of tensors")
    data_bytes = size - 8 - n
    out, spans = {}, []
    for name, entry in header.items():
        if name == "__metadata__":
            if not isinstance(entry, dict) or not all(isinstance(v, str) for v in entry.values()):
                raise ValueError(f"{where}: __metadata__ must map names to strings")
            continue
        if not isinstance(entry, dict) or set(entry) != {"dtype", "shape", "data_offsets"}:
            raise ValueError(f"{where}: tensor {name!r} must have exactly dtype, shape and data_offsets")
        dtype, shape, offsets = entry["dtype"], entry["shape"], entry["data_offsets"]
        if dtype not in SAFETENSORS_DTYPES:
            raise ValueError(f"{where}: tensor {name!r} has dtype {dtype!r}; allowed: {', '.join(SAFETENSORS_DTYPES)}")
        if not (isinstance(shape, list) and len(shape) <= 8 and all(type(s) is int and s >= 0 for s in shape)):
            raise ValueError(f"{where}: tensor {name!r} has shape {shape!r}; a list of at most 8 sizes >= 0")
        if not (isinstance(offsets, list) and len(offsets) == 2 and all(type(o) is int for o in offsets)
                and 0 <= offsets[0] <= offsets[1] <= data_bytes):
            raise ValueError(f"{where}: tensor {name!r} has data offsets {offsets!r} outside the data "
                             f"({data_bytes} bytes): the file is truncated or damaged")
        if offsets[1] - offsets[0] != math.prod(shape) * SAFETENSORS_DTYPES[dtype]:
            raise ValueError(f"{where}: tensor {name!r} of shape {shape} needs "
                             f"{math.prod(shape) * SAFETENSORS_DTYPES[dtype]} bytes; its offsets give "
                             f"{offsets[1] - offsets[0]}")
        out[name] = (dtype, tuple(shape))
        spans.append((offsets[0], offsets[1]))
    end = 0
    for begin, stop in sorted(spans):
        if begin != end:
            raise ValueError(f"{where}: the tensors' data overlap or leave gaps (at byte {begin}); damaged file")
        end = stop
    if end != data_bytes:
        raise ValueError(f"{where}: the tensors cover {end} of the {data_bytes} data bytes; damaged file")
    return out
