"""Time limits a user can change: ``--max-seconds`` (memory limits stay, they protect the machine).

A computation whose cost estimate exceeds its time limit is refused before any work, because the limit
protects an interactive answer (a command that would run for hours by mistake). The limits are defaults:
``--max-seconds S`` on a command sets every time limit of that run to S (stored in the environment variable
LNRECENCY_MAX_SECONDS, so worker processes read the same value).
"""
from __future__ import annotations

import math
import os
from contextlib import contextmanager
from typing import Iterator

__all__ = ["ENV", "time_limit", "max_seconds", "refusal"]

ENV = "LNRECENCY_MAX_SECONDS"


def time_limit(default: float) -> float:
    """The time limit in force: ``--max-seconds`` when given, else ``default``."""
    text = os.environ.get(ENV)
    if text is None:
        return default
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"{ENV} must be a number of seconds > 0; got {text!r}") from None
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{ENV} must be a number of seconds > 0; got {text!r}")
    return value


@contextmanager
def max_seconds(value: float | None) -> Iterator[None]:
    """The time limit of one run and its workers (None: the defaults); restored afterwards."""
    if value is None:
        yield
        return
    if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
        raise ValueError(f"--max-seconds must be a number of seconds > 0; got {value!r}")
    old = os.environ.get(ENV)
    os.environ[ENV] = repr(float(value))
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(ENV, None)
        else:
            os.environ[ENV] = old


def refusal(what: str, seconds: float, limit: float, fix: str) -> ValueError:
    """The one-line refusal of a computation estimated at ``seconds`` above ``limit``."""
    return ValueError(f"{what} would take about {seconds:.3g} s here (estimate from timings on this project's "
                      f"2-core machine), above the time limit {limit:g} s; {fix}, or raise the limit with "
                      f"--max-seconds")
