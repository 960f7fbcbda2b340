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


def check_exact(name: str, value: Any, *, low: float = -math.inf, high: float = math.inf,
                low_open: bool = False, high_open: bool = False) -> Any:
    """A number or a sympy object for a theory function that computes in sympy: returned as a sympy object.

    Only numbers (int, float, Fraction, Decimal, numpy and mpmath numbers) and sympy objects are accepted; a string
    is refused, never parsed (sympify of a string runs code). A number is checked finite and within [low, high]
    (the ends open as stated); a sympy number is checked the same way; a sympy expression with free symbols is
    returned as it is (its range is the caller's symbol's assumption)."""
    import sympy

    if isinstance(value, sympy.Basic):
        if value.free_symbols:
            return value
        if not value.is_number:
            raise ValueError(f"{name} must be a real number or a sympy expression; got {value!r}")
        try:
            x = complex(value.evalf())
        except (TypeError, ValueError):
            raise ValueError(f"{name} must be a real number; got {value!r}") from None
        if x.imag != 0:
            raise ValueError(f"{name} must be a real number; got {value!r}")
        check_real(name, x.real, low=low, high=high, low_open=low_open, high_open=high_open)
        return value
    if is_bool(value) or not isinstance(value, numbers.Number) or isinstance(value, numbers.Complex) and not \
            isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a real number or a sympy expression; got {value!r} "
                         f"({type(value).__name__})")
    check_real(name, value, low=low, high=high, low_open=low_open, high_open=high_open)
    if isinstance(value, numbers.Integral):
        return sympy.Integer(int(value))
    if isinstance(value, numbers.Rational):
        return sympy.Rational(int(value.numerator), int(value.denominator))
    return sympy.Float(float(value))


def check_expression(name: str, value: Any) -> Any:
    """A sympy object or a real number for a theory function that computes in sympy; a string is refused, never
    parsed (sympy parses strings with eval). Numbers come back as sympy numbers (:func:`check_exact`)."""
    import sympy

    if isinstance(value, sympy.Basic):
        return value
    if isinstance(value, numbers.Number) and not is_bool(value):
        return check_exact(name, value)
    raise ValueError(f"{name} must be a sympy expression or a real number; got {value!r} ({type(value).__name__})"
                     + ("; a string is never parsed (write the expression with sympy, or pass the formula to "
                        "lnrecency.theory.formula.check_formula)" if isinstance(value, (str, bytes)) else ""))


def check_flag(name: str, value: Any) -> bool:
    """A switch: True or False (a Python or numpy bool) and nothing else; a string such as "no" is refused, not read
    by its truth value."""
    if not is_bool(value):
        raise ValueError(f"{name} must be True or False; got {value!r} ({type(value).__name__})")
    return bool(value)
