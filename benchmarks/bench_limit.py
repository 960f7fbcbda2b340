"""Benchmark of the exact limit: float64 at n = 2048, 4 layers, and mpmath dps = 50 at n = 32.

Prints wall time (best of --repeat), peak traced memory, and the ratio against a plain numpy recursion
(the baseline the issue names: the recursion of docs/model.md written directly, G' = A G A^T with A formed densely).
Run: python3 benchmarks/bench_limit.py [--n 2048] [--layers 4] [--repeat 3]
"""
from __future__ import annotations

import argparse
import time
import tracemalloc

import numpy as np

from lnrecency.theory.limit import limit_scores


def plain_numpy_recursion(n: int, layers: int, *, residual: bool, gamma: float, lam: float,
                          alpha: float) -> np.ndarray:
    """The recursion of docs/model.md verbatim (normalised variant): the baseline."""
    g = (1 - alpha) * np.eye(n) + alpha * np.ones((n, n))
    mask = np.tril(np.ones((n, n), bool))
    out = []
    for layer in range(layers):
        dinv = np.diag(1 / np.sqrt(np.diag(g)))
        s = lam * dinv @ g @ dinv
        w = np.where(mask, np.exp(s - s.max(axis=1, keepdims=True)), 0.0)
        p = w / w.sum(axis=1, keepdims=True)
        a = p @ dinv
        if residual:
            a = np.eye(n) + gamma * a
        out.append(np.where(mask, s, np.nan))
        if layer < layers - 1:  # the scores of L layers need L - 1 updates
            g = a @ g @ a.T
    return np.array(out)


def timed(fn, repeat: int):
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t)
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return best, peak, result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n", type=int, default=2048)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--mp-n", type=int, default=32)
    ap.add_argument("--dps", type=int, default=50)
    args = ap.parse_args()
    cfg = dict(residual=True, gamma=1.0, lam=1.0, alpha=0.2)
    t_ours, m_ours, s_ours = timed(lambda: limit_scores(args.n, args.layers, norm="layernorm", **cfg),
                                   args.repeat)
    t_base, m_base, s_base = timed(lambda: plain_numpy_recursion(args.n, args.layers, **cfg), args.repeat)
    agree = np.nanmax(np.abs(s_ours - s_base) / np.abs(s_base))
    print(f"float64 limit_scores n={args.n} layers={args.layers}: {t_ours:.2f} s (goal <= 10 s), "
          f"peak {m_ours / 2**20:.0f} MiB")
    print(f"plain numpy recursion (baseline):          {t_base:.2f} s, peak {m_base / 2**20:.0f} MiB; "
          f"ratio ours/baseline = {t_ours / t_base:.2f}; max rel. difference {agree:.1e}")
    t_mp, m_mp, _ = timed(lambda: limit_scores(args.mp_n, args.layers, norm="layernorm", dps=args.dps,
                                               **cfg), 1)
    print(f"mpmath dps={args.dps} n={args.mp_n} layers={args.layers}: {t_mp:.2f} s (goal <= 30 s), "
          f"peak {m_mp / 2**20:.1f} MiB")


if __name__ == "__main__":
    main()
