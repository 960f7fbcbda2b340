"""The exact d -> infinity limit of the parameter-free causal attention stack (docs/model.md, "The d -> infinity
limit").

As d -> infinity every inner product of the state concentrates, and the Gram matrix G = (<h_i, h_j>)
follows a deterministic recursion on n x n matrices:

    G^(1) = (1 - alpha) I + alpha 1 1^T                                   (input embeddings)
    D = diag(G),  Gh = D^(-1/2) G D^(-1/2)      (norm = "none": D = I, Gh = G)
    S = lam * Gh  on j <= i,   P = causal row softmax of S                 (scores, weights)
    B = P D^(-1/2),  O = B G B^T = P Gh P^T                                (attention-output Gram)
    G' = O  (no residual)   or   G' = (I + gamma B) G (I + gamma B)^T
                                    = G + gamma (B G + (B G)^T) + gamma^2 O   (residual)

l2, rmsnorm and layernorm have the same limit (LayerNorm's centring is an O(1/d) effect).

One recursion, three number systems: float64 (numpy), mpmath at ``dps`` significant digits, and exact
sympy arithmetic (small n; used by the closed-form checks). Positions are 1-indexed in the math and
0-indexed in arrays: ``scores[l - 1, i - 1, j - 1]`` is S^(l)_ij.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator

import mpmath
import numpy as np
import sympy

from lnrecency.model.config import ModelConfig, make_config
from lnrecency.model.layers import Arithmetic, arithmetic, causal_mask
from lnrecency.runtime.arguments import check_int, is_bool
from lnrecency.runtime.memory import available_memory

__all__ = ["LimitLayer", "LimitTrajectory", "limit_scores", "limit_trajectory", "iterate_limit",
           "Float64Overflow", "check_finite"]


MAX_DPS = 10_000
ALWAYS_AVAILABLE = 64 * 2**20  # bytes below which check_memory does not query the system


def limit_backend(dps: Any, exact: bool) -> Arithmetic:
    if dps is not None:
        check_int("dps", dps, minimum=2, maximum=MAX_DPS)
    return arithmetic(dps, exact)


def check_memory(n: int, layers: int, dps: Any = None, exact: bool = False) -> None:
    """Refuse (MemoryError, before any allocation) a recursion whose arrays exceed the available memory:
    about (layers + 8) n x n arrays, 8 bytes an entry in float64 and ~(120 + dps/2) bytes an object."""
    per = 8 if dps is None and not exact else 120 + (dps or 50) // 2 + (400 if exact else 0)
    need = (layers + 8) * n * n * per
    if need <= ALWAYS_AVAILABLE:
        return  # not worth asking the system (it costs more than such a recursion)
    limit = available_memory()
    if need > limit:
        raise MemoryError(f"the limit recursion at n={n}, layers={layers}"
                          + (f", dps={dps}" if dps else "") + f" needs about {need / 2**20:.0f} MiB, more "
                          f"than the available {limit / 2**20:.0f} MiB; use a smaller n")


MAX_SECONDS = 20.0  # one float64 limit recursion; refused above (before any work)
MAX_SECONDS_PRECISE = 300.0  # mpmath / sympy: slow by nature, used for certification at moderate n


#: the float64 cost model, fitted by benchmarks/fit_limit_cost.py on this project's 2-core machine (n = 32..2048,
#: 1-4 layers, and n = 2..64 at 200-10000 layers; data in benchmarks/limit_cost.json):
#: seconds = (a + b n^2) layers + c n^3 (layers - 1)
FLOAT64_COST = (1.66e-05, 1.77e-08, 4.28e-11)
#: the estimate is the fit times this margin: a loaded machine (the audit of issue 33 measured 2.5-4x the
#: quiet timings under load) is then at 0.4-0.6x, a quiet one at 1-2x
LOAD_MARGIN = 1.5
#: mpmath: seconds per layer and n^3 at 0 digits (times 1 + dps/100), fitted at dps = 40, n = 16..64, 2 layers
#: (benchmarks/bench_estimates.py: 1.03e-6 at dps = 40; the earlier 6e-6 was 6-10x too high)
MPMATH_COST = 7.4e-7
#: sympy (exact): its cost grows with the nesting of exp and sqrt from layer to layer, and with the parameters'
#: arithmetic, so it is modelled per depth and parameter class from timings on this project's 2-core machine
#: (benchmarks/bench_estimates.py): 1 layer a + b n^2; 2 layers c n^p, (c, p) for alpha = 0 (G^(1) = I) and for
#: alpha != 0 (binary-exact floats; 0.2 with a residual: 0.25 s at n = 4, 4.7 s at n = 16, 8.5-12 s at n = 24);
#: 3 layers only at n <= 2 (n = 2: 0.2 s at alpha = 0, 6.6 s at alpha = 0.2; n = 3 takes 3 s at alpha = 0 and
#: 96 s at alpha = 0.2; n = 5 takes 54 s at alpha = 0)
SYMPY_COST = {"ONE": (2e-3, 1e-5), "TWO_SIMPLE": (0.011, 1.55), "TWO_GENERAL": (0.012, 2.2),
              "THREE_SIMPLE": 0.2, "THREE_GENERAL": 6.6}
#: where the sympy model was measured (beyond: refused, mpmath at high dps gives the same decisions)
SYMPY_MAX_N = {1: 256, 2: 24, 3: 2}


def _sympy_seconds(n: int, layers: int, alpha: Any = None) -> float:
    c = SYMPY_COST
    if layers == 1:
        return c["ONE"][0] + c["ONE"][1] * n ** 2
    if layers == 2:
        k, p = c["TWO_SIMPLE"] if alpha == 0 else c["TWO_GENERAL"]
        return k * n ** p
    return c["THREE_SIMPLE" if alpha == 0 else "THREE_GENERAL"] * (n / 2) ** 6 * 30 ** (layers - 3)


def estimate_seconds(n: int, layers: int, dps: Any = None, exact: bool = False, alpha: Any = None) -> float:
    """Time of the recursion on this project's 2-core machine. float64: LOAD_MARGIN x the fitted
    FLOAT64_COST model (layer 1 has no n^3 term); mpmath: LOAD_MARGIN x per layer (1.5e-4 s + MPMATH_COST n^3
    (1 + dps/100)); sympy: SYMPY_COST by depth and by ``alpha`` (0 or not; None: not)."""
    if dps is None and not exact:
        a, b, c = FLOAT64_COST
        return LOAD_MARGIN * ((a + b * n ** 2) * layers + c * n ** 3 * (layers - 1))
    if exact:
        return _sympy_seconds(n, layers, alpha)
    return LOAD_MARGIN * layers * (1.5e-4 + MPMATH_COST * n ** 3 * (1 + dps / 100))


def check_time(n: int, layers: int, dps: Any = None, exact: bool = False, alpha: Any = None) -> None:
    """Refuse (ValueError, before any work) a recursion estimated above its time limit (MAX_SECONDS for
    float64, MAX_SECONDS_PRECISE for mpmath and sympy; ``--max-seconds`` changes both, lnrecency.runtime.timelimit),
    and exact arithmetic beyond the sizes its cost model was measured on (SYMPY_MAX_N)."""
    from lnrecency.runtime.timelimit import refusal, time_limit

    if exact and n > SYMPY_MAX_N.get(layers, 0):
        raise ValueError(f"exact (sympy) arithmetic at n={n}, layers={layers} is beyond the sizes its cost was "
                         f"measured on (n <= {SYMPY_MAX_N.get(layers, 0)} at this depth; its time grows with the "
                         f"nesting of exp and sqrt, e.g. 3 layers at n = 3 take 3-96 s); use dps= (mpmath) instead")
    t = estimate_seconds(n, layers, dps, exact, alpha)
    limit = time_limit(MAX_SECONDS if dps is None and not exact else MAX_SECONDS_PRECISE)
    if t > limit:
        raise refusal(f"the limit recursion at n={n}, layers={layers}" + (f", dps={dps}" if dps else "")
                      + (" (exact)" if exact else ""), t, limit, "use fewer layers or a smaller n")


@dataclass(frozen=True)
class LimitLayer:
    """Everything layer l computes in the limit (arrays n x n, 0-indexed).

    gram:        G^(l), Gram matrix of the layer's input state h^(l)
    normalised_gram:  Gh^(l) = D^(-1/2) G D^(-1/2) (= G without normalisation)
    scores:      S^(l) = lam * Gh on j <= i, NaN above the diagonal
    weights:     P^(l), causal softmax of S (zeros above the diagonal)
    output_gram: O^(l) = Gram of the attention outputs o_i = sum_k P_ik N(h_k)
    next_gram:   G^(l+1), Gram of the next state (O, or with the residual added)
    """

    layer: int
    gram: np.ndarray
    normalised_gram: np.ndarray
    scores: np.ndarray
    weights: np.ndarray
    output_gram: np.ndarray
    next_gram: np.ndarray

    @property
    def output_norms(self) -> np.ndarray:
        """|o_i| = sqrt(O_ii)."""
        return _sqrt_vec(np.diagonal(self.output_gram))

    @property
    def state_norms(self) -> np.ndarray:
        """|h_i| = sqrt(G_ii) of the layer's input state."""
        return _sqrt_vec(np.diagonal(self.gram))


def _sqrt_vec(d: np.ndarray) -> np.ndarray:
    if d.dtype != object:
        return np.sqrt(d)
    return np.array([sympy.sqrt(x) if isinstance(x, sympy.Basic) else mpmath.sqrt(x) for x in d],
                    dtype=object)


def input_gram(n: int, alpha: Any, backend: Arithmetic) -> np.ndarray:
    """G^(1) = G0 = (1 - alpha) I + alpha 1 1^T."""
    a = backend.number(alpha)
    one = backend.number(1)
    g = np.full((n, n), a, dtype=backend.dtype)
    np.fill_diagonal(g, one)
    return g


def iterate_limit(n: int, layers: int, config: ModelConfig, backend: Arithmetic, *,
                  last_output: bool = True, gram: Any = None, sink: Any = None) -> Iterator[LimitLayer]:
    """Yield :class:`LimitLayer` for l = 1..layers: the recursion of the shared layer definitions
    (:mod:`lnrecency.model.layers`) on Gram matrices, the single implementation.

    ``gram``: the input Gram matrix (default G0 = E X X^T); any other start gives the scores of that
    configuration of tokens exactly (the finite-width theory starts it at a draw, or at a jet).
    ``last_output=False`` skips the last layer's output and next state (``output_gram`` and
    ``next_gram`` are then None there): the scores of layers 1..L need only L - 1 updates.
    ``sink``: a logit bonus b added to key 1 in every layer's softmax (an attention sink, as trained decoders give
    their first token; :mod:`lnrecency.theory.sink`); the scores reported stay lam Gh, without it.
    """
    mask = causal_mask(n)
    lam = backend.number(config.lam)
    gamma = backend.number(config.gamma)
    norm, update = config.normalisation, config.update
    g = input_gram(n, config.alpha, backend) if gram is None else gram
    for layer in range(1, layers + 1):
        gh, inv = norm.gram(g, backend)
        s = lam * gh
        if sink is None:
            p = backend.causal_softmax(s, mask)
        else:
            biased = s.copy()
            biased[:, 0] = biased[:, 0] + backend.number(sink)
            p = backend.causal_softmax(biased, mask)
        scores = backend.masked_scores(s, mask)
        if layer == layers and not last_output:
            yield LimitLayer(layer, g, gh, scores, p, None, None)
            return
        b = p * inv[..., None, :] if inv is not None else p  # a batch of Gram matrices too (theory.anisotropy)
        o, g_next = update.gram(g, b, gamma)
        yield LimitLayer(layer, g, gh, scores, p, o, g_next)
        g = g_next


def _prepare(n: Any, layers: Any, config: ModelConfig | None, params: dict, dps: Any, exact: bool):
    n = check_int("n", n, minimum=1)
    layers = check_int("layers", layers, minimum=1)
    cfg = make_config(config, **params)
    if not is_bool(exact):
        raise ValueError(f"exact must be True or False; got {exact!r}")
    exact = bool(exact)
    backend = limit_backend(dps, exact)
    check_memory(n, layers, dps, exact)
    check_time(n, layers, dps, exact, cfg.alpha)
    return n, layers, cfg, backend


def _run(n: int, layers: int, cfg: ModelConfig, backend: Arithmetic, dps: int | None,
         last_output: bool) -> tuple[LimitLayer, ...]:
    """All layers, in mpmath's working precision ``dps`` when given (float64: overflow is not warned
    about here; :func:`check_finite` refuses a non-finite result with advice instead)."""
    context = mpmath.workdps(dps) if dps is not None else np.errstate(over="ignore", invalid="ignore")
    with context:
        return tuple(iterate_limit(n, layers, cfg, backend, last_output=last_output))


@dataclass(frozen=True)
class LimitTrajectory:
    """All layers of the limit: ``layers[l - 1]`` is layer l; stacked views by attribute."""

    n: int
    config: ModelConfig
    backend: str
    dps: int | None
    layers: tuple[LimitLayer, ...]

    def _stack(self, field: str) -> np.ndarray:
        return np.stack([getattr(layer, field) for layer in self.layers])

    @property
    def scores(self) -> np.ndarray:
        return self._stack("scores")

    @property
    def weights(self) -> np.ndarray:
        return self._stack("weights")

    @property
    def grams(self) -> np.ndarray:
        return self._stack("gram")

    @property
    def output_grams(self) -> np.ndarray:
        return self._stack("output_gram")

    @property
    def output_norms(self) -> np.ndarray:
        return np.stack([layer.output_norms for layer in self.layers])


def limit_trajectory(n: int, layers: int, *, config: ModelConfig | None = None, dps: int | None = None,
                     exact: bool = False, **params: Any) -> LimitTrajectory:
    """Run the limit recursion and keep every per-layer quantity (see :class:`LimitLayer`).

    ``dps=k``: mpmath at k significant digits (object arrays of ``mpf``); ``exact=True``: sympy.
    Model parameters come from ``config`` and/or keywords (norm, residual, gamma, lam, alpha).
    """
    n, layers, cfg, backend = _prepare(n, layers, config, params, dps, exact)
    return LimitTrajectory(n, cfg, backend.name, dps, _run(n, layers, cfg, backend, dps, True))


def limit_scores(n: int, layers: int, *, config: ModelConfig | None = None, dps: int | None = None,
                 exact: bool = False, **params: Any) -> np.ndarray:
    """Expected scores E[S^(l)_ij] in the d -> infinity limit, l = 1..layers.

    Returns a float64 array of shape (layers, n, n), NaN above the diagonal (``[l-1, i-1, j-1]`` is
    S^(l)_ij). With ``dps=k`` the recursion runs in mpmath at k significant digits and an object
    array of ``mpmath.mpf`` is returned (same indexing). The model comes from ``config`` or from
    keywords (norm, residual, gamma, lam, alpha), not both (:func:`lnrecency.model.config.make_config`).
    ``exact=True``: sympy (parameters may be sympy rationals and surds, ``Fraction`` or mpmath numbers,
    taken at their exact binary value); an object array of sympy expressions.
    """
    n, layers, cfg, backend = _prepare(n, layers, config, params, dps, exact)
    scores = np.stack([np.asarray(layer.scores, dtype=object if (exact or dps) else float)
                       for layer in _run(n, layers, cfg, backend, dps, False)])
    if dps is None and not exact:
        check_finite(scores, cfg)
    return scores


class Float64Overflow(ValueError):
    """The float64 recursion left the float64 range (the mpmath path has no such limit)."""


def check_finite(scores: np.ndarray, cfg: ModelConfig) -> None:
    """Raise :class:`Float64Overflow` if a score on or below the diagonal is not finite."""
    low = np.tril(np.ones(scores.shape[-2:], dtype=bool))
    bad = ~np.isfinite(scores[..., low])
    if bad.any():
        raise Float64Overflow(
            f"the float64 limit overflows for {cfg.label()} ({int(bad.sum())} scores are not finite): "
            f"rerun in mpmath (limit_scores(..., dps=30), lnrecency limit --dps 30)")
