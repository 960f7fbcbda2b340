"""The finite-width theory's engine: Taylor jets of the layer-L scores in the directions of the input Gram
matrix's Wishart fluctuation, from which :mod:`lnrecency.theory.finite_width` reads c (the 1/d coefficient of
the mean) and v (the variance)."""
from __future__ import annotations

from typing import Any, Iterator

import numpy as np

from lnrecency.model.config import ModelConfig
from lnrecency.model.layers import NORMALISATIONS, Arithmetic, Jet, JetArithmetic


# --------------------------------------------------------------------------------------------------
# The law of the input Gram matrix
# --------------------------------------------------------------------------------------------------
def check_supported(config: ModelConfig, *, control_variate: bool = False) -> None:
    """Refuse the configurations whose law this module does not expand (ValueError): the control
    variate with layernorm and normalized tokens."""
    if control_variate and config.embedding == "normalized" and config.normalisation.centres:
        raise ValueError(
            "control_variate: embedding='normalized' with norm='layernorm' is not supported (its exact "
            "mean needs the second moments of the tokens' u-components, not implemented); use "
            "control_variate=False, or embedding='gaussian'")


#: the scales the jets are taken in: the scores, or Fisher's z below the diagonal
SCALES = ("scores", "fisher")


def input_law(n: int, config: ModelConfig) -> tuple[np.ndarray, np.ndarray]:
    """(G0, B) with B the lower Cholesky factor of G0 = (1 - alpha) I + alpha 1 1^T."""
    a = float(config.alpha)
    g0 = np.full((n, n), a)
    np.fill_diagonal(g0, 1.0)
    return g0, np.linalg.cholesky(g0)


def wishart_directions(b: np.ndarray, chunk: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Batches (V, w) of the directions v_aa = b_a b_a^T (weight 2) and v_ab = b_a b_b^T + b_b b_a^T
    (a < b, weight 1), b_a the columns of B: sum_r w_r v_r (x) v_r is d times the covariance of a
    Wishart_n(d, B B^T / d) matrix."""
    n = b.shape[0]
    rows, cols = np.triu_indices(n)
    for lo in range(0, rows.size, chunk):
        r, c = rows[lo:lo + chunk], cols[lo:lo + chunk]
        outer = b.T[r][:, :, None] * b.T[c][:, None, :]  # b_a b_b^T
        v = outer + outer.swapaxes(1, 2)
        diag = r == c
        v[diag] *= 0.5
        yield v, np.where(diag, 2.0, 1.0)


def to_first_gram(g, config: ModelConfig, ar: Arithmetic):
    """The Gram matrix the first layer sees, from the Wishart-distributed one (normalized tokens: l2)."""
    if config.embedding == "normalized":
        return NORMALISATIONS["l2"].gram(g, ar)[0]
    return g


def taylor_scores(n: int, layers: int, config: ModelConfig, directions: np.ndarray, *,
                  token_map: bool = True, outputs: bool = False, scale: str = "scores") -> Jet:
    """Scores of layers 1..L as a Jet along each direction V: F(G0 + t V).

    ``token_map``: the Wishart matrix first goes through the tokens' own normalisation (normalized
    embeddings); False: V moves the Gram the first layer sees directly. ``outputs``: also |o_i|^2.
    ``scale`` "fisher": below the diagonal, Fisher's z = atanh(S_ij / S_ii) instead of S_ij (:data:`SCALES`).
    Returns a Jet with c0 (L, n, n) and c1, c2 (K, L, n, n), NaN above the diagonal; with ``outputs``
    a pair (scores, output norms (L, n) / (K, L, n)).
    """
    from lnrecency.theory.limit import iterate_limit

    ar = JetArithmetic()
    jet = Jet(input_law(n, config)[0], directions, np.zeros_like(directions))
    start = to_first_gram(jet, config, ar) if token_map else jet
    lays = list(iterate_limit(n, layers, config, ar, last_output=outputs, gram=start))
    scores = stack_jets([lay.scores for lay in lays])
    if scale == "fisher":
        scores = fisher_scores(scores, config, n)
    if not outputs:
        return scores
    return scores, stack_jets([ar.diagonal(lay.output_gram) for lay in lays])


def check_scale(scale: Any, config: ModelConfig) -> str:
    if scale not in SCALES:
        raise ValueError(f"scale must be one of {', '.join(SCALES)}; got {scale!r}")
    if scale == "fisher" and config.normalisation.diagonal_score(config.lam) is None:
        raise ValueError(f"scale='fisher' needs scores bounded by S_ii (a normalisation of fixed length: l2, "
                         f"rmsnorm, layernorm); norm={config.norm!r} has none: use scale='scores'")
    return scale


def fisher_scores(scores: Jet, config: ModelConfig, n: int) -> Jet:
    """z = atanh(S / S_ii) below the diagonal, by the jet chain rule (z' = 1 / (b (1 - u^2)),
    z'' = 2 u / (b^2 (1 - u^2)^2), u = S / b, b = S_ii); the diagonal and above are left as they are."""
    bound = float(config.normalisation.diagonal_score(config.lam))
    low = np.tril(np.ones((n, n), dtype=bool), -1)
    u = np.where(low, scores.c0 / bound, 0.0)
    one = 1.0 - u * u
    return Jet(np.where(low, np.arctanh(u), scores.c0),
               np.where(low, scores.c1 / (bound * one), scores.c1),
               np.where(low, scores.c2 / (bound * one) + u * scores.c1 ** 2 / (bound * one) ** 2, scores.c2))


def stack_jets(jets: list) -> Jet:
    return Jet(np.stack([s.c0 for s in jets]), np.stack([s.c1 for s in jets], axis=1),
               np.stack([s.c2 for s in jets], axis=1))
