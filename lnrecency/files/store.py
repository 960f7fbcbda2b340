"""The evidence store: typed results written to a folder and read back, without running code from it.

``evidence.json`` holds a tree of the project's own frozen dataclasses (claim results with their typed
evidence, simulations, limits, finite-width theories, ...) as plain JSON, and ``arrays.npz`` their numpy
arrays (read with ``allow_pickle=False``). Decoding rebuilds only dataclasses defined in ``lnrecency``
modules (named by a stable tag, :mod:`lnrecency.files.record_tags`, or, in evidence written before the tags, by
``module:qualname``; the class's own ``__module__`` checked to be that lnrecency module, so nothing reached
through a module attribute is built), numbers, strings, tuples, lists, dicts and arrays: a
folder from elsewhere can hold wrong numbers, never code that runs (no pickle, no eval).

Reading validates before use (:func:`loads`): evidence.json is a regular file of at most MAX_JSON_BYTES,
nested at most MAX_DEPTH deep, with finite numbers (a stored NaN is refused; +-inf, which some statistics
take by design, is kept); arrays.npz is a zip archive whose arrays hold at most MAX_ARRAY_BYTES together
(checked from its directory, before any is read), numeric only; every record's fields are checked against
the record class's annotations (a float stored as a list or a string is refused when read, not met while
rendering). Each refusal is one line (StoreError) naming the folder and what is wrong.
"""
from __future__ import annotations

import dataclasses
import functools
import importlib
import io
import json
import math
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from lnrecency.files.record_renames import RENAMED
from lnrecency.files.record_tags import TAGS

__all__ = ["FORMAT", "encode", "decode", "dumps", "loads", "StoreError"]

# 7: records named by their stable tag (lnrecency.files.record_tags); 6: trained rows as RowEvidence / PartEvidence
# (lnrecency.claims.trained_rules); 5: C9 RateEvidence.mean_checks;
# 4: MeanChecks.quantity; 3: C2 by alpha regions, named MCMeans (older stores are refused)
FORMAT = "lnrecency-evidence-7"
#: the formats this version reads: 7 names records by tag; 6 (before the tags) by module:qualname
READABLE = ("lnrecency-evidence-6", FORMAT)
#: limits of a store read back (a real one: evidence.json about 1-5 MB, nesting about 30, arrays about 10 MB)
MAX_JSON_BYTES = 256 * 2**20
MAX_DEPTH = 100
MAX_ARRAY_BYTES = 1 * 2**30
#: module:qualname -> tag (lnrecency.files.record_tags)
_TAG_OF = {name: tag for tag, name in TAGS.items()}


class StoreError(ValueError):
    """The folder does not hold evidence this version can read (one line)."""


def _encode(x: Any, arrays: list) -> Any:
    if x is None or isinstance(x, (bool, str)):
        return x
    if isinstance(x, (np.bool_,)):
        return bool(x)
    if isinstance(x, (int, np.integer)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        v = float(x)
        return v if math.isfinite(v) else {"__float__": repr(v)}
    if isinstance(x, Fraction):
        return {"__fraction__": [x.numerator, x.denominator]}
    if isinstance(x, np.ndarray):
        if x.dtype == object:
            raise TypeError("object arrays are not stored (float64 results only)")
        arrays.append(x)
        return {"__array__": len(arrays) - 1}
    if isinstance(x, tuple):
        return {"__tuple__": [_encode(v, arrays) for v in x]}
    if isinstance(x, list):
        return [_encode(v, arrays) for v in x]
    if isinstance(x, dict):
        return {"__dict__": [[_encode(k, arrays), _encode(v, arrays)] for k, v in x.items()]}
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        cls = type(x)
        if not cls.__module__.startswith("lnrecency."):
            raise TypeError(f"only lnrecency's own records are stored; got {cls.__module__}.{cls.__qualname__}")
        tag = _TAG_OF.get(f"{cls.__module__}:{cls.__qualname__}")
        if tag is None:
            raise TypeError(f"the record {cls.__module__}.{cls.__qualname__} has no tag: give it one in "
                            f"lnrecency/files/record_tags.py")
        return {"__tag__": tag,
                "fields": {f.name: _encode(getattr(x, f.name), arrays) for f in dataclasses.fields(x) if f.init}}
    raise TypeError(f"cannot store a {type(x).__module__}.{type(x).__qualname__}")


def _record_class(name: str, renamed: bool = True) -> type:
    """The lnrecency record class ``module:qualname`` (``renamed``: a name written before a move, in evidence from
    before the tags, is first read through :data:`~lnrecency.files.record_renames.RENAMED`): the module must be
    lnrecency's and already imported or importable, and the class must be defined there (its own ``__module__``), a
    dataclass."""
    if not isinstance(name, str):
        raise StoreError(f"evidence names a record type that is not a string: {name!r:.80}")
    if renamed:
        name = RENAMED.get(name, name)  # written before the record moved: its name today
    module, _, qualname = name.partition(":")
    if not module.startswith("lnrecency.") or not qualname or any(p.startswith("_") for p in qualname.split(".")):
        raise StoreError(f"evidence names a type outside lnrecency: {name!r:.120}")
    try:
        obj: Any = importlib.import_module(module)
        for part in qualname.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError, ValueError):
        raise StoreError(f"evidence names a type this version does not have: {name!r:.120}") from None
    if not (isinstance(obj, type) and dataclasses.is_dataclass(obj)) or obj.__module__ != module \
            or obj.__qualname__ != qualname:
        raise StoreError(f"evidence names {name!r:.120}, which is not a record type of lnrecency")
    return obj


@functools.lru_cache(maxsize=None)
def _hints(cls: type) -> dict:
    """The resolved field annotations of a record class, once per class (a folder holds thousands of records). An
    annotation naming a record imported only for type checking is resolved among the tagged records (its module
    imported, as decoding it would); a record whose annotations do not resolve is never built from stored evidence
    (StoreError)."""
    import sys
    import typing

    names = {n: getattr(typing, n) for n in ("Any", "ClassVar", "Optional", "Union", "Callable", "Literal",
                                             "Iterable", "Sequence", "Mapping")}  # imported for type checking only
    names.update(vars(sys.modules[cls.__module__]))
    for _ in range(64):
        try:
            return typing.get_type_hints(cls, globalns=names)
        except NameError as exc:
            missing = getattr(exc, "name", None)
            found = [n for n in TAGS.values() if n.rpartition(".")[2].rpartition(":")[2] == missing]
            if missing is None or missing in names or len(found) != 1:  # unknown, or a name two records share
                why = exc
                break
            module, _, qualname = found[0].partition(":")
            obj: Any = importlib.import_module(module)
            for part in qualname.split("."):
                obj = getattr(obj, part)
            names[missing] = obj
        except Exception as exc:  # an annotation that is not a type
            why = exc
            break
    raise StoreError(f"the record {cls.__module__}.{cls.__qualname__} has field annotations that do not resolve "
                     f"({why}); it is not built from stored evidence")


def _fits(value: Any, hint: Any) -> bool:
    """Whether a decoded ``value`` fits a field annotation. Every decoded field is checked: an annotation this does
    not know (``Any``, ``object``, a callable, a path, a tensor) fits nothing, so a record with such a field is never
    built from stored evidence (a stored record declares the types of its fields)."""
    import collections.abc
    import types
    import typing

    if hint is float:  # the plain scalars first: most fields, and no typing introspection needed
        return isinstance(value, (int, float, Fraction)) and not isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is str or hint is bool:
        return isinstance(value, hint)
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return any(_fits(value, a) for a in args)
    if origin is typing.Literal:
        return any(type(value) is type(a) and value == a for a in args)
    if hint is type(None) or hint is None:
        return value is None
    if hint in (str, bool, Fraction, np.ndarray, tuple, list, dict):
        return isinstance(value, hint)
    if origin is tuple:
        if not isinstance(value, tuple):
            return False
        if len(args) == 2 and args[1] is Ellipsis:
            return all(_fits(v, args[0]) for v in value)
        return not args or (len(args) == len(value) and all(_fits(v, a) for v, a in zip(value, args)))
    if origin is list:
        return isinstance(value, list) and (not args or all(_fits(v, args[0]) for v in value))
    if origin is dict:
        return isinstance(value, dict) and (not args or all(_fits(k, args[0]) and _fits(v, args[1])
                                                            for k, v in value.items()))
    if hint is Any or hint is object or origin is collections.abc.Callable or not isinstance(hint, type):
        return False
    # a record class (or a base class of records): decoded values are only numbers, strings, containers, arrays and
    # lnrecency's tagged records, so an instance check is all that is needed
    return (dataclasses.is_dataclass(hint) or hint.__module__.startswith("lnrecency.")) and isinstance(value, hint)


def _decode(x: Any, arrays, naming: str) -> Any:
    if x is None or isinstance(x, (bool, int, float, str)):
        return x
    if isinstance(x, list):
        return [_decode(v, arrays, naming) for v in x]
    if not isinstance(x, dict) or len(x) not in (1, 2):
        raise StoreError("evidence.json is not in the store's format")
    if "__float__" in x:
        text = x["__float__"]
        if text not in ("inf", "-inf"):  # NaN is never stored as evidence a verdict may read
            raise StoreError(f"evidence holds the non-finite number {text!r:.40}; nothing is rendered from it")
        return float(text)
    if "__fraction__" in x:
        pair = x["__fraction__"]
        if not (isinstance(pair, list) and len(pair) == 2 and all(type(v) is int for v in pair) and pair[1] != 0):
            raise StoreError(f"evidence holds a fraction {pair!r:.80} that is not two integers with a non-zero "
                             f"denominator")
        return Fraction(pair[0], pair[1])
    if "__array__" in x:
        key = f"arr_{x['__array__']}" if type(x["__array__"]) is int else None
        if key is None or key not in arrays.files:
            raise StoreError(f"evidence cites array {x['__array__']!r:.40}, which arrays.npz does not hold")
        return arrays[key]
    if "__tuple__" in x:
        if not isinstance(x["__tuple__"], list):
            raise StoreError("evidence.json is not in the store's format (a tuple that is not a list)")
        return tuple(_decode(v, arrays, naming) for v in x["__tuple__"])
    if "__dict__" in x:
        pairs = x["__dict__"]
        if not (isinstance(pairs, list) and all(isinstance(p, list) and len(p) == 2 for p in pairs)):
            raise StoreError("evidence.json is not in the store's format (a mapping that is not a list of pairs)")
        out = {}
        for k, v in pairs:
            key = _decode(k, arrays, naming)
            if isinstance(key, (list, dict, np.ndarray)):
                raise StoreError("evidence.json is not in the store's format (an unhashable mapping key)")
            out[key] = _decode(v, arrays, naming)
        return out
    if "__tag__" in x or "__record__" in x:
        # a format reads only its own naming: format 7 names a record by its tag; format 6 (before the tags) by
        # module:qualname, of a record that has a tag today (after RENAMED)
        if naming not in x:
            other = "__record__" if naming == "__tag__" else "__tag__"
            raise StoreError(f"evidence names a record by {other} {str(x[other])[:80]!r}, which this store's format "
                             f"does not use (format 7: __tag__ only; format 6: __record__ only)")
        name = x[naming]
        if naming == "__tag__":
            if not isinstance(name, str) or name not in TAGS:
                raise StoreError(f"evidence names a record tag this version does not have: {name!r:.80}")
            cls = _record_class(TAGS[name], renamed=False)
        else:
            if not isinstance(name, str) or RENAMED.get(name, name) not in _TAG_OF:
                raise StoreError(f"evidence names {name!r:.120}, which is not a stored record type of lnrecency")
            cls = _record_class(name)
        if not isinstance(x.get("fields"), dict):
            raise StoreError(f"evidence for {name} has no fields object")
        values = {k: _decode(v, arrays, naming) for k, v in x["fields"].items()}
        hints = _hints(cls)
        for k, v in values.items():
            if k not in hints:
                raise StoreError(f"evidence for {name}: field {k[:40]!r} is not a field of this version's record")
            if not _fits(v, hints[k]):
                raise StoreError(f"evidence for {name}: field {k!r} holds {type(v).__name__} "
                                 f"{str(v)[:40]!r}, not {hints[k]}")
        try:
            return cls(**values)
        except (TypeError, ValueError, ZeroDivisionError, OverflowError) as exc:
            raise StoreError(f"evidence for {name} does not fit this version: "
                             f"{str(exc).splitlines()[0][:200]}") from None
    raise StoreError("evidence.json is not in the store's format")


def encode(obj: Any) -> tuple[dict, list]:
    """(JSON tree, arrays) of ``obj``."""
    arrays: list = []
    return {"format": FORMAT, "data": _encode(obj, arrays)}, arrays


def dumps(obj: Any) -> tuple[str, bytes]:
    """(evidence.json text, arrays.npz bytes)."""
    tree, arrays = encode(obj)
    buf = io.BytesIO()
    np.savez_compressed(buf, *arrays)
    return json.dumps(tree, separators=(",", ":"), sort_keys=True, allow_nan=False) + "\n", buf.getvalue()


def _check_archive(path: Path, f) -> None:
    """arrays.npz (open as ``f``, :func:`lnrecency.files.readers.open_plain`): a zip archive of .npy members whose
    uncompressed sizes, read from its directory, total at most MAX_ARRAY_BYTES (so a truncated file, a file that is
    not a zip, or a zip bomb is refused unread)."""
    import zipfile

    if not zipfile.is_zipfile(f):
        raise StoreError(f"{str(path)!r} is not a zip archive of arrays (truncated or replaced); rerun lnrecency "
                         f"verify --out")
    f.seek(0)
    try:
        with zipfile.ZipFile(f) as z:
            members = z.infolist()
            odd = [m.filename for m in members if m.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED)
                   or m.flag_bits & 0x1]
            if odd:
                raise StoreError(f"{str(path)!r}: member {odd[0]!r:.80} is encrypted or uses a compression method "
                                 f"other than stored or deflate (what numpy writes); refused")
            bad = z.testzip()
    except (zipfile.BadZipFile, OSError, ValueError, EOFError, NotImplementedError, RuntimeError) as exc:
        raise StoreError(f"{str(path)!r} is a damaged zip archive: {exc}") from None
    if bad is not None:
        raise StoreError(f"{str(path)!r}: member {bad!r} fails its checksum (damaged file)")
    total = sum(m.file_size for m in members)
    if total > MAX_ARRAY_BYTES or any(not m.filename.endswith(".npy") for m in members):
        raise StoreError(f"{str(path)!r} holds {total} bytes of arrays (limit {MAX_ARRAY_BYTES}) or members that "
                         f"are not arrays")
    f.seek(0)


#: the files of a report's evidence folder (``lnrecency verify --out``, ``report --evidence-out``)
EVIDENCE_FILES = ("evidence.json", "arrays.npz", "verdicts.json")


def check_store_folder(folder: str | Path) -> Path:
    """The cheap part of :func:`loads`, run before any heavy import: ``folder`` is a folder holding evidence.json
    (StoreError naming --from otherwise)."""
    folder = Path(folder)
    if not str(folder).strip():
        raise StoreError("--from: empty path; give the folder lnrecency verify --out wrote")
    if not folder.is_dir():
        raise StoreError(f"--from: {str(folder)!r} is not a folder written by lnrecency verify --out"
                         + (" (it does not exist)" if not folder.exists() else ""))
    if not (folder / "evidence.json").exists():
        raise StoreError(f"--from: {str(folder)!r} holds no readable evidence (no evidence.json; lnrecency verify "
                         f"--out DIR writes it)")
    return folder


def loads(folder: str | Path) -> Any:
    """The object a folder's evidence.json and arrays.npz hold, validated as the module docstring says
    (StoreError, one line, when they are not a store this version reads)."""
    from lnrecency.files.readers import open_plain, read_json

    folder = check_store_folder(folder)
    try:  # neither file is read through a symbolic link (open_plain: the one link check of a stored result)
        tree = read_json(folder / "evidence.json", what="evidence", max_bytes=MAX_JSON_BYTES, max_depth=MAX_DEPTH,
                         links=False)
    except ValueError as exc:
        raise StoreError(f"--from: {exc}") from None
    if tree.get("format") not in READABLE:
        raise StoreError(f"--from: {str(folder)!r}: evidence format {tree.get('format')!r:.60}, this version reads "
                         f"{' and '.join(map(repr, READABLE))}")
    try:
        f = open_plain(folder / "arrays.npz", "arrays", MAX_ARRAY_BYTES)
    except ValueError as exc:
        raise StoreError(f"--from: {exc}") from None
    with f:
        try:
            _check_archive(folder / "arrays.npz", f)
            arrays = np.load(f, allow_pickle=False)
        except StoreError as exc:
            raise StoreError(f"--from: {exc}") from None
        except (OSError, ValueError) as exc:
            raise StoreError(f"--from: {str(folder)!r}: arrays.npz cannot be read: {exc}") from None
        with arrays:
            return _decode_folder(folder, tree, arrays)


def _decode_folder(folder: Path, tree: dict, arrays) -> Any:
    try:
        return decode(tree.get("data"), arrays, format=tree["format"])
    except StoreError as exc:
        raise StoreError(f"--from: {str(folder)!r}: {exc}") from None
    except (ValueError, KeyError, TypeError, IndexError, ZeroDivisionError, OverflowError, EOFError) as exc:
        # e.g. a pickled (object) array member, a damaged member
        raise StoreError(f"--from: {str(folder)!r} holds evidence this version cannot read: "
                         f"{str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__}") from None


def decode(tree: Any, arrays, *, format: str = FORMAT) -> Any:
    """The object ``tree`` (a store's ``data``) names, its arrays from ``arrays``; ``format``: the store's format,
    which fixes how records are named (format 7 by tag only, format 6 by ``module:qualname`` only)."""
    if format not in READABLE:
        raise StoreError(f"evidence format {format!r:.60}; this version reads {' and '.join(map(repr, READABLE))}")
    return _decode(tree, arrays, "__tag__" if format == FORMAT else "__record__")
