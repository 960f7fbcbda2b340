"""Finite-width theory: the exact O(1/d) correction of every expected score and the O(1/sqrt(d))
fluctuation law, as derivatives of the shared layer definitions (:mod:`lnrecency.model.layers`).

The mathematics (our derivation; the paper has no finite-width theory).
With W_Q = W_K = W_V = I every score of every layer is a deterministic smooth function F of the Gram
matrix W of the vectors the first normalisation sees: F is the limit recursion started at W instead of
at its mean G0 = (1 - alpha) I + alpha 1 1^T (``iterate_limit(..., gram=W)``). For Gaussian embeddings
x_i = sqrt(1-alpha) z_i + sqrt(alpha) c, z, c ~ N(0, I_d / d):

  * none / l2 / rmsnorm: W = X X^T ~ Wishart_n(d, G0 / d): E W = G0,
    Cov(W_ab, W_ce) = (G0_ac G0_be + G0_ae G0_bc) / d;
  * layernorm: the scores depend only on the centred tokens P_u x_i (P_u removes u = ones / sqrt(d);
    attention outputs are combinations of centred vectors, so the residual stream stays centred up to
    P_u x). Their Gram matrix W_c ~ Wishart_n(d - 1, G0 / d): E W_c = G0 - G0 / d, the same covariance
    to first order ((d - 1) / d^2).

Write W = G0 + E and B B^T = G0 (Cholesky). E = B M B^T / sqrt(d) with M symmetric Gaussian,
Var M_aa = 2, Var M_ab = 1 (a < b), independent. Second-order Taylor expansion of F (delta method):

    E_d[S] = S_lim + c / d + O(1/d^2),
    c = sum_a 2 F2[b_a b_a^T] + sum_{a<b} F2[b_a b_b^T + b_b b_a^T]   (- F1[G0] for layernorm),

where F(G0 + t V) = S_lim + t F1[V] + t^2 F2[V] + O(t^3) (F2 = half the second directional derivative);
the layernorm term is the mean shift -G0/d of W_c. The remainder is O(1/d^2): the third cumulants of
the Wishart law are O(1/d^2) and its fourth moments O(1/d^2). The fluctuation law:

    Cov_d(S_ij, S_ik) = V_i[j, k] / d + O(1/d^2),
    V_i[j, k] = sum_a 2 F1_ij[v_aa] F1_ik[v_aa] + sum_{a<b} F1_ij[v_ab] F1_ik[v_ab],

so Var_d(S_ij - S_ik) = (V_i[j,j] + V_i[k,k] - 2 V_i[j,k]) / d. The jets F1, F2 come from running the
limit recursion in second-order Taylor arithmetic (:class:`Jet`), batched over directions V. They are
cross-checked against finite differences in mpmath (``finite_difference_c``) and against Monte Carlo.

``normalized`` embeddings (x_i = v_i / |v_i|, v_i = z_i + sqrt(alpha / (1 - alpha)) c, rescaled so that
Gram(v) ~ Wishart_n(d, G0 / d)): for none / l2 / rmsnorm the first layer sees the l2-normalised Gram of
the v_i, so the same expansion runs through one extra l2 Gram map. For layernorm it sees the centred
tokens P_u v_i / |v_i|: Gram diag(W_c + q^2)^(-1/2) W_c diag(W_c + q^2)^(-1/2) with W_c ~ Wishart(d-1)
the centred Gram and q_i = <u, v_i> ~ N(0, 1/d) independent of it. To first order only E q_i^2 = 1/d
enters (its fluctuations are O(1/d) with mean zero and independent of W_c); it shrinks the fed Gram
G0 -> G0 / (1 + 1/d), i.e. along -G0, while the mean shift of W_c does nothing (the l2 map is scale
invariant). So in both embeddings c = c_cov - r F1[G0], with F1 taken without the token normalisation.
The control variate is not available there (the second moments of the q^2 part are not implemented).

Beyond first order (our derivation): P(S_ij > S_ik). With z = (lim + c/d) / sqrt(v/d), the normal law
Phi(z) has an error of order d^-1/2, the same order as the c/d shift it contains: the skewness of
Delta = S_ij - S_ik enters at that order too. Writing Delta = Delta_0 + L[E] + Q[E] + ..., with L[E] =
tr(Lam E) (Lam the gradient) and Q = F2, the leading third cumulant is

    kappa_3(Delta) = t / d^2 + O(1/d^3),   t = 8 tr((Lam G0)^3) + 24 F2[G0 Lam G0]:

the Wishart sum of d rank-one terms gives kappa_3(L) = 8 tr((Lam G0)^3) / d^2 (a Gaussian E would give
0), and 3 Cum(L, L, Q) = 3 * 2 Q[Cov(E, L)] with Cov(E, L) = 2 G0 Lam G0 / d. All other terms are
O(1/d^3) (odd Gaussian moments vanish). The one-term Edgeworth expansion with g = kappa_3 / sd^3,
P = Phi(z) + phi(z) g (z^2 - 1) / 6, is then complete to O(d^-1/2), error O(1/d). Measured: its t
matches the Monte Carlo k-statistic at d = 4096; at the authors' d = 64 it predicts RP better than
first order; at d = 16 with lam = sqrt(d) the O(1/d) terms are large (the 1/d^2 coefficient of the
variance is ~26 v in one setting) and neither expansion is accurate there. Nor can a better formula
for the cumulants fix it: fed each difference's exact cumulants (from draws), the normal law and the
one- and two-term Edgeworth expansions still miss RP by 0.031, 0.027 and 0.0055 at d = 16, alpha = 0.5,
layer 2 (``lnrecency.experiments.authors.reproduce.cumulant_ceiling``): the truncation itself fails there.

Fisher's z (``scale="fisher"``). Under a normalisation of fixed length |S_ij| <= S_ii = b, so
z_ij = atanh(S_ij / b) orders the keys of a row as S does: P(z_ik > z_ij) = P(S_ik > S_ij). The same
expansion of z (the jets composed with atanh; first derivative 1 / (b (1 - u^2)), second
2 u / (b^2 (1 - u^2)^2), u = S / b) gives c_z = z' c + z'' v / 2 and V_z = z'_j z'_k V, and its own t.
Cosines near 1 make S_ik - S_ij skewed; z removes most of it. Measured: with lam fixed and no residual
it predicts P better than the score scale (mean error 0.009 against 0.017 at d = 16); with residual,
and on the authors' lam = sqrt(d) panels, it does not (README).

Where lam or gamma grows with d (the authors' lam = sqrt(d) "sqrt(d) scaling", gamma = sqrt(d)) the
fixed-parameter expansion does not apply: such settings are decided by Monte Carlo at their width (P9).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import mpmath
import numpy as np

from lnrecency.model.config import ModelConfig, make_config
from lnrecency.model.layers import Jet, causal_mask
from lnrecency.runtime.arguments import check_int
from lnrecency.theory.width_jets import SCALES, check_scale, input_law, taylor_scores, to_first_gram, wishart_directions

__all__ = ["Jet", "FiniteWidth", "finite_width", "taylor_scores", "wishart_directions",
           "finite_difference_c", "FIRST_ORDER", "third_cumulant", "EDGEWORTH", "SCALES"]

#: the quantity the theory expands: the scores S_ij, or Fisher's z_ij = atanh(S_ij / S_ii) (under a
#: normalisation of fixed length |S_ij| <= S_ii, so z_ik > z_ij is the event S_ik > S_ij: the same
#: probabilities from a law closer to normal where the cosines S / S_ii sit near 1).
FIRST_ORDER = ("first-order (delta method): E_d S = S_lim + c/d + O(1/d^2), "
               "Var_d = v/d + O(1/d^2)")
EDGEWORTH = ("second order in d^-1/2 (one-term Edgeworth): P(S_ij > S_ik) = Phi(z) + phi(z) g (z^2 - 1) / 6, "
             "z = (lim + c/d) / sqrt(v/d), g = (t/d^2) / (v/d)^(3/2); error O(1/d)")
_JET_BUDGET_BYTES = 192 * 2**20  # working memory of one batch of directions
MAX_SECONDS = 20.0  # an interactive answer: refused above (before any work); --max-seconds raises it
#: the time model, fitted by benchmarks/bench_estimates.py --fit on this project's 2-core machine (n = 8..64,
#: 1-6 layers): seconds = LOAD_MARGIN x (FIXED + layers x (PER_BATCH x batches + PER_OP x n(n+1)/2 x n^3))
FW_COST = {"FIXED": 1.5e-5, "PER_BATCH": 2.9e-4, "PER_OP": 1.06e-9}


def _batches(n: int, layers: int, chunk: int | None) -> tuple[int, int]:
    if chunk is None:
        chunk = max(1, _JET_BUDGET_BYTES // (8 * 40 * layers * n * n))
    chunk = check_int("chunk", chunk, minimum=1)
    return chunk, -(-n * (n + 1) // 2 // chunk)


def estimate_seconds(n: int, layers: int, chunk: int | None = None) -> float:
    """Time of :func:`finite_width` on this project's 2-core machine (:data:`FW_COST`)."""
    from lnrecency.theory.limit import LOAD_MARGIN

    _, batches = _batches(n, layers, chunk)
    c = FW_COST
    return LOAD_MARGIN * (c["FIXED"] + layers * (c["PER_BATCH"] * batches + c["PER_OP"] * n * (n + 1) / 2 * n ** 3))


def check_cost(n: int, layers: int, chunk: int | None = None) -> None:
    """Refuse, before any work: memory (the layers x n^3 covariances and one batch of directions, against
    the available memory; a limit that stays) and time (above MAX_SECONDS; ``--max-seconds`` raises it)."""
    from lnrecency.runtime.memory import available_memory
    from lnrecency.runtime.timelimit import refusal, time_limit

    need = 16 * layers * n ** 3 + _JET_BUDGET_BYTES
    if need > 256 * 2**20 and need > available_memory():
        raise MemoryError(f"finite-width theory at n={n}, layers={layers} needs about {need / 2**20:.0f} MiB "
                          f"(layers x n^3 covariances), more than the available "
                          f"{available_memory() / 2**20:.0f} MiB; use a smaller n or fewer layers")
    seconds = estimate_seconds(n, layers, chunk)
    if seconds > time_limit(MAX_SECONDS):
        raise refusal(f"finite-width theory at n={n}, layers={layers}", seconds, time_limit(MAX_SECONDS),
                      "use a smaller n or fewer layers")


# --------------------------------------------------------------------------------------------------
# The result
# --------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class FiniteWidth:
    """First-order finite-width theory of M at sequence length n, layers 1..L (0-indexed arrays).

    limit[l, i, j]        S_lim^(l+1)_(i+1)(j+1), NaN above the diagonal
    c[l, i, j]            the 1/d coefficient: E_d S = limit + c / d + O(1/d^2)
    c_centring[l, i, j]   the part of c from LayerNorm's centring, -r F1[G0] (r = removed directions;
                          0 for the other norms); the rest, c - c_centring, is the fluctuation part
    curvature_centring    F2[G0] (needed by the exact mean of the control variate)
    cov[l, i, j, k]       V_i[j, k]: d Cov_d(S_ij, S_ik) -> V_i[j, k] (within row i)
    limit_output_sq[l, i] |o_i|^2 of layer l+1's attention output in the limit (O_ii)
    c_output_sq[l, i]     its 1/d coefficient (for layernorm also that of d Var_coord(o_i): o is centred)
    scale                 "scores", or "fisher": limit, c, cov (and the third cumulant) are those of
                          z_ij = atanh(S_ij / S_ii) below the diagonal (:data:`SCALES`)
    """

    config: ModelConfig
    n: int
    layers: int
    limit: np.ndarray
    c: np.ndarray
    c_centring: np.ndarray
    curvature_centring: np.ndarray
    cov: np.ndarray
    limit_output_sq: np.ndarray
    c_output_sq: np.ndarray
    scale: str = "scores"

    label = FIRST_ORDER

    def _idx(self, layer: int, i: int, *cols: int) -> tuple[int, ...]:
        check_int("layer", layer, minimum=1, maximum=self.layers)
        check_int("i", i, minimum=1, maximum=self.n)
        for name, col in zip("jk", cols):
            check_int(name, col, minimum=1, maximum=i)
        return (layer - 1, i - 1) + tuple(col - 1 for col in cols)

    def expected(self, d: Any) -> np.ndarray:
        """limit + c / d: first-order E_d[S], shape (L, n, n)."""
        d = _check_d(d, self.config)
        return self.limit + self.c / d

    def taylor_mean(self, d: Any) -> np.ndarray:
        """Exact E[F1[E] + F2[E]] at width d, E = W - G0 the draw's input-Gram deviation (the control
        variate's known mean). With r = removed directions, W ~ Wishart(d - r, G0 / d):
        E E = -r G0 / d and E[E (x) E] = (d - r) / d^2 K + r^2 G0 (x) G0 / d^2, so the mean is
        c_centring / d + (d - r) / d^2 (c - c_centring) + r^2 / d^2 F2[G0]. Zeros above the diagonal."""
        d = _check_d(d, self.config)
        r = self.config.normalisation.removed
        out = (self.c_centring / d + (d - r) / d ** 2 * (self.c - self.c_centring)
               + r * r / d ** 2 * self.curvature_centring)
        return np.nan_to_num(out, nan=0.0)

    @property
    def variance(self) -> np.ndarray:
        """v of every score: d Var_d(S_ij) -> v_ij, shape (L, n, n); NaN above the diagonal (no score
        there), as in ``limit`` and ``c``."""
        v = np.einsum("lijj->lij", self.cov).copy()
        v[:, ~causal_mask(self.n)] = np.nan
        return v

    def difference(self, layer: int, i: int, j: int, k: int) -> tuple[float, float, float]:
        """(limit, c, v) of S_ij - S_ik: E_d = limit + c/d, Var_d = v/d (first order)."""
        l0, i0, j0, k0 = self._idx(layer, i, j, k)
        v = self.cov[l0, i0]
        return (float(self.limit[l0, i0, j0] - self.limit[l0, i0, k0]),
                float(self.c[l0, i0, j0] - self.c[l0, i0, k0]),
                float(max(v[j0, j0] + v[k0, k0] - 2.0 * v[j0, k0], 0.0)))

    def prob_greater(self, layer: int, i: int, j: int, k: int, d: Any) -> float:
        """P(S_ij > S_ik) for one draw at width d from the fluctuation law (normal, first order):
        Phi((Delta_lim + Delta_c / d) / sqrt(v / d))."""
        from scipy.stats import norm as normal

        d = _check_d(d, self.config)
        lim, c, v = self.difference(layer, i, j, k)
        mean = lim + c / d
        if v == 0.0:
            return 1.0 if mean > 0 else 0.0 if mean < 0 else 0.5
        return float(normal.cdf(mean / math.sqrt(v / d)))

    def third_cumulant(self, keys) -> np.ndarray:
        """t for each (layer, i, j, k) in ``keys``: d^2 kappa_3(S_ij - S_ik) -> t (:func:`third_cumulant`)."""
        return third_cumulant(self, [self._idx(*key) for key in keys])

    def prob_greater_edgeworth(self, keys, d: Any) -> np.ndarray:
        """P(S_ij > S_ik) for each (layer, i, j, k) in ``keys`` at width d, complete to O(d^-1/2): the
        one-term Edgeworth expansion (module docstring, "Beyond first order"). Not clipped to [0, 1]: a
        value outside it says the expansion has failed there."""
        from lnrecency.inference.stats import edgeworth_prob_positive  # scipy.stats: 0.9 s of import, only here

        d = _check_d(d, self.config)
        keys = list(keys)
        t = self.third_cumulant(keys)
        out = np.empty(len(keys))
        for r, key in enumerate(keys):
            lim, c, v = self.difference(*key)
            mean, var = lim + c / d, v / d
            if var == 0.0:
                out[r] = 1.0 if mean > 0 else 0.0 if mean < 0 else 0.5
                continue
            out[r] = edgeworth_prob_positive(mean, var, t[r] / d ** 2)
        return out

    def smallest_d(self, layer: int, i: int, j: int, k: int) -> float | None:
        """Smallest real d > 0 beyond which the first-order E_d(S_ij - S_ik) = lim + c/d is > 0
        (0.0: every d; None: never, as lim <= 0). Exact root of the first-order expression."""
        lim, c, _ = self.difference(layer, i, j, k)
        if lim > 0:
            return 0.0 if c >= 0 else -c / lim
        if lim == 0 and c > 0:
            return 0.0
        return None

    def to_json(self, d: Any = None) -> dict:
        out = {"config": self.config.as_dict(), "n": self.n, "layers": self.layers, "scale": self.scale,
               "approximation": self.label, "c": nested(self.c), "limit": nested(self.limit),
               "variance": nested(self.variance)}
        if d is not None:
            out["d"] = int(d)
            out["expected"] = nested(self.expected(d))
        return out


def nested(a: np.ndarray) -> list:
    """(layers, n, n) array as nested lists, None where not finite (above the diagonal)."""
    return [[[None if not np.isfinite(x) else float(x) for x in row] for row in lay] for lay in a]


def _check_d(d: Any, config: ModelConfig) -> int:
    return check_int("d", d, minimum=config.normalisation.removed + 1)


def finite_width(n: int, layers: int, *, config: ModelConfig | None = None, chunk: int | None = None,
                 scale: str = "scores", **params: Any) -> FiniteWidth:
    """The first-order finite-width theory (module docstring) for every layer 1..L and entry.

    ``scale`` "fisher": the theory of z_ij = atanh(S_ij / S_ii) below the diagonal instead of S_ij
    (:data:`SCALES`). Deterministic; cost O(n^2) directions x O(L n^3) per direction, in batches of
    ``chunk`` directions (default: ~192 MiB of working arrays).
    """
    n = check_int("n", n, minimum=1)
    layers = check_int("layers", layers, minimum=1)
    cfg = make_config(config, **params)
    scale = check_scale(scale, cfg)
    chunk, _ = _batches(n, layers, chunk)
    check_cost(n, layers, chunk)
    g0, b = input_law(n, cfg)
    c = np.zeros((layers, n, n))
    c_out = np.zeros((layers, n))
    cov = np.zeros((layers, n, n, n))
    limit = limit_out = None
    lower = causal_mask(n)
    overflow = False
    with np.errstate(over="ignore", invalid="ignore"):  # overflow is detected below and refused
        for v, w in wishart_directions(b, chunk):
            jet, out = taylor_scores(n, layers, cfg, v, outputs=True, scale=scale)
            limit, limit_out = jet.c0, out.c0
            overflow |= not (np.isfinite(jet.c1[..., lower]).all() and np.isfinite(jet.c2[..., lower]).all())
            c += np.einsum("r,rlij->lij", w, np.nan_to_num(jet.c2))
            c_out += np.einsum("r,rli->li", w, out.c2)
            a = np.ascontiguousarray(np.nan_to_num(jet.c1).transpose(1, 2, 3, 0))  # (L, n, n, K)
            cov += (a * w) @ a.swapaxes(-1, -2)  # sum_r w_r F1_r[l, i, j] F1_r[l, i, k]
    if overflow or not (np.isfinite(limit[..., lower]).all() and np.isfinite(cov).all() and np.isfinite(c).all()):
        raise ValueError(f"the finite-width theory overflows float64 at {cfg.label()} (n={n}, layers={layers}); "
                         f"its coefficients are not finite numbers there: use a smaller lam or gamma")
    centring = np.zeros((layers, n, n))
    curvature = np.zeros((layers, n, n))
    centring_out = np.zeros((layers, n))
    r = cfg.normalisation.removed
    if r:  # along G0 in the Gram the first layer sees (module docstring), no token map
        shift, shift_out = taylor_scores(n, layers, cfg, g0[None], token_map=False, outputs=True, scale=scale)
        centring = -r * np.nan_to_num(shift.c1[0])
        centring_out = -r * shift_out.c1[0]
        curvature = np.nan_to_num(shift.c2[0])
    if cfg.normalisation.fixed_length:  # S_ii = lam |N h_i|^2 = lam g^2 identically: c_ii = 0, no fluctuation
        idx = np.arange(n)
        for a in (c, centring, curvature):
            a[:, idx, idx] = 0.0
        cov[:, idx, idx, :] = 0.0
        cov[:, idx, :, idx] = 0.0
    upper = ~causal_mask(n)
    c = c + centring
    for a in (c, centring, curvature):
        a[:, upper] = np.nan
    return FiniteWidth(cfg, n, layers, limit, c, centring, curvature, cov, limit_out, c_out + centring_out, scale)


def third_cumulant(fw: FiniteWidth, keys: list, *, parts: bool = False):
    """t = lim d^2 kappa_3(S_ij - S_ik) for 0-indexed (l, i, j, k) in ``keys`` (module docstring):
    t = 8 tr((Lam G0)^3) + 24 F2[G0 Lam G0], Lam the gradient of the difference in the first layer's
    Gram matrix (F1[V] = tr(Lam V)). Two batched jet passes: the gradient along the elementary symmetric
    directions, then F2 along each key's G0 Lam G0. ``parts``: (tr((Lam G0)^3), F2[G0 Lam G0]) instead."""
    n, cfg = fw.n, fw.config
    if not keys:
        return (np.zeros(0), np.zeros(0)) if parts else np.zeros(0)
    if cfg.embedding != "gaussian":
        raise ValueError(f"third_cumulant: embedding={cfg.embedding!r} is not supported (the Edgeworth term "
                         f"is derived for the Wishart law of gaussian tokens); use embedding='gaussian'")
    g0, _ = input_law(n, cfg)
    idx = np.array(keys)
    lay, row, cj, ck = idx.T
    rows, cols = np.triu_indices(n)
    grad = np.zeros((len(keys), n, n))
    chunk = max(1, _JET_BUDGET_BYTES // (8 * 40 * fw.layers * n * n))
    for lo in range(0, rows.size, chunk):
        r, c = rows[lo:lo + chunk], cols[lo:lo + chunk]
        e = np.zeros((r.size, n, n))
        e[np.arange(r.size), r, c] = 1.0
        e[np.arange(r.size), c, r] = 1.0
        d1 = np.nan_to_num(taylor_scores(n, fw.layers, cfg, e, token_map=False, scale=fw.scale).c1)  # (K, L, n, n)
        part = (d1[:, lay, row, cj] - d1[:, lay, row, ck]).T * np.where(r == c, 1.0, 0.5)  # (keys, K)
        grad[:, r, c] = part
        grad[:, c, r] = part
    a = grad @ g0
    trace3 = np.einsum("kab,kbc,kca->k", a, a, a)
    f2 = np.empty(len(keys))
    for lo in range(0, len(keys), chunk):
        sl = slice(lo, lo + chunk)
        d2 = np.nan_to_num(taylor_scores(n, fw.layers, cfg, g0 @ grad[sl] @ g0, token_map=False,
                                         scale=fw.scale).c2)
        s = np.arange(d2.shape[0])
        f2[sl] = d2[s, lay[sl], row[sl], cj[sl]] - d2[s, lay[sl], row[sl], ck[sl]]
    return (trace3, f2) if parts else 8.0 * trace3 + 24.0 * f2


# --------------------------------------------------------------------------------------------------
# The independent route: finite differences in mpmath
# --------------------------------------------------------------------------------------------------
def finite_difference_c(n: int, layers: int, *, config: ModelConfig | None = None, dps: int = 60,
                        step: str = "1e-15", **params: Any) -> np.ndarray:
    """c by central second differences of the mpmath limit recursion along every Wishart direction:
    F2[v] = (F(G0 + h v) - 2 F(G0) + F(G0 - h v)) / (2 h^2), truncation O(h^2) = 1e-30, rounding
    ~10^-dps / h^2 = 1e-30. Slow (2 n(n+1)/2 + 3 mpmath recursions): small n only. Returns floats."""
    from lnrecency.theory.limit import iterate_limit, limit_backend

    n = check_int("n", n, minimum=1, maximum=12)
    layers = check_int("layers", layers, minimum=1, maximum=8)
    cfg = make_config(config, **params)
    ar = limit_backend(dps, False)
    with mpmath.workdps(dps):
        h = mpmath.mpf(step)
        a = ar.number(cfg.alpha)
        g0 = np.array([[mpmath.mpf(1) if p == q else a for q in range(n)] for p in range(n)], dtype=object)
        bm = mpmath.cholesky(mpmath.matrix(g0.tolist()))
        b = np.array(bm.tolist(), dtype=object)

        def scores(g, token_map=True):
            g = to_first_gram(g, cfg, ar) if token_map else g
            return np.stack([lay.scores for lay in iterate_limit(n, layers, cfg, ar, last_output=False,
                                                                  gram=g)])

        base = scores(g0)
        total = np.zeros((layers, n, n), dtype=object)
        total[...] = mpmath.mpf(0)
        for p in range(n):
            for q in range(p, n):
                outer = np.multiply.outer(b[:, p], b[:, q])
                v = outer if p == q else outer + outer.T
                w = 2 if p == q else 1
                total = total + w * (scores(g0 + h * v) - 2 * base + scores(g0 - h * v)) / (2 * h * h)
        if cfg.normalisation.removed:
            total = total - cfg.normalisation.removed * (
                scores(g0 + h * g0, False) - scores(g0 - h * g0, False)) / (2 * h)
        out = np.array([[[float(x) if p >= q else np.nan for q, x in enumerate(row)] for p, row in enumerate(lay)]
                        for lay in total])
    return out
