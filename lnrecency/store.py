"""The evidence store: typed results written to a folder and read back, without running code from it.

``evidence.json`` holds a tree of the project's own frozen dataclasses (claim results with their typed
evidence, simulations, limits, finite-width theories, ...) as plain JSON, and ``arrays.npz`` their numpy
arrays (read with ``allow_pickle=False``). Decoding rebuilds only dataclasses defined in ``lnrecency``
modules (named ``module:qualname`` and checked to be dataclasses), numbers, strings, tuples, lists, dicts
and arrays: a folder from elsewhere can hold wrong numbers, never code that runs (no pickle, no eval).
"""
from __future__ import annotations

import dataclasses
import importlib
import io
import json
import math
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["FORMAT", "encode", "decode", "dumps", "loads", "StoreError"]

# 6: trained rows as RowEvidence / PartEvidence (lnrecency.claims.trained_rules); 5: C9 RateEvidence.mean_checks;
# 4: MeanChecks.quantity; 3: C2 by alpha regions, named MCMeans (older stores are refused)
FORMAT = "lnrecency-evidence-6"


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
        return {"__record__": f"{cls.__module__}:{cls.__qualname__}",
                "fields": {f.name: _encode(getattr(x, f.name), arrays) for f in dataclasses.fields(x) if f.init}}
    raise TypeError(f"cannot store a {type(x).__module__}.{type(x).__qualname__}")


def _record_class(name: str) -> type:
    module, _, qualname = name.partition(":")
    if not module.startswith("lnrecency.") or not qualname or "__" in qualname:
        raise StoreError(f"evidence names a type outside lnrecency: {name!r}")
    try:
        obj: Any = importlib.import_module(module)
        for part in qualname.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError):
        raise StoreError(f"evidence names a type this version does not have: {name!r}") from None
    if not (isinstance(obj, type) and dataclasses.is_dataclass(obj)):
        raise StoreError(f"evidence names {name!r}, which is not a record type")
    return obj


def _decode(x: Any, arrays) -> Any:
    if x is None or isinstance(x, (bool, int, float, str)):
        return x
    if isinstance(x, list):
        return [_decode(v, arrays) for v in x]
    if not isinstance(x, dict) or len(x) not in (1, 2):
        raise StoreError("evidence.json is not in the store's format")
    if "__float__" in x:
        return float(x["__float__"])
    if "__fraction__" in x:
        num, den = x["__fraction__"]
        return Fraction(int(num), int(den))
    if "__array__" in x:
        return arrays[f"arr_{int(x['__array__'])}"]
    if "__tuple__" in x:
        return tuple(_decode(v, arrays) for v in x["__tuple__"])
    if "__dict__" in x:
        return {_decode(k, arrays): _decode(v, arrays) for k, v in x["__dict__"]}
    if "__record__" in x:
        cls = _record_class(x["__record__"])
        values = {k: _decode(v, arrays) for k, v in x["fields"].items()}
        try:
            return cls(**values)
        except TypeError as exc:
            raise StoreError(f"evidence for {x['__record__']} does not fit this version: {exc}") from None
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


def loads(folder: str | Path) -> Any:
    """The object a folder's evidence.json and arrays.npz hold (StoreError if they are not a store)."""
    folder = Path(folder)
    try:
        tree = json.loads((folder / "evidence.json").read_text(encoding="utf-8"))
        arrays = np.load(folder / "arrays.npz", allow_pickle=False)
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        raise StoreError(f"--from: {str(folder)!r} holds no readable evidence (lnrecency verify --out writes "
                         f"it): {exc}") from None
    if not isinstance(tree, dict) or tree.get("format") != FORMAT:
        raise StoreError(f"--from: {str(folder)!r}: evidence format {tree.get('format') if isinstance(tree, dict) else None!r}, "
                         f"this version reads {FORMAT!r}")
    with arrays:
        try:
            return decode(tree.get("data"), arrays)
        except StoreError:
            raise
        except (ValueError, KeyError, TypeError, IndexError) as exc:  # e.g. a pickled (object) array
            raise StoreError(f"--from: {str(folder)!r} holds evidence this version cannot read: {exc}") from None


def decode(tree: Any, arrays) -> Any:
    return _decode(tree, arrays)
