"""Argument checks shared by every floor: each invalid value raises ``ValueError`` naming the argument, the
value and what is allowed (the CLI turns it into one line and exit status 2), before any work is done."""
from __future__ import annotations

import math
import numbers
from typing import Any


def is_bool(value: Any) -> bool:
    """A Python or numpy bool."""
    kind = type(value)  # numpy's bool is numpy.bool_ (numpy 1) or numpy.bool (numpy 2)
    return isinstance(value, bool) or (kind.__module__ == "numpy" and kind.__name__ in ("bool_", "bool"))


def _as_float(name: str, value: Any) -> float:
    """float(value) for a real number (int, float, Fraction, numpy, sympy or mpmath number)."""
    if is_bool(value) or isinstance(value, (str, bytes)) or value is None:
        raise ValueError(f"{name} must be a real number; got {value!r} ({type(value).__name__})")
    try:
        if hasattr(value, "is_number") and not getattr(value, "is_number"):  # sympy symbol
            raise TypeError
        out = float(value)
    except (TypeError, ValueError):
        raise ValueError(
            f"{name} must be a real number; got {value!r} ({type(value).__name__})"
        ) from None
    if math.isnan(out) or math.isinf(out):
        raise ValueError(f"{name} must be a finite real number; got {value!r}")
    return out


def check_real(name: str, value: Any, *, low: float, high: float = math.inf,
               low_open: bool = False, high_open: bool = True) -> Any:
    """Validate a real parameter against an interval; return it unchanged (exact types survive)."""
    x = _as_float(name, value)
    lo_ok = x > low if low_open else x >= low
    hi_ok = x < high if high_open else x <= high
    if not (lo_ok and hi_ok):
        lb = "(" if low_open else "["
        rb = ")" if high_open else "]"
        hb = "inf" if math.isinf(high) else f"{high:g}"
        raise ValueError(f"{name} must be in {lb}{low:g}, {hb}{rb}; got {value!r}")
    return value


def json_depth(x: Any, limit: int) -> int:
    """Nesting depth of JSON data, walked iteratively (no recursion on hostile input); stops once past
    ``limit`` (the returned depth is then limit + 1 or more)."""
    stack, deepest = [(x, 1)], 0
    while stack:
        v, d = stack.pop()
        deepest = max(deepest, d)
        if deepest > limit:
            return deepest
        if isinstance(v, dict):
            stack.extend((w, d + 1) for w in v.values())
        elif isinstance(v, list):
            stack.extend((w, d + 1) for w in v)
    return deepest


def check_int(name: str, value: Any, *, minimum: int = 1, maximum: int | None = None) -> int:
    """Validate an integer size (n, layers, d, samples, ...): an integer, not a bool, in range."""
    if is_bool(value) or not isinstance(value, numbers.Integral):
        raise ValueError(
            f"{name} must be an integer >= {minimum}; got {value!r} ({type(value).__name__})"
        )
    v = int(value)
    if v < minimum or (maximum is not None and v > maximum):
        allowed = f">= {minimum}" if maximum is None else f"in [{minimum}, {maximum}]"
        raise ValueError(f"{name} must be an integer {allowed}; got {v}")
    return v


def check_choice(name: str, value: Any, allowed: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed))}; got {value!r}")
    return value
