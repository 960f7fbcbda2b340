"""Our theory beside each of the authors' panels: the exact limit, the first-order finite-width value, the one-term
Edgeworth value of RP, and the h(j) curves (their closed form and our limit)."""
from __future__ import annotations

import math

import numpy as np

from lnrecency.experiments.authors.catalogue import (
    row_triples,
)
from lnrecency.model.config import ModelConfig
from lnrecency.theory.limit import limit_trajectory


def rp_limit(limit: np.ndarray, layer: int) -> float:
    """RP of the limit scores: triples j < k < i scored 1 (S_ik > S_ij), 0 (<) or 1/2 (equal within
    1e-12 relative: exact ties of the limit, e.g. layer 1 below the diagonal)."""
    s = limit[layer - 1]
    vals = []
    for i, j, k in row_triples(s.shape[0]):
        diff, scale = s[i - 1, k - 1] - s[i - 1, j - 1], max(1.0, abs(s[i - 1, k - 1]))
        vals.append(0.5 if abs(diff) <= 1e-12 * scale else float(diff > 0))
    return float(np.mean(vals))


def rp_first_order(fw, layer: int, d: int) -> float:
    """First-order fluctuation-law RP: mean over triples of P(S_ik > S_ij) = Phi((lim + c/d) / sqrt(v/d))
    (:meth:`FiniteWidth.prob_greater`)."""
    return float(np.mean([fw.prob_greater(layer, i, k, j, d) for i, j, k in row_triples(fw.n)]))


def authors_h(j: np.ndarray, alpha: float, resid: float, d: int = 64) -> np.ndarray:
    """The authors' plotted h(j) (concept/alpha.ipynb ``plot_alpha``), transcribed: with
    D_j = e^sqrt(d) + (j-1) e^(alpha sqrt(d)), h(j) = 1 / sqrt(num / D_j^2),
    num = D_j^2 (r^2 + 2 r alpha + alpha) + D_j (1-alpha)(2 r e^sqrt(d) + e^(alpha sqrt(d)))
          + (1-alpha)(e^(2 sqrt(d)) - e^(sqrt(d)(1+alpha)))."""
    s = math.sqrt(d)
    dj = np.exp(s) + (j - 1) * np.exp(alpha * s)
    num = dj ** 2 * (resid ** 2 + resid * alpha * 2 + alpha) + dj * (1 - alpha) * (
        2 * resid * np.exp(s) + np.exp(alpha * s)) + (1 - alpha) * (np.exp(2 * s) - np.exp(s * (1 + alpha)))
    return 1 / np.sqrt(num / dj ** 2)


def limit_h(n: int, config: ModelConfig) -> np.ndarray:
    """1 / |h_j^(1)|, j = 1..n, from our limit of ``config``: 1 / sqrt(G'_jj), G' the Gram of the state after
    layer 1 (the state layer 2 normalises)."""

    return 1 / np.sqrt(np.diag(limit_trajectory(n, 1, config=config).layers[0].next_gram))


def rp_edgeworth(fw, layer: int, d: int) -> float:
    """RP complete to O(d^-1/2): mean over triples of the one-term Edgeworth P(S_ik > S_ij)
    (:meth:`FiniteWidth.prob_greater_edgeworth`); not clipped, so a value outside [0, 1] shows where
    the expansion fails."""
    return float(np.mean(fw.prob_greater_edgeworth([(layer, i, k, j) for i, j, k in row_triples(fw.n)], d)))
