"""The decoder configuration, defined and validated once (no torch import: the CLI checks it first).

One decoder family covers both worlds of the project:

* **trained** decoders: token (+ learned or rotary) embeddings, ``n_layers`` blocks of multi-head causal
  attention (W_Q, W_K, W_V, W_O learned) with an optional MLP, a normalisation ``norm`` placed
  ``pre`` (before attention and MLP, GPT-2 / LLaMA style), ``post`` (right after the attention output,
  before the residual add: seed 003's post-attention LayerNorm) or ``both``, residual on or off;
* the **parameter-free** model of the theory, :meth:`DecoderConfig.identity`: one head, W_Q = W_K = W_V = I,
  no MLP, no output projection, the theory's normalisation N (``lnrecency.model.layers``), scores
  lam <N(h_i), N(h_j)>, next state h + gamma o or o, and inputs drawn as the theory's embeddings.

Sizes are bounded (``LIMITS``) so that a configuration implies a bounded amount of work and memory.
"""
from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

from lnrecency.experiments.decoders.tasks import TASKS, min_length
from lnrecency.model.config import ModelConfig
from lnrecency.runtime.arguments import check_choice, check_int, check_real

__all__ = ["DecoderConfig", "TrainSettings", "DECODER_NORMS", "PLACEMENTS", "POSITIONS", "LIMITS", 
           "HELDOUT_SEED", "MAX_TOKENS"]

#: normalisations of a trained decoder (the identity decoder takes the theory's, ModelConfig.norm); the last three
#: are LayerNorm taken apart (plan v5's P arms): "centre" y = g (h - mean h) + b (the centring, no scale),
#: "layernorm-stopscale" LayerNorm whose per-token 1/sigma is held out of the gradient (the same forward), and
#: "layernorm-fixgain" LayerNorm whose gain is fixed at 1 (its bias learned)
DECODER_NORMS = ("none", "layernorm", "rmsnorm", "centre", "layernorm-stopscale", "layernorm-fixgain")
PLACEMENTS = ("pre", "post", "both")
POSITIONS = ("learned", "none", "rotary")
#: upper bounds of the sizes (CPU scale: a model of these sizes trains on 2 cores)
LIMITS = {"vocab": 65536, "d_model": 2048, "n_layers": 64, "n_heads": 64, "context": 4096, "mlp_ratio": 16}


@dataclass(frozen=True)
class DecoderConfig:
    """A causal decoder. ``identity`` holds the theory's model (a :class:`ModelConfig`) for the
    parameter-free configuration and is None for a trainable decoder."""

    vocab: int = 256
    d_model: int = 64
    n_layers: int = 2
    n_heads: int = 4
    context: int = 64
    mlp: bool = False
    mlp_ratio: int = 4
    norm: str = "layernorm"
    placement: str = "pre"
    positions: str = "none"
    residual: bool = True
    init_std: float = 0.02
    identity: ModelConfig | None = None

    def __post_init__(self) -> None:
        for name, top in LIMITS.items():
            check_int(name, getattr(self, name), minimum=1, maximum=top)
        for name in ("mlp", "residual"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name} must be a bool (True or False); got {getattr(self, name)!r}")
        check_choice("placement", self.placement, PLACEMENTS)
        check_choice("positions", self.positions, POSITIONS)
        if not (isinstance(self.init_std, (int, float)) and 0 < float(self.init_std) <= 1):
            raise ValueError(f"init_std must be a number in (0, 1]; got {self.init_std!r}")
        if self.identity is None:
            check_choice("norm", self.norm, DECODER_NORMS)
            if self.d_model % self.n_heads:
                raise ValueError(f"d_model must be a multiple of n_heads; got d_model={self.d_model}, "
                                 f"n_heads={self.n_heads}")
            if self.positions == "rotary" and (self.d_model // self.n_heads) % 2:
                raise ValueError(f"rotary positions need an even head width; got d_model / n_heads = "
                                 f"{self.d_model // self.n_heads}")
            return
        if not isinstance(self.identity, ModelConfig):
            raise ValueError(f"identity must be a ModelConfig or None; got {type(self.identity).__name__}")
        fixed = dict(n_heads=1, mlp=False, placement="pre", positions="none", norm=self.identity.norm,
                     residual=self.identity.residual)
        wrong = {k: getattr(self, k) for k, v in fixed.items() if getattr(self, k) != v}
        if wrong:
            raise ValueError(f"the identity decoder has {fixed}; got {wrong}")

    @classmethod
    def identity_of(cls, model: ModelConfig, *, d: int, layers: int, n: int) -> "DecoderConfig":
        """The parameter-free model M(norm, residual, lam, gamma, alpha) at width ``d``, ``layers`` layers,
        sequences of length ``n``, as a decoder configuration."""
        return cls(vocab=1, d_model=check_int("d", d, minimum=2, maximum=LIMITS["d_model"]),
                   n_layers=check_int("layers", layers, minimum=1, maximum=LIMITS["n_layers"]), n_heads=1,
                   context=check_int("n", n, minimum=1, maximum=LIMITS["context"]), mlp=False,
                   norm=model.norm, placement="pre", positions="none", residual=model.residual, identity=model)

    @property
    def head_dim(self) -> int:
        return self.d_model // self.n_heads

    @property
    def is_identity(self) -> bool:
        return self.identity is not None

    def replace(self, **changes: Any) -> "DecoderConfig":
        return replace(self, **changes)

    def as_dict(self) -> dict:
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "identity"}
        out["identity"] = None if self.identity is None else self.identity.as_dict()
        return out

    @classmethod
    def from_dict(cls, data: dict) -> "DecoderConfig":
        """Inverse of :meth:`as_dict` (a checkpoint's config.json): every key present (nothing is filled in
        with a default), no unknown key, ``identity`` null or an object of the model's fields."""
        if not isinstance(data, dict):
            raise ValueError(f"a decoder configuration must be a JSON object; got {type(data).__name__}")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown decoder configuration key(s) {unknown}; allowed: {sorted(known)}")
        missing = sorted(known - set(data))
        if missing:
            raise ValueError(f"the decoder configuration lacks {missing} (a checkpoint states every field)")
        data = dict(data)
        ident = data["identity"]
        if ident is not None:
            model_keys = {f.name for f in fields(ModelConfig)}
            if not isinstance(ident, dict) or set(ident) - model_keys:
                raise ValueError(f"identity must be null or an object with keys among {sorted(model_keys)}; got "
                                 f"{ident!r:.200}")
            data["identity"] = ModelConfig(**ident)
        return cls(**data)

    def label(self) -> str:
        if self.is_identity:
            return f"identity({self.identity.label()}), d={self.d_model}, L={self.n_layers}"
        parts = [f"L={self.n_layers}", f"H={self.n_heads}", f"d={self.d_model}",
                 "attn+mlp" if self.mlp else "attn-only", f"norm={self.norm}"]
        if self.norm != "none":
            parts.append(self.placement)
        parts += [f"pos={self.positions}", "res" if self.residual else "nores"]
        return " ".join(parts)


HELDOUT_SEED = 20250921  # the held-out set: one fixed draw for every model
#: bound on steps * batch * n (tokens processed): about 3 hours of the smallest model on 2 cores
MAX_TOKENS = 2 * 10**9


@dataclass(frozen=True)
class TrainSettings:
    task: str = "induction"
    steps: int = 1000
    seed: int = 0
    batch: int = 32
    n: int = 32
    lr: float = 3e-3
    weight_decay: float = 0.0
    warmup: int = 50
    eval_every: int = 100  # 0: no held-out evaluation
    eval_sequences: int = 256
    threads: int = 1  # intra-op threads: results are byte-identical for a given count (see module doc)
    #: convergence rule (0: train exactly ``steps`` steps): stop at the first evaluation at step t >= min_steps
    #: where the held-out loss improved by less than ``converge`` (relative) since the last evaluation at or
    #: before 0.8 t;
    #: ``steps`` is then the cap
    converge: float = 0.0
    min_steps: int = 0

    def __post_init__(self) -> None:
        check_choice("task", self.task, TASKS + ("lm",))
        check_int("steps", self.steps, minimum=1, maximum=10**7)
        check_int("seed", self.seed, minimum=0, maximum=2**63 - 1)
        check_int("batch", self.batch, minimum=1, maximum=4096)
        check_int("n", self.n, minimum=min_length(self.task) if self.task != "lm" else 4, maximum=4096)
        check_real("lr", self.lr, low=0.0, high=1.0, low_open=True, high_open=False)
        check_real("weight_decay", self.weight_decay, low=0.0, high=1.0, high_open=False)
        check_int("warmup", self.warmup, minimum=0, maximum=10**7)
        check_int("eval_every", self.eval_every, minimum=0, maximum=10**7)
        check_int("eval_sequences", self.eval_sequences, minimum=1, maximum=65536)
        check_int("threads", self.threads, minimum=1, maximum=64)
        check_real("converge", self.converge, low=0.0, high=1.0, high_open=True)
        check_int("min_steps", self.min_steps, minimum=0, maximum=self.steps)
        if self.converge > 0 and not self.eval_every:
            raise ValueError("the convergence rule (converge > 0) needs held-out evaluations (eval_every > 0)")
        if self.steps * self.batch * self.n > MAX_TOKENS:
            raise ValueError(f"steps * batch * n = {self.steps * self.batch * self.n} tokens exceeds the CPU "
                             f"budget {MAX_TOKENS}; lower --steps, --batch or --n")
