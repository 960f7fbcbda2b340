"""Finite-width Monte Carlo of the expected scores E_d[S^(l)_ij] (docs/model.md, "Model"), streamed in float64.

``simulate_scores`` draws ``samples`` iid instances of the model at width d, runs the attention stack
(:mod:`lnrecency.numerics.forward` on the shared layer definitions, for both samplers) and accumulates, chunk by chunk
(Chan merging,
:mod:`numerics.moments`), per layer:
  * mean and standard error of every score S_ij (j <= i);
  * mean and SE of |o_i|^2 (attention output before residual / next normalisation; docs/model.md, claim C7) and of
    its per-coordinate variance |o_i - mean(o_i)|^2 / d = (|o_i|^2 - <u, o_i>^2) / d (claim 8);
  * paired accumulators (``paired=True``): per row i the centred cross moments
    C_ijk = sum_samples (S_ij - mean_ij)(S_ik - mean_ik), j, k <= i, giving the within-sample SE of
    S_ij - S_ik: Var = (C_ijj + C_ikk - 2 C_ijk) / (N - 1); and the counts of S_ij > S_ik (claim 9).
    They take 16 * layers * n^3 bytes; a run whose estimated peak memory exceeds ``memory_limit``
    raises MemoryError before any work (pass paired=False to drop them).

Peak memory is independent of ``samples``: O(16 L n^3) accumulators + one chunk of working arrays per
worker (:func:`estimate_memory`). Chunks of samples are independent (own RNG blocks, see
:mod:`numerics.samplers`), processed by ``workers`` threads and merged in chunk order, so the bytes of
the result do not depend on the number of threads.
"""
from __future__ import annotations

import math
import numbers
import os
import sys
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np

from lnrecency.inference.stats import Estimate, Proportion
from lnrecency.model.config import ModelConfig, make_config
from lnrecency.model.layers import check_rotation_invariance
from lnrecency.numerics.chunks import (
    FORWARD_BATCH_MIN,
    JET_BUDGET_BYTES,
    Accumulator,
    forward_batch,
    forward_bytes,
    run_chunks,
    summarise_chunk,
)
from lnrecency.numerics.forward import forward
from lnrecency.numerics.precision import (
                                          ANNOUNCE_SECONDS,
                                          MAX_SECONDS,
                                          PrecisionPlan,
                                          _check_control_variate,
                                          cost,
                                          estimate_seconds,
)
from lnrecency.numerics.samplers import Representation, draw_range, embed
from lnrecency.numerics.workspace import release
from lnrecency.runtime.arguments import check_choice, check_int
from lnrecency.runtime.child import one_blas_thread
from lnrecency.runtime.memory import available_memory

__all__ = ["ScoreSimulation", "simulate_scores", "Instances", "sample_instances", "estimate_memory",
           "METHODS", "CHUNK_BUDGET_BYTES"]

METHODS = ("direct", "gram")


#: working memory aimed at by the default chunk (the estimate; the default path, which sums each layer's scores as
#: they come out, holds about half of it). At the authors' setting this gives 340 draws a chunk: measured 12.2-12.8 s
#: per 100000 draws at 320 against 13.8-14.0 s at 160 and 12.5 s at 400-480 (each chunk allocates and merges its
#: 8 MB of paired sums once, whatever its size)
CHUNK_BUDGET_BYTES = 64 * 2**20


def _per_sample_bytes(n: int, dim: int, layers: int) -> int:
    """Working bytes of one sample in a chunk: raw draws and embeddings, the layers' scores and output norms, the moment
    pass (2 score-sized arrays; the numpy ordering counts' bool and float32 comparison rows, 5 bytes per score)."""
    m = n + 1
    return 8 * (2 * m * dim + layers * n * n + 3 * layers * n + 2 * n * n) + 5 * n * n


def estimate_memory(n: int, layers: int, d: int, *, method: str = "gram", chunk: int = 1,
                    paired: bool = True, workers: int = 1, control_variate: bool | str = False) -> int:
    """Estimated peak bytes of simulate_scores: the accumulators and the chunk summaries in flight
    (16 * layers * n^3 bytes each when paired), and per worker one chunk of working arrays, one pass of
    min(chunk, forward_batch) samples through a layer and two RNG blocks; with a control variate, per
    worker the adjusted chunk and one batch of jets. Independent of ``samples``."""
    rep = Representation(n, d, method)
    acc = 8 * 3 * layers * n * n + 8 * 8 * layers * n + (16 * layers * n ** 3 if paired else 0)
    in_flight = 1 if workers == 1 else 2 * workers
    block = rep.block_size() * 8 * rep.m * rep.dim
    per_worker = (chunk * _per_sample_bytes(n, rep.dim, layers) + 2 * block
                  + min(chunk, forward_batch(n, rep.dim)) * forward_bytes(n, rep.dim))
    if _check_control_variate(control_variate) != "none":
        per_worker += 2 * chunk * 8 * layers * n * n + max(
            JET_BUDGET_BYTES, FORWARD_BATCH_MIN * 8 * 40 * layers * n * n)
    return acc * (1 + in_flight) + workers * per_worker


def _default_workers() -> int:
    """CPUs available to this process (at most 4); BLAS is held to one thread during a run (runtime.child.
    one_blas_thread: BLAS threads slow the many small products here down, measured 3x, up to 50x under load)."""
    return max(1, min(4, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                      else os.cpu_count() or 1))


def _check_seed(seed: Any) -> int | tuple[int, ...]:
    bad = ValueError(f"seed must be a non-negative integer or a sequence of them; got {seed!r}")
    if isinstance(seed, numbers.Integral) and not isinstance(seed, bool):
        if seed < 0:
            raise bad
        return int(seed)
    if isinstance(seed, (tuple, list)) and seed and all(
            isinstance(s, numbers.Integral) and not isinstance(s, bool) and s >= 0 for s in seed):
        return tuple(int(s) for s in seed)
    raise bad


@dataclass(frozen=True)
class ScoreSimulation:
    """Monte Carlo estimates of E_d[S^(l)_ij]; arrays (layers, n, n), NaN above the diagonal.
    ``[l-1, i-1, j-1]`` is S^(l)_ij; methods take 1-indexed (layer, i, j, k)."""

    mean: np.ndarray
    stderr: np.ndarray
    samples: int
    d: int
    seed: int | tuple[int, ...] | None
    method: str
    config: ModelConfig
    chunk: int
    representation: str  # "direct" (coordinates of R^d) or "bartlett" (d-independent)
    control_variate: str  # one of numerics.precision.CONTROL_VARIATES
    output_sq_norm_mean: np.ndarray
    output_sq_norm_stderr: np.ndarray
    output_var_mean: np.ndarray
    output_var_stderr: np.ndarray
    cross_moments: np.ndarray | None = field(default=None, repr=False)  # C[l, i, j, k] or None
    greater_counts: np.ndarray | None = field(default=None, repr=False)  # #(S_ij > S_ik) or None
    recency_mean: np.ndarray | None = None  # (layers,) mean over draws of the per-draw RP, or None
    recency_stderr: np.ndarray | None = None
    plan: PrecisionPlan | None = None  # with se=: what the pilots measured and chose (numerics.precision)
    draws: int | None = None  # every draw the call made: ``samples``, and with se= the pilots' and earlier rounds'

    @property
    def layers(self) -> int:
        return self.mean.shape[0]

    @property
    def n(self) -> int:
        return self.mean.shape[1]

    @property
    def paired(self) -> bool:
        return self.cross_moments is not None

    def _index(self, layer: int, i: int, *cols: int) -> tuple[int, ...]:
        check_int("layer", layer, minimum=1, maximum=self.layers)
        check_int("i", i, minimum=1, maximum=self.n)
        for name, c in zip("jk", cols):
            check_int(name, c, minimum=1, maximum=i)
        if len(cols) == 2 and cols[0] == cols[1]:
            raise ValueError(f"j and k must differ; got j = k = {cols[0]}")
        return (layer - 1, i - 1) + tuple(c - 1 for c in cols)

    def _need_paired(self, what: str) -> None:
        if not self.paired:
            raise ValueError(f"{what} needs the paired accumulators: rerun simulate_scores with paired=True")

    def score(self, layer: int, i: int, j: int) -> Estimate:
        """Mean and SE of S^(layer)_ij (1-indexed, j <= i)."""
        li = self._index(layer, i, j)
        return Estimate(float(self.mean[li]), float(self.stderr[li]), self.samples)

    def paired_difference(self, layer: int, i: int, j: int, k: int) -> Estimate:
        """Mean and within-sample SE of S_ij - S_ik (1-indexed, j, k <= i, j != k)."""
        self._need_paired("paired_difference")
        l0, i0, j0, k0 = self._index(layer, i, j, k)
        c = self.cross_moments[l0, i0]
        var = max(c[j0, j0] + c[k0, k0] - 2.0 * c[j0, k0], 0.0) / (self.samples - 1)
        mean = self.mean[l0, i0, j0] - self.mean[l0, i0, k0]
        return Estimate(float(mean), math.sqrt(var / self.samples), self.samples)

    def recency_probability(self, layer: int) -> Estimate:
        """The authors' recency probability RP at ``layer``: over draws and over all triples
        j < k < i <= n, the fraction with S_ik > S_ij (keys strictly below the query). Its SE is that of
        the mean of the per-draw fractions RP_b (triples within one draw are correlated; draws are iid)."""
        self._need_paired("recency_probability")
        if self.recency_mean is None:
            raise ValueError(f"the recency probability needs n >= 3 (a triple j < k < i); got n={self.n}")
        l0 = check_int("layer", layer, minimum=1, maximum=self.layers) - 1
        return Estimate(float(self.recency_mean[l0]), float(self.recency_stderr[l0]), self.samples)

    def prob_greater(self, layer: int, i: int, j: int, k: int) -> Proportion:
        """Frequency over instances of S_ij > S_ik (1-indexed, j, k <= i, j != k), binomial CI."""
        self._need_paired("prob_greater")
        idx = self._index(layer, i, j, k)
        return Proportion(int(self.greater_counts[idx]), self.samples)


MAX_D = 2 ** 53  # widths enter float64 arithmetic (d - 1 - k in the Bartlett chi-square degrees of freedom)
MAX_SAMPLES = 10 ** 13


def _validate(config, params, n, layers, d, samples, method, seed):
    config = make_config(config, **params)
    n = check_int("n", n, minimum=1)
    layers = check_int("layers", layers, minimum=1)
    removed = config.normalisation.removed
    if removed and not (isinstance(d, numbers.Integral) and d >= removed + 1):
        raise ValueError(f"d must be an integer >= {removed + 1} for norm={config.norm!r} (centring "
                         f"leaves d - {removed} directions); got {d!r}")
    d = check_int("d", d, minimum=1, maximum=MAX_D)
    samples = check_int("samples", samples, minimum=2, maximum=MAX_SAMPLES)
    method = check_choice("method", method, METHODS)
    seconds = estimate_seconds(n, layers, samples)
    from lnrecency.runtime.timelimit import ENV, time_limit

    if seconds > time_limit(MAX_SECONDS):  # a library call: its arguments, not the command line's flags, are named
        raise ValueError(f"simulate_scores(samples={samples}) at n={n}, layers={layers} would take about {seconds:.3g}"
                         f" s here (estimate from timings on this project's 2-core machine), above the time limit "
                         f"{time_limit(MAX_SECONDS):g} s; use fewer samples, or se= (a target standard error: a pilot "
                         f"picks the estimator), or raise the limit ({ENV}; --max-seconds on the command line)")
    # |h^(l)| <= (1 + gamma)^(l - 1) max |x| (|o| <= max |N h|), scores <= lam |h|^2: stay well inside
    # float64 (1e308) with tokens of squared length up to ~10, before any allocation
    growth = 2 * (layers - 1) * math.log10(1 + float(config.gamma)) if config.residual else 0.0
    if growth + math.log10(max(float(config.lam), 1.0)) > 250:
        raise ValueError(f"gamma={config.gamma!r}, lam={config.lam!r} with {layers} layers leave the float64 "
                         f"range of the simulation (|h|^2 up to (1+gamma)^(2(L-1)), scores up to lam |h|^2); "
                         f"use smaller values, or the exact limit in mpmath (lnrecency limit --dps 30)")
    if method == "gram":  # the premise of the reduced coordinates, tested before any draw
        check_rotation_invariance(config.normalisation)
    return config, n, layers, d, samples, method, _check_seed(seed)


@dataclass(frozen=True)
class Instances:
    """Per-instance draws: scores (samples, layers, n, n) (NaN above the diagonal) and |o_i|^2
    (samples, layers, n). For distribution tests and histograms; the means use simulate_scores."""

    scores: np.ndarray
    output_sq_norm: np.ndarray
    d: int
    method: str
    config: ModelConfig


def sample_instances(n: int, layers: int, d: int, samples: int, *, seed: Any, method: str = "gram",
                     config: ModelConfig | None = None, **params: Any) -> Instances:
    """``samples`` iid instances of the model at width d, drawn exactly as in simulate_scores (the same default method).

    Holds 8 * samples * layers * n * (n + 1) bytes: a MemoryError names the size if that exceeds the
    available memory.
    """
    config, n, layers, d, samples, method, seed = _validate(config, params, n, layers, d, samples,
                                                            method, seed)
    need = 8 * samples * layers * n * (n + 1) + samples * _per_sample_bytes(n, Representation(n, d, method).dim, layers)
    if need > available_memory():
        raise MemoryError(f"sample_instances(samples={samples}, n={n}, layers={layers}, d={d}) needs about "
                          f"{need / 2**20:.0f} MiB; use simulate_scores for streamed means")
    rep = Representation(n, d, method)
    x = embed(draw_range(rep, seed, 0, samples), config, d)
    scores = np.empty((samples, layers, n, n))
    osq = np.empty((samples, layers, n))
    for layer, (s, o) in enumerate(forward(x, config, layers, rep.u)):
        scores[:, layer] = s
        osq[:, layer] = np.einsum("bnd,bnd->bn", o, o)
    scores[:, :, np.triu(np.ones((n, n), dtype=bool), k=1)] = np.nan
    return Instances(scores, osq, d, method, config)


def simulate_scores(n: int, layers: int, d: int, samples: int | None = None, *, seed: Any, method: str = "gram",
                    chunk: int | None = None, config: ModelConfig | None = None, paired: bool = True,
                    progress: bool | None = None, memory_limit: int | None = None,
                    workers: int | None = None, control_variate: bool | str | None = None,
                    executor: Any = None, se: float | None = None, se_layers: Any = None,
                    **params: Any) -> ScoreSimulation:
    """Monte Carlo mean and SE of the scores of M(norm, residual, lam, gamma, alpha) at width d.

    The model comes from ``config`` or from keywords (norm, residual, gamma, lam, alpha, embedding),
    not both (:func:`lnrecency.model.config.make_config`). ``method``: "gram" (default, as on the command line:
    Bartlett coordinates, n + 2 a vector where d >= n + 2, else R^d; exact in law, cost independent of d;
    :mod:`numerics.samplers`) or "direct" (R^d, cost O(n^2 d) a sample; the same law, another stream).
    ``seed``: non-negative int (or tuple of them); the result is bit-for-bit a function of (seed, arguments) and
    independent of ``workers`` (threads processing chunks, merged in chunk order; default: the available CPUs, at
    most 4; BLAS runs single-threaded during the call); it depends on ``chunk`` only through
    float rounding. ``control_variate`` (one of precision.CONTROL_VARIATES; True = "quadratic"): subtract from
    every draw's scores a Taylor polynomial of the shared layers in the draw's input-Gram deviation,
    centred at its exact mean (:mod:`lnrecency.theory.finite_width`); the estimator stays unbiased and
    the SE is that of the adjusted draws. "quadratic": second order, residual spread O(d^-3/2) instead
    of O(d^-1/2) (its mean uses c); "linear": first order on the uncentred Gram, mean exactly 0, residual
    O(1/d) (independent of c: use it to validate c). Per-instance counts (prob_greater) use raw scores. ``progress``:
    tqdm bar; None = only when stderr is a terminal. ``memory_limit`` (bytes):
    default the available physical memory. ``executor``: a concurrent.futures-style executor to run the
    chunks on instead of local threads (a Dask cluster: :func:`lnrecency.runtime.distributed.executor`); the
    chunking and the merge order are the same, so are the bytes of the result.
    ``se``: draw until every entry of ``se_layers`` (default all) has SE <= se, ``samples`` the cap
    (:mod:`lnrecency.numerics.precision`)."""
    if se is not None or se_layers is not None or samples is None:
        from lnrecency.numerics.precision import by_precision

        return by_precision(simulate_scores, MAX_SAMPLES, n, layers, d, samples, se=se, se_layers=se_layers, seed=seed,
                            control_variate=control_variate, method=method, chunk=chunk, config=config, paired=paired,
                            progress=progress, memory_limit=memory_limit, workers=workers, executor=executor, **params)
    request = _Request.make(n, layers, d, samples, seed=seed, method=method, chunk=chunk, config=config,
                            paired=paired, workers=workers, control_variate=control_variate,
                            executor=executor, memory_limit=memory_limit, params=params)
    return _execute(request, _plan(request), executor=executor, progress=progress)


@dataclass(frozen=True)
class _Request:
    """The validated arguments of :func:`simulate_scores` (every check before any allocation)."""

    config: ModelConfig
    n: int
    layers: int
    d: int
    samples: int
    method: str
    seed: int | tuple[int, ...] | None
    chunk: int | None
    paired: bool
    workers: int
    control_variate: str
    memory_limit: int

    @classmethod
    def make(cls, n, layers, d, samples, *, seed, method, chunk, config, paired, workers, control_variate,
             executor, memory_limit, params) -> "_Request":
        config, n, layers, d, samples, method, seed = _validate(config, params, n, layers, d, samples,
                                                                method, seed)
        if chunk is not None:
            chunk = check_int("chunk", chunk, minimum=1)
        if not isinstance(paired, bool):
            raise ValueError(f"paired must be True or False; got {paired!r}")
        if executor is not None and not callable(getattr(executor, "submit", None)):
            raise ValueError(f"executor must be a concurrent.futures-style executor (with .submit), e.g. "
                             f"lnrecency.runtime.distributed.executor(...), or None; got {executor!r}")
        cv = _check_control_variate(control_variate)
        if cv == "quadratic":
            from lnrecency.theory.width_jets import check_supported

            check_supported(config, control_variate=True)
        workers = _default_workers() if workers is None else check_int("workers", workers, minimum=1)
        limit = available_memory() if memory_limit is None else check_int("memory_limit", memory_limit)
        return cls(config, n, layers, d, samples, method, seed, chunk, paired, workers, cv, limit)

    def need(self, chunk: int) -> int:
        """Bytes the run takes with this chunk (:func:`estimate_memory`)."""
        return estimate_memory(self.n, self.layers, self.d, method=self.method, chunk=chunk,
                               paired=self.paired, workers=self.workers, control_variate=self.control_variate)


@dataclass(frozen=True)
class _Plan:
    """How a request runs: its representation and chunk size (within the memory budget)."""

    rep: Representation
    chunk: int


def _plan(r: _Request) -> _Plan:
    """The chunk size: the given one if it fits the memory budget, else the largest that does (a multiple
    of the RNG block when possible, so no draw is wasted); MemoryError when even one sample does not fit."""
    rep = Representation(r.n, r.d, r.method)
    limit = r.memory_limit
    if r.need(1) > limit:
        raise MemoryError(
            f"simulate_scores(n={r.n}, layers={r.layers}, d={r.d}, method={r.method!r}, paired={r.paired}, "
            f"workers={r.workers}) needs about {r.need(1) / 2**20:.0f} MiB even with chunk=1, more "
            f"than the memory limit {limit / 2**20:.0f} MiB"
            + (" (the paired accumulators behind orderings take 16 * layers * n^3 bytes: use a smaller n, "
               "or paired=False when no ordering is needed)" if r.paired else "")
            + ("; method='gram' does not depend on d" if r.method == "direct" else "")
            + ("; or fewer workers" if r.workers > 1 else ""))
    if r.chunk is None:
        fb = forward_batch(r.n, rep.dim)
        per = (r.need(fb + 1) - r.need(fb)) or 1
        fit = max(1, (min(r.need(1) + r.workers * CHUNK_BUDGET_BYTES, limit) - r.need(1)) // per + 1)
        block = rep.block_size()
        return _Plan(rep, int(min(r.samples, fit // block * block if fit >= block else fit)))
    if r.need(r.chunk) > limit:
        raise MemoryError(
            f"chunk={r.chunk} needs about {r.need(r.chunk) / 2**20:.0f} MiB with workers={r.workers}, more "
            f"than the memory limit {limit / 2**20:.0f} MiB; use a smaller chunk")
    return _Plan(rep, r.chunk)


@contextmanager
def _closing(bar):
    try:
        yield bar
    finally:
        bar.close()
        release()  # this thread's working arrays (numerics.workspace; a pool's threads drop theirs as they end)


def _execute(r: _Request, plan: _Plan, *, executor: Any, progress: bool | None) -> ScoreSimulation:
    """Run the chunks (in order: in this thread, on local threads or on ``executor``), merge them in chunk
    order, refuse a float64 overflow, and return the result."""
    n, layers, samples, chunk, config = r.n, r.layers, r.samples, plan.chunk, r.config
    acc = Accumulator(n, layers, r.paired)
    starts = range(0, samples, chunk)
    taylor_mean = None
    if r.control_variate == "quadratic":
        from lnrecency.theory.finite_width import finite_width

        taylor_mean = finite_width(n, layers, config=config).taylor_mean(r.d)
    work = partial(summarise_chunk, plan.rep, r.seed, config, layers, r.paired, r.control_variate, taylor_mean)
    from lnrecency.runtime.progress import Progress

    # None: a bar on a terminal only (library calls stay quiet in logs), except a run estimated above
    # ANNOUNCE_SECONDS, which prints its plan and a line every 10 s wherever stderr goes; True: a bar on a terminal,
    # else a line every 10 s (the CLI: nohup, CI, notebooks); False: nothing
    seconds = estimate_seconds(n, layers, samples) * cost(r.control_variate)
    long = progress is not False and seconds > ANNOUNCE_SECONDS
    if long:
        print(f"simulate_scores: {samples} draws, estimator control_variate={r.control_variate!r}, n={n}, layers="
              f"{layers}, d={r.d}: about {seconds:.3g} s estimated; progress every 10 s", file=sys.stderr, flush=True)
    enabled = None if progress or long or (progress is None and sys.stderr.isatty()) else False
    bar = Progress(samples, f"simulate d={r.d}", "samples", enabled=enabled)
    with one_blas_thread(), _closing(bar):
        if executor is not None:  # e.g. a Dask cluster (lnrecency.runtime.distributed.executor): chunks in order
            run_chunks(executor, work, starts, chunk, samples, acc, bar, window=8)
        elif r.workers == 1 or len(starts) == 1:
            for s0 in starts:
                acc.merge(work(s0, min(s0 + chunk, samples)))
                bar.update(min(chunk, samples - s0))
        else:
            with ThreadPoolExecutor(max_workers=r.workers) as pool:
                run_chunks(pool, work, starts, chunk, samples, acc, bar, window=2 * r.workers)

    upper = np.triu(np.ones((n, n), dtype=bool), k=1)
    mean, se = acc.scores.mean.copy(), acc.scores.stderr()
    if not (np.all(np.isfinite(mean[:, ~upper])) and np.all(np.isfinite(se[:, ~upper]))):
        raise ValueError(f"float64 overflow: the simulated scores or their spread leave the float64 range "
                         f"for {config.label()} (e.g. a huge gamma or lam); no result is returned. Use "
                         f"smaller parameters, or the exact limit with mpmath (lnrecency limit --dps 30)")
    mean[:, upper] = np.nan
    se[:, upper] = np.nan
    return ScoreSimulation(
        mean=mean, stderr=se, samples=samples, d=r.d, seed=r.seed, method=r.method, config=config,
        chunk=chunk, representation=plan.rep.name, control_variate=r.control_variate,
        output_sq_norm_mean=acc.osq.mean, output_sq_norm_stderr=acc.osq.stderr(),
        output_var_mean=acc.ovar.mean, output_var_stderr=acc.ovar.stderr(),
        cross_moments=acc.cross_moments(), greater_counts=acc.greater,
        recency_mean=None if acc.recency is None else acc.recency.mean.copy(),
        recency_stderr=None if acc.recency is None else acc.recency.stderr(), draws=samples)
