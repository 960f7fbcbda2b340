"""The shape of a record read from a file: one small checker that every cache reader uses, so that a wrongly typed
field (a null where a number must be, a list where an object must be, an empty list of layers) is refused when the
file is read, with the field's path, instead of crashing later in a report or dividing by zero.

A spec is:

* a type: ``int`` (not bool), ``float`` (an int is accepted; finiteness is the JSON reader's), ``str``, ``bool``,
  ``dict`` or ``list`` (any contents);
* ``None``: null;
* a tuple of specs: any of them (``(float, None)``: a number or null);
* a one-element list ``[spec]``: a non-empty list whose every item fits ``spec``; ``Many(spec, minimum)`` for
  another least length;
* a dict ``{key: spec}``: an object holding at least these keys, each fitting its spec (other keys are allowed).

>>> check_shape({"layers": [{"layer": 1, "slope": 0.5}]}, {"layers": [{"layer": int, "slope": float}]}, "run")
>>> check_shape({"layers": []}, {"layers": [{"layer": int}]}, "run")
Traceback (most recent call last):
...
ValueError: run.layers: an empty list; at least 1 item expected
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["check_shape", "Many"]

_NAMES = {int: "an integer", float: "a number", str: "a string", bool: "true or false", dict: "an object",
          list: "a list", None: "null"}


@dataclass(frozen=True)
class Many:
    """A list of at least ``minimum`` items, each fitting ``item``."""

    item: Any
    minimum: int = 1


def _fits(value: Any, spec: Any) -> bool:
    if spec is None:
        return value is None
    if spec is int:
        return type(value) is int
    if spec is float:
        return type(value) in (int, float)
    if spec in (str, bool, dict, list):
        return type(value) is spec
    raise TypeError(f"not a shape spec: {spec!r}")


def _describe(spec: Any) -> str:
    if isinstance(spec, tuple):
        return " or ".join(_describe(s) for s in spec)
    if isinstance(spec, (list, Many)):
        return "a list"
    if isinstance(spec, dict):
        return "an object"
    return _NAMES[spec]


def check_shape(value: Any, spec: Any, where: str) -> None:
    """ValueError ``"<where>.<field path>: ..."`` at the first part of ``value`` that does not fit ``spec``."""
    if isinstance(spec, tuple):
        for alt in spec:
            try:
                check_shape(value, alt, where)
                return
            except ValueError:
                continue
        raise ValueError(f"{where}: {_got(value)}; {_describe(spec)} expected")
    if isinstance(spec, list):
        spec = Many(spec[0])
    if isinstance(spec, Many):
        if type(value) is not list:
            raise ValueError(f"{where}: {_got(value)}; a list expected")
        if len(value) < spec.minimum:
            raise ValueError(f"{where}: {'an empty list' if not value else f'{len(value)} items'}; at least "
                             f"{spec.minimum} item{'s' if spec.minimum != 1 else ''} expected")
        for q, v in enumerate(value):
            check_shape(v, spec.item, f"{where}[{q}]")
        return
    if isinstance(spec, dict):
        if type(value) is not dict:
            raise ValueError(f"{where}: {_got(value)}; an object expected")
        for key, sub in spec.items():
            if key not in value:
                raise ValueError(f"{where}: no field {key!r}")
            check_shape(value[key], sub, f"{where}.{key}")
        return
    if not _fits(value, spec):
        raise ValueError(f"{where}: {_got(value)}; {_describe(spec)} expected")


def _got(value: Any) -> str:
    kind = {bool: "true/false", int: "an integer", float: "a number", str: "a string", dict: "an object",
            list: "a list", type(None): "null"}.get(type(value), type(value).__name__)
    shown = repr(value)
    return f"{kind} {shown[:40]}" if type(value) in (bool, int, float, str) else kind
