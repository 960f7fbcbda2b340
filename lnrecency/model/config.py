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

from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING, Any

from lnrecency.runtime.arguments import check_choice, check_real, is_bool

if TYPE_CHECKING:  # the layers import sympy and numpy: loaded on first use, so that `lnrecency --help` is instant
    from lnrecency.model.layers import Normalisation, Update

# The keys of lnrecency.model.layers.NORMALISATIONS, in its order (tests/model/test_config.py checks that they agree).
NORMS = ("none", "l2", "rmsnorm", "layernorm")
_FROM_LAYERS = ("NORMALISATIONS", "UPDATES", "Normalisation", "Update", "as_fraction")


def __getattr__(name: str) -> Any:
    """The layer names re-exported here (``from lnrecency.model.config import as_fraction``), imported lazily."""
    if name in _FROM_LAYERS:
        import lnrecency.model.layers

        return getattr(lnrecency.model.layers, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


EMBEDDINGS = ("gaussian", "normalized")


@dataclass(frozen=True)
class ModelConfig:
    """Parameter-free causal attention stack M(norm, residual, lam, gamma, alpha) of docs/model.md.

    Numeric fields keep the type they were given (float, int, ``Fraction``, ``sympy.Rational``,
    ``mpmath.mpf``) so that the exact and high-precision paths can use them without rounding.
    """

    norm: str = "layernorm"
    residual: bool = False
    # stored as a float, an int or a Fraction (the store checks these types); in memory also sympy.Rational or mpf
    gamma: float = 1.0
    lam: float = 1.0
    alpha: float = 0.0
    embedding: str = "gaussian"

    def __post_init__(self) -> None:
        if self.norm not in NORMS:  # the layers' own names, if loaded (a test may add one); else NORMS
            import sys

            layers = sys.modules.get("lnrecency.model.layers")
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
        """The layer definition of N (:data:`lnrecency.model.layers.NORMALISATIONS`)."""
        from lnrecency.model.layers import NORMALISATIONS

        return NORMALISATIONS[self.norm]

    @property
    def update(self) -> Update:
        """The layer definition of the next-state rule (residual or not)."""
        from lnrecency.model.layers import UPDATES

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


