"""Orderings of one layer's scores in a chunk: the counts behind prob_greater and the recency probability.

For a chunk of masked scores s (b, n, n) (row i holds S_ij, j <= i):

  * ``greater[i, j, k]`` = #{draws : S_ij > S_ik}, j, k <= i (0 on the diagonal and outside j, k <= i);
  * ``recent[t]`` = #{triples j < k < i : S_ik > S_ij} in draw t (the authors' recency count, keys strictly
    below the query).

Both are exact integer counts of float64 comparisons, so every backend gives the same integers:

  * ``c`` (numerics/_orderings.c, built by pip at install): each pair j < k of a row compared once per draw for
    both orders, over the draws held contiguously; with AVX-512 where the CPU has it (8 draws a comparison, counted
    by popcount; ``LNRECENCY_NO_AVX512`` set in the environment takes the portable loops, AVX2 where there is
    AVX2), the row moments four draws a sweep, each sum still in draw order (the same bits as one draw at a time);
    the fused pass about 7 us per draw and layer at n = 50 on this project's machine, 13 us before
    (benchmarks/bench_mc.py --sections breakdown);
  * ``numpy`` (where the extension could not be built): the (k, k, b) comparison per row, counted by
    float32 products (exact: every count stays below 2^24); about 28 us per draw and layer at n = 50.

``active_backend()`` names the one in use; ``LNRECENCY_ORDERINGS=numpy`` in the environment forces numpy.
"""
from __future__ import annotations

import os

import numpy as np

__all__ = ["ordering_counts", "accumulate", "mirror", "active_backend", "BACKENDS"]

BACKENDS = ("c", "numpy")
_EXACT_F32 = 2 ** 24  # float32 holds every integer below this exactly


def _numpy_counts(s: np.ndarray, greater: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    b, n = s.shape[0], s.shape[1]
    recent = np.zeros(b, dtype=np.int64)
    if n < 2:
        return greater, recent
    st = np.ascontiguousarray(s.transpose(1, 2, 0))  # [i, j, draw]
    cmp = np.empty(n * n * b, dtype=bool)
    if b >= _EXACT_F32:  # counts beyond float32's exact integers: boolean sums
        for i in range(1, n):
            k = i + 1
            c = cmp[: k * k * b].reshape(k, k, b)
            np.greater(st[i, :k, None, :], st[i, None, :k, :], out=c)
            greater[i, :k, :k] += c.sum(axis=2, dtype=np.int64)
            if i >= 2:
                recent += c[:i, :i][np.tril_indices(i, -1)].sum(axis=0, dtype=np.int64)
        return greater, recent
    flt = np.empty(n * n * b, dtype=np.float32)
    ones = np.ones(b, dtype=np.float32)
    low = np.tri(n, n, -1, dtype=np.float32)  # [kk, jj]: jj < kk
    for i in range(1, n):
        k = i + 1
        c = cmp[: k * k * b].reshape(k, k, b)
        np.greater(st[i, :k, None, :], st[i, None, :k, :], out=c)  # c[kk, jj] = S_{i,kk} > S_{i,jj}
        f = flt[: k * k * b].reshape(k * k, b)
        np.copyto(f, c.reshape(k * k, b))
        greater[i, :k, :k] += (f @ ones).reshape(k, k).astype(np.int64)
        if i >= 2:  # triples jj < kk < i: the strict lower triangle of the first i rows and columns
            w = np.zeros((k, k), dtype=np.float32)
            w[:i, :i] = low[:i, :i]
            recent += (w.reshape(-1) @ f).astype(np.int64)  # exact: at most i^2 / 2 < 2^24 per row
    return greater, recent


def _c_counts(s: np.ndarray, greater: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    import lnrecency.numerics._orderings as _orderings

    b, n = s.shape[0], s.shape[1]
    recent = np.zeros(b, dtype=np.int64)
    _orderings.counts(np.ascontiguousarray(s, dtype=np.float64), b, n, greater, recent, np.empty(n * b))
    return greater, recent


_CHOSEN: list = []


def active_backend() -> str:
    """The backend ordering_counts uses by default: "c" where the extension was built at install, else
    "numpy"; ``LNRECENCY_ORDERINGS=numpy`` in the environment forces numpy."""
    if not _CHOSEN:
        name = "numpy"
        if os.environ.get("LNRECENCY_ORDERINGS", "").strip().lower() != "numpy":
            try:
                import lnrecency.numerics._orderings  # noqa: F401
                name = "c"
            except ImportError:
                pass
        _CHOSEN.append(name)
    return _CHOSEN[0]


def _check_scores(s) -> tuple[int, int]:
    """(b, n) of a chunk of masked scores: a real numeric array of shape (b, n, n); ValueError naming ``s``."""
    shape = getattr(s, "shape", None)
    if not isinstance(s, np.ndarray) or s.ndim != 3 or shape[1] != shape[2] or s.dtype.kind not in "biuf":
        raise ValueError(f"s must be a real array of shape (b, n, n) (b draws of an n x n score matrix); got "
                         f"{type(s).__name__} {getattr(s, 'dtype', '')} of shape {shape}")
    if shape[1] < 1:  # (b, 0, 0) holds no score whatever b, and b may be huge: refused before (b,) counts exist
        raise ValueError(f"s must hold at least one score (n >= 1); got shape {shape}")
    from lnrecency.runtime.memory import available_memory

    need = 8 * shape[0] * (2 + shape[1])  # the (b,) counts and a row's working copy
    if need > 2**26 and need > available_memory():  # a broadcast view may declare any b
        raise ValueError(f"s holds b = {shape[0]} draws: their counts need {need / 2**30:.3g} GiB, more than the "
                         f"{available_memory() / 2**30:.3g} GiB available; pass the draws in chunks")
    return shape[0], shape[1]


def _check_out(name: str, a, shape: tuple, dtype, *, written: bool = True) -> None:
    """``a`` is a C-contiguous array of ``shape`` and ``dtype`` (writeable when ``written``); ValueError naming it."""
    if not (isinstance(a, np.ndarray) and a.shape == shape and a.dtype == dtype and a.flags.c_contiguous
            and (a.flags.writeable or not written)):
        got = (f"{a.dtype} {a.shape}, {'C-contiguous' if a.flags.c_contiguous else 'not C-contiguous'}"
               f"{'' if a.flags.writeable else ', read-only'}" if isinstance(a, np.ndarray) else type(a).__name__)
        raise ValueError(f"{name} must be a C-contiguous {np.dtype(dtype)} array of shape {shape}"
                         f"{', writeable' if written else ''}; got {got}")


def ordering_counts(s: np.ndarray, *, greater: np.ndarray | None = None,
                    backend: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(greater (n, n, n) int64, recent (b,) int64) of a chunk of masked scores ``s`` (b, n, n); see the
    module docstring. ``greater``: a C-contiguous int64 (n, n, n) array the counts are added to (default:
    new zeros). ``backend``: one of BACKENDS (default: :func:`active_backend`); the counts are the same
    integers whichever runs. "c" raises ImportError where the extension was not built."""
    backend = active_backend() if backend is None else backend
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}; got {backend!r}")
    _, n = _check_scores(s)
    if greater is None:
        greater = np.zeros((n, n, n), dtype=np.int64)
    else:
        _check_out("greater", greater, (n, n, n), np.int64)
    return (_c_counts if backend == "c" else _numpy_counts)(s, greater)


def accumulate(s: np.ndarray, ref: np.ndarray, sum1: np.ndarray, cross: np.ndarray, greater: np.ndarray,
               recent: np.ndarray, *, backend: str | None = None) -> None:
    """The fused pass over a sub-batch of masked scores ``s`` (b, n, n) while it is in the cache: adds the
    ordering counts to ``greater`` (int64 (n, n, n)) and ``recent`` (int64 (b,)), and the row moments of the
    deviations d = s - ``ref`` (float64 (n, n)) to ``sum1`` (sum_b d_ij) and ``cross`` (sum_b d_ij d_ik for
    j <= k <= i only: :func:`mirror` fills the other half once at the end). All arrays C-contiguous. The
    counts are the same integers with either backend; the sums agree to rounding (the compiled pass adds in
    draw order without fused multiply-adds, numpy in BLAS order)."""
    backend = active_backend() if backend is None else backend
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}; got {backend!r}")
    b, n = _check_scores(s)
    _check_out("ref", ref, (n, n), np.float64, written=False)
    _check_out("sum1", sum1, (n, n), np.float64)
    _check_out("cross", cross, (n, n, n), np.float64)
    _check_out("greater", greater, (n, n, n), np.int64)
    _check_out("recent", recent, (b,), np.int64)
    if backend == "c":
        import lnrecency.numerics._orderings as _orderings

        _orderings.accumulate(np.ascontiguousarray(s, dtype=np.float64), b, n, np.ascontiguousarray(ref), sum1,
                              cross, greater, recent, np.empty(n * b))
        return
    dev = s - ref
    sum1 += dev.sum(axis=0)
    for i in range(n):
        v = dev[:, i, : i + 1]
        cross[i, : i + 1, : i + 1] += np.triu(v.T @ v)
    _, rec = _numpy_counts(s, greater)
    recent += rec


def mirror(cross: np.ndarray) -> np.ndarray:
    """The full symmetric rows of cross moments (..., n, n, n) read from their upper halves j <= k (whatever
    the lower halves hold): a new array."""
    return np.triu(cross) + np.swapaxes(np.triu(cross, 1), -1, -2)
