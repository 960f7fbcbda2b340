"""The model configuration M(norm, residual, lam, gamma, alpha), defined and validated once.

docs/model.md, "Model M(norm, residual, lam, gamma, alpha)":
  * ``norm``      N in {"none", "l2", "rmsnorm", "layernorm"} applied before every attention layer;
  * ``residual``  h' = h + gamma * o (True) or h' = o (False);
  * ``gamma``     residual weight, > 0 (ignored, but still validated, without a residual);
  * ``lam``       inverse temperature of the scores S_ij = lam * <N(h_i), N(h_j)>, > 0;
  * ``alpha``     embedding anisotropy E<x_i, x_j> = alpha (i != j), in [0, 1);
  * ``embedding`` "gaussian" or "normalized" (only the finite-width simulation distinguishes them).

The theory (d -> infinity limit) and the numerics (finite-width Monte Carlo) both take a
:class:`ModelConfig`; sizes (n, layers, d, samples, ...) are checked by :func:`check_int`.
Every invalid value raises ``ValueError`` naming the argument, the value and what is allowed.
"""
from __future__ import annotations

import math
import numbers
from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the layers import sympy and numpy: loaded on first use, so that `lnrecency --help` is instant
    from lnrecency.layers import Normalisation, Update

# The keys of lnrecency.layers.NORMALISATIONS, in its order (tests/test_config.py checks that they agree).
NORMS = ("none", "l2", "rmsnorm", "layernorm")
_FROM_LAYERS = ("NORMALISATIONS", "UPDATES", "Normalisation", "Update", "as_fraction")


def __getattr__(name: str) -> Any:
    """The layer names re-exported here (``from lnrecency.config import as_fraction``), imported lazily."""
    if name in _FROM_LAYERS:
        import lnrecency.layers

        return getattr(lnrecency.layers, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


EMBEDDINGS = ("gaussian", "normalized")


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


@dataclass(frozen=True)
class ModelConfig:
    """Parameter-free causal attention stack M(norm, residual, lam, gamma, alpha) of docs/model.md.

    Numeric fields keep the type they were given (float, int, ``Fraction``, ``sympy.Rational``,
    ``mpmath.mpf``) so that the exact and high-precision paths can use them without rounding.
    """

    norm: str = "layernorm"
    residual: bool = False
    gamma: Any = 1.0
    lam: Any = 1.0
    alpha: Any = 0.0
    embedding: str = "gaussian"

    def __post_init__(self) -> None:
        if self.norm not in NORMS:  # the layers' own names, if loaded (a test may add one); else NORMS
            import sys

            layers = sys.modules.get("lnrecency.layers")
            check_choice("norm", self.norm, tuple(layers.NORMALISATIONS) if layers is not None else NORMS)
        if not is_bool(self.residual):
            raise ValueError(f"residual must be a bool (True or False); got {self.residual!r}")
        object.__setattr__(self, "residual", bool(self.residual))
        check_real("gamma", self.gamma, low=0.0, low_open=True)
        check_real("lam", self.lam, low=0.0, low_open=True)
        check_real("alpha", self.alpha, low=0.0, high=1.0, low_open=False, high_open=True)
        check_choice("embedding", self.embedding, EMBEDDINGS)

    @property
    def normalisation(self) -> Normalisation:
        """The layer definition of N (:data:`lnrecency.layers.NORMALISATIONS`)."""
        from lnrecency.layers import NORMALISATIONS

        return NORMALISATIONS[self.norm]

    @property
    def update(self) -> Update:
        """The layer definition of the next-state rule (residual or not)."""
        from lnrecency.layers import UPDATES

        return UPDATES[self.residual]

    def replace(self, **changes: Any) -> "ModelConfig":
        return replace(self, **changes)

    def as_dict(self) -> dict[str, Any]:
        """JSON-friendly view (numbers as float)."""
        out = asdict(self)
        for key in ("gamma", "lam", "alpha"):
            out[key] = float(out[key])
        return out

    def label(self) -> str:
        parts = [self.norm, "res" if self.residual else "nores"]
        if self.residual:
            parts.append(f"gamma={_shown(self.gamma)}")
        parts += [f"lam={_shown(self.lam)}", f"alpha={_shown(self.alpha)}"]
        return " ".join(parts)


def _shown(value: Any) -> str:
    """A parameter in a label: 6 significant digits, or every digit when rounding would change the value
    (alpha = 0.9999999999999999 is not shown as 1)."""
    x = float(value)
    short = f"{x:g}"
    return short if float(short) == x else repr(x)


def make_config(config: ModelConfig | None = None, **params: Any) -> ModelConfig:
    """The one rule for model parameters in every public function: the model comes from ``config``
    (a :class:`ModelConfig`) or from keywords (norm, residual, gamma, lam, alpha, embedding; defaults
    are :class:`ModelConfig`'s), never from both. Passing both is a ValueError naming the conflict."""
    if config is not None and not isinstance(config, ModelConfig):
        raise ValueError(f"config must be a ModelConfig or None; got {type(config).__name__}")
    unknown = set(params) - set(ModelConfig.__dataclass_fields__)
    if unknown:
        raise ValueError(
            f"unknown model parameter(s) {sorted(unknown)}; allowed: "
            f"{sorted(ModelConfig.__dataclass_fields__)}"
        )
    if config is None:
        return ModelConfig(**params)
    if params:
        raise ValueError(f"pass the model either as config= or as keywords, not both; got config= "
                         f"and {', '.join(f'{k}={v!r}' for k, v in sorted(params.items()))}")
    return config


