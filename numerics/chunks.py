"""One chunk of Monte Carlo samples: its draws pushed through the layers in cache-sized batches, its moment sums
(and control-variate sums), and their accumulation in chunk order, so that the result does not depend on the
number of workers."""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any

import numpy as np

from lnrecency.model.config import ModelConfig
from lnrecency.numerics.forward import forward
from lnrecency.numerics.moments import Moments, moments
from lnrecency.numerics.orderings import accumulate, mirror, ordering_counts
from lnrecency.numerics.samplers import Representation, draw_range, embed, theory_gram
from lnrecency.numerics.workspace import buffer

#: working bytes one pass of a sub-batch through a layer may take (a few MiB: its arrays stay in the cache), within
#: [FORWARD_BATCH_MIN, FORWARD_BATCH_MAX] draws: long sequences (the authors' n = 50) pass 32 draws at once, short
#: ones up to 512, where the per-pass Python overhead dominates. Per draw, one thread, against a fixed 32:
#: benchmarks/bench_mc.py --sections batches. The result does not depend on it beyond float rounding (the moments
#: are summed per sub-batch); it depends on n and the coordinates only, never on the workers.
FORWARD_BATCH_BYTES = 4 * 2**20
FORWARD_BATCH_MIN, FORWARD_BATCH_MAX = 32, 512


def forward_bytes(n: int, dim: int) -> int:
    """Working bytes per sample of a pass through a layer (~6 state / score arrays)."""
    return 8 * 6 * (n * dim + n * n)


def forward_batch(n: int, dim: int) -> int:
    """Samples per pass through the layers at sequence length ``n`` in ``dim`` coordinates: as many as
    FORWARD_BATCH_BYTES holds, within [FORWARD_BATCH_MIN, FORWARD_BATCH_MAX]."""
    return int(min(FORWARD_BATCH_MAX, max(FORWARD_BATCH_MIN, FORWARD_BATCH_BYTES // forward_bytes(n, dim))))


JET_BUDGET_BYTES = 64 * 2**20  # working memory of one batch of control-variate jets


def run_chunks(pool, work, starts, chunk: int, samples: int, acc: "Accumulator", bar, *, window: int) -> None:
    """Submit chunks to ``pool`` (at most ``window`` in flight) and merge them in chunk order: the result
    does not depend on where or in which order the chunks ran."""
    pending: deque = deque()
    try:
        for s0 in starts:
            pending.append(pool.submit(work, s0, min(s0 + chunk, samples)))
            if len(pending) >= window:
                c = pending.popleft().result()
                acc.merge(c)
                bar.update(c.count)
        while pending:
            c = pending.popleft().result()
            acc.merge(c)
            bar.update(c.count)
    except BaseException:
        for f in pending:
            f.cancel()
        raise


@dataclass
class ChunkSummary:
    """Moments of one chunk of samples: computed independently, merged in chunk order."""

    count: int
    score_mean: np.ndarray  # (layers, n, n)
    score_m2: np.ndarray
    osq: tuple[np.ndarray, np.ndarray]  # (mean, M2) of |o|^2, (layers, n)
    ovar: tuple[np.ndarray, np.ndarray]  # (mean, M2) of |o - mean(o)|^2 / d
    cross: np.ndarray | None  # (layers, n, n, n): sum_b dev_ij dev_ik within the chunk; only j <= k is read
    greater: np.ndarray | None  # (layers, n, n, n): #(S_ij > S_ik) within the chunk
    recency: tuple[np.ndarray, np.ndarray] | None  # (mean, M2) over draws of the per-draw RP, (layers,)


def layer_moments(s: np.ndarray, paired: bool, raw: np.ndarray | None = None, *,
                  cross: np.ndarray | None = None, greater: np.ndarray | None = None):
    """Mean, M2, row cross-moments, greater-counts and per-draw recency counts of one layer's chunk of
    scores s (b, n, n).

    ``raw``: the unadjusted scores when ``s`` is control-variate adjusted (the counts of S_ij > S_ik
    are per-instance events and use the raw scores). The per-draw recency count is the number of
    triples j < k < i with S_ik > S_ij (keys strictly below the query; :func:`recency_triples`).
    ``cross`` (float64) and ``greater`` (int64), zeros of shape (n, n, n): where the cross moments and the
    counts are written (a layer's slice of the chunk's arrays: no copy)."""
    n = s.shape[1]
    mean = s.mean(axis=0)
    dev = s - mean
    if not paired:
        return mean, np.einsum("bij,bij->ij", dev, dev), None, None, None
    cross = np.zeros((n, n, n)) if cross is None else cross
    for i in range(n):  # per row i: sum_b dev_ij dev_ik, j, k <= i (0 elsewhere)
        v = dev[:, i, : i + 1]
        np.matmul(v.T, v, out=cross[i, : i + 1, : i + 1])
    greater, recent = ordering_counts(s if raw is None else raw, greater=greater)
    return mean, np.einsum("ijj->ij", cross), cross, greater, recent


def control_variate_sums(raw: np.ndarray, rep: Representation, config: ModelConfig, layers: int,
                     taylor_mean: np.ndarray | None) -> np.ndarray:
    """Y - E Y per draw, shape (layers, b, n, n), from jets of the shared layer definitions.

    "quadratic" (``taylor_mean`` given): Y = F1[E] + F2[E], the second-order Taylor polynomial of the
    scores in the draw's input-Gram deviation E = W - G0, with E Y known exactly
    (FiniteWidth.taylor_mean, which uses c). "linear" (``taylor_mean`` None): Y = F1[W - G0] on the
    uncentred Gram W ~ Wishart(d, G0/d), whose mean is exactly 0 whatever c is (the estimator can
    validate c)."""
    from lnrecency.theory.width_jets import taylor_scores

    g0 = np.full((rep.n, rep.n), float(config.alpha))
    np.fill_diagonal(g0, 1.0)
    out = np.empty((layers, raw.shape[0], rep.n, rep.n))
    step = max(FORWARD_BATCH_MIN, JET_BUDGET_BYTES // (8 * 40 * layers * rep.n * rep.n))
    for lo in range(0, raw.shape[0], step):  # jets hold ~40 (batch, n, n) arrays per layer
        hi = min(lo + step, raw.shape[0])
        w = theory_gram(raw[lo:hi], config, rep.d, rep.u, centred=taylor_mean is not None)
        jet = taylor_scores(rep.n, layers, config, w - g0)
        y = np.nan_to_num(jet.c1) if taylor_mean is None else jet.c1 + jet.c2 - taylor_mean
        out[:, lo:hi] = y.swapaxes(0, 1)
    return out


def summarise_chunk(rep: Representation, seed: Any, config: ModelConfig, layers: int, paired: bool,
                     cv: str, taylor_mean: np.ndarray | None, start: int, stop: int) -> ChunkSummary:
    """Draw samples [start, stop), run the stack, return the chunk's moments.

    The stack runs on sub-batches of :func:`forward_batch` samples (their arrays stay in the CPU cache); the
    moments are then taken over the whole chunk (the per-row counting loop prefers long rows).
    With a control variate (``cv`` "linear" or "quadratic") the score moments are those of
    S - (Y - E Y).
    """
    if cv == "none":
        raw = draw_range(rep, seed, start, stop, out=buffer("raw", (stop - start, rep.m, rep.dim)))
        return _streamed_chunk(raw, rep, config, layers, paired)
    raw = draw_range(rep, seed, start, stop)
    x = embed(raw, config, rep.d)
    b, n, u = stop - start, rep.n, rep.u
    scores = np.empty((layers, b, n, n))
    osq, oproj = np.empty((b, layers, n)), np.empty((b, layers, n))
    step = forward_batch(n, rep.dim)
    for lo in range(0, b, step):
        hi = min(lo + step, b)
        for layer, (s, o) in enumerate(forward(x[lo:hi], config, layers, u)):
            scores[layer, lo:hi] = s
            osq[lo:hi, layer] = np.einsum("bnd,bnd->bn", o, o)
            oproj[lo:hi, layer] = o @ u
    cross = np.zeros((layers, n, n, n)) if paired else [None] * layers
    greater = np.zeros((layers, n, n, n), dtype=np.int64) if paired else [None] * layers
    adjusted = scores if cv == "none" else scores - control_variate_sums(raw, rep, config, layers, taylor_mean)
    mean, m2, _, _, recent = zip(*(layer_moments(a, paired, None if cv == "none" else s, cross=c, greater=g)
                                   for a, s, c, g in zip(adjusted, scores, cross, greater)))
    triples = recency_triples(n)
    rp = moments(np.stack(recent, axis=1) / triples) if paired and triples else None
    return ChunkSummary(b, np.stack(mean), np.stack(m2), moments(osq),
                         moments((osq - oproj * oproj) / rep.d),
                         cross if paired else None, greater if paired else None, rp)


def _streamed_chunk(raw: np.ndarray, rep: Representation, config: ModelConfig, layers: int,
                    paired: bool) -> ChunkSummary:
    """The chunk's moments without holding its scores: each sub-batch's scores are summed as they come out of
    the layers, while in the cache (no (layers, b, n, n) array, and no second pass over it from memory). The
    sums are of deviations from a reference, the mean of the first sub-batch (close to the chunk mean, so the
    centring at the end cancels little): mean = ref + S1 / b, M2 = S2 - S1^2 / b, and the row cross moments
    the same way (upper halves j <= k: Accumulator.cross_moments mirrors them once). Each sub-batch is embedded
    as it enters the layers (the same numbers as embedding the chunk: the embedding works token by token)."""
    b, n, u = raw.shape[0], rep.n, rep.u
    ref = np.empty((layers, n, n))
    sum1 = np.zeros((layers, n, n))
    second = np.zeros((layers, n, n, n) if paired else (layers, n, n))
    greater = np.zeros((layers, n, n, n), dtype=np.int64) if paired else None
    recent = np.zeros((layers, b), dtype=np.int64) if paired else None
    osq, oproj = np.empty((b, layers, n)), np.empty((b, layers, n))
    step = forward_batch(n, rep.dim)
    for lo in range(0, b, step):
        hi = min(lo + step, b)
        x = embed(raw[lo:hi], config, rep.d, out=buffer("x", (hi - lo, n, rep.dim)))
        for layer, (s, o) in enumerate(forward(x, config, layers, u, reuse=True)):
            if lo == 0:
                ref[layer] = s.mean(axis=0)
            if paired:
                accumulate(s, ref[layer], sum1[layer], second[layer], greater[layer], recent[layer, lo:hi])
            else:
                dev = s - ref[layer]
                sum1[layer] += dev.sum(axis=0)
                second[layer] += np.einsum("bij,bij->ij", dev, dev)
            osq[lo:hi, layer] = np.einsum("bnd,bnd->bn", o, o)
            oproj[lo:hi, layer] = o @ u
    shift = sum1 / b
    mean = ref + shift
    if paired:
        cross = second
        cross -= b * shift[..., :, None] * shift[..., None, :]  # row i: centred at the chunk mean
        m2 = np.einsum("lijj->lij", cross).copy()
    else:
        cross, m2 = None, second - b * shift * shift
    triples = recency_triples(n)
    rp = moments(recent.T / triples) if paired and triples else None
    return ChunkSummary(b, mean, m2, moments(osq), moments((osq - oproj * oproj) / rep.d), cross, greater, rp)


class Accumulator:
    """Chan merge of chunk summaries (numerics.moments); cross moments get the same delta correction. The
    cross moments are kept in their upper halves j <= k (a chunk's lower half need not be filled):
    :meth:`cross_moments` mirrors them once."""

    def __init__(self, n: int, layers: int, paired: bool):
        self.scores = Moments((layers, n, n))
        self.osq = Moments((layers, n))
        self.ovar = Moments((layers, n))
        self.cross = np.zeros((layers, n, n, n)) if paired else None
        self.greater = np.zeros((layers, n, n, n), dtype=np.int64) if paired else None
        self.recency = Moments((layers,)) if paired and recency_triples(n) else None

    def merge(self, c: ChunkSummary) -> None:
        count_before = self.scores.count
        delta = self.scores.merge(c.count, c.score_mean, c.score_m2)
        self.osq.merge(c.count, *c.osq)
        self.ovar.merge(c.count, *c.ovar)
        if self.recency is not None:
            self.recency.merge(c.count, *c.recency)
        if self.cross is not None:
            # C_i = C_i^(a) + C_i^(b) + delta_i delta_i^T n_a n_b / n  (delta_i: row i of the mean shift)
            self.cross += c.cross
            factor = count_before * c.count / self.scores.count
            for cross, d in zip(self.cross, delta):  # a layer at a time: its outer product stays in the cache
                cross += d[:, :, None] * (d[:, None, :] * factor)
            self.greater += c.greater

    def cross_moments(self) -> np.ndarray | None:
        """The full symmetric row cross moments (layers, n, n, n), from the upper halves (a new array)."""
        return None if self.cross is None else mirror(self.cross)


def recency_triples(n: int) -> int:
    """Number of triples j < k < i <= n: n (n - 1) (n - 2) / 6."""
    return n * (n - 1) * (n - 2) // 6
