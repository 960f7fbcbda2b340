"""The authors' simulation conventions as named presets, mapped exactly onto our model at a width d.

Derived from the authors' public code (read it there; quoted here only as far as the mapping needs):

``authors-v2`` - starmpcc/layernorm_recency_bias, concept/simulation.ipynb (the paper's second version,
"LayerNorm Induces Recency Bias in Transformer Decoders"):
  tokens   x_s = (m z_s + l z_0) / sqrt(E), z ~ N(0, I_E), m = 1, l = sqrt(alpha / (1 - alpha)), S = 10
  layer    hidden = LN(x) (no affine, eps 1e-12) if layernorm else x;
           attn = hidden hidden^T / sqrt(E) (masked causally), P = softmax(attn);
           out = P hidden, plus x if residual.
  RP       over draws and triples j < k < i, the fraction with attn_ik > attn_ij (``get_recency_prob``).

``authors-v1`` - starmpcc/causal_mask_encodes_positional, concept/simulation.ipynb (the first version):
  tokens   x_s = normalize(m z_s + l z_0) (unit norm), S = 50, E = 64
  layer    hidden = LN(x) if layernorm else x / |x|; attn = hidden hidden^T, divided by sqrt(E) with
           LayerNorm (by E with ``ln_scaling``); out = P hidden + x (always residual).

Mapping (our model: tokens with Gram ~ Wishart(G0)/d, G0 = (1 - alpha) I + alpha 1 1^T; N(h) of unit
norm; S = lam <N(h_i), N(h_j)>; h' = o or h + gamma o with o = sum_k P_ik N(h_k)). Write c = 1/(1-alpha).

  v2 tokens: x_s = sqrt(c) * (sqrt(1 - alpha) z_s + sqrt(alpha) z_0) / sqrt(E), i.e. exactly sqrt(c) times
     our gaussian embedding (same z). LN(v) = sqrt(E) N(v) (centred, |LN(v)|^2 = E), scale invariant.
  v2 + layernorm: attn = E <N_i, N_j> / sqrt(E)           -> lam = sqrt(d);
     residual: h' = h + sqrt(E) P N(h); with h = sqrt(c) h~: h~' = h~ + sqrt(E / c) P N(h~)
                                                           -> gamma = sqrt(d (1 - alpha)).
  v2 + none: attn = <x_i, x_j> / sqrt(E) = c <h~_i, h~_j> / sqrt(E); the stack is linear in h, so the
     factor c stays at every layer                        -> lam = 1 / ((1 - alpha) sqrt(d)), gamma = 1.
  v1 tokens: exactly our "normalized" embedding (v = z + sqrt(alpha/(1-alpha)) c, v / |v|).
  v1 + layernorm: lam = sqrt(d) (lam = 1 with ln_scaling); h' = h + sqrt(E) P N(h) -> gamma = sqrt(d).
  v1 + none (their l2 branch): norm l2, lam = 1, gamma = 1.

The only departure: LN's eps = 1e-12 added to a per-coordinate variance of order 1/(E (1 - alpha))
(relative size <= 1e-12 E; the l2 branch's 1e-12 likewise), below float64 resolution of the scores for
every E used here. alpha = 1 (their m = 0: all tokens equal) is outside our model (alpha < 1).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from lnrecency.model.config import ModelConfig
from lnrecency.runtime.arguments import check_choice, check_int, check_real

__all__ = ["CONVENTIONS", "Convention", "preset", "convention_record"]


@dataclass(frozen=True)
class Convention:
    name: str
    source: str
    n: int  # the authors' sequence length S
    norms: tuple  # their --norm values
    residual_always: bool
    embedding: str


CONVENTIONS = {
    "authors-v2": Convention("authors-v2", "starmpcc/layernorm_recency_bias concept/simulation.ipynb", 10,
                             ("layernorm", "none"), False, "gaussian"),
    "authors-v1": Convention("authors-v1", "starmpcc/causal_mask_encodes_positional concept/simulation.ipynb",
                             50, ("layernorm", "none"), True, "normalized"),
}


def preset(convention: str, *, norm: str, residual: bool, alpha: float, d: int,
           ln_scaling: bool = False) -> ModelConfig:
    """Our model configuration equivalent, in distribution at width d, to the authors' simulation in
    ``convention`` with their --norm (layernorm | none), residual flag and alpha (module docstring)."""
    conv = CONVENTIONS[check_choice("convention", convention, tuple(CONVENTIONS))]
    check_choice("norm", norm, conv.norms)
    d = check_int("d", d, minimum=2)
    alpha = float(check_real("alpha", alpha, low=0.0, high=1.0, high_open=True))
    if ln_scaling and (conv.name != "authors-v1" or norm != "layernorm"):
        raise ValueError(f"ln_scaling (scores divided by E) exists only in authors-v1 with norm layernorm; "
                         f"got convention={conv.name!r}, norm={norm!r}")
    if conv.name == "authors-v2":
        if norm == "layernorm":
            return ModelConfig(norm="layernorm", residual=bool(residual), lam=math.sqrt(d),
                               gamma=math.sqrt(d * (1.0 - alpha)), alpha=alpha)
        return ModelConfig(norm="none", residual=bool(residual), lam=1.0 / ((1.0 - alpha) * math.sqrt(d)),
                           gamma=1.0, alpha=alpha)
    if norm == "layernorm":
        return ModelConfig(norm="layernorm", residual=True, lam=1.0 if ln_scaling else math.sqrt(d),
                           gamma=math.sqrt(d), alpha=alpha, embedding="normalized")
    return ModelConfig(norm="l2", residual=True, lam=1.0, gamma=1.0, alpha=alpha, embedding="normalized")


def convention_record(convention: str, *, norm: str, residual: bool, alpha: float, d: int,
                      ln_scaling: bool = False) -> dict:
    """JSON record: the authors' setting as given and the equivalent configuration of our model."""
    cfg = preset(convention, norm=norm, residual=residual, alpha=alpha, d=d, ln_scaling=ln_scaling)
    conv = CONVENTIONS[convention]
    out = {"name": convention, "source": conv.source, "authors_setting":
           {"norm": norm, "residual": bool(residual) or conv.residual_always, "alpha": alpha, "d": d,
            "sequence_length": conv.n},
           "equivalent_config": cfg.as_dict()}
    if ln_scaling:
        out["authors_setting"]["ln_scaling"] = True
    return out
