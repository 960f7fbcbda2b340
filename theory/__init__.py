"""The exact d -> infinity theory: limit recursion (float64 / mpmath / sympy), closed forms, proofs.

The names below load :mod:`lnrecency.theory.limit` on first use, so that importing a light submodule (or
the command-line parser) does not import sympy."""
from __future__ import annotations

from typing import Any

__all__ = ["LimitLayer", "LimitTrajectory", "iterate_limit", "limit_scores", "limit_trajectory", "limit_rollout"]


def __getattr__(name: str) -> Any:
    if name == "limit_rollout":
        from lnrecency.theory import rollout

        return rollout.limit_rollout
    if name in __all__:
        from lnrecency.theory import limit

        return getattr(limit, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
