"""Measure the float64 limit recursion (lnrecency.theory.limit_scores) over its range and fit the cost model
that theory.limit.estimate_seconds uses to refuse work before doing it.

Model: seconds = (a + b * n^2) * layers + c * n^3 * (layers - 1): a per-layer overhead, the n^2 work of every
layer, and the n^3 Gram update of every layer after the first (layer 1's input Gram is structured; measured). Fitted by
least
squares on relative error (weights 1/t), printed with estimate/real per size; the data and the fit are kept in
benchmarks/limit_cost.json.

    python3 benchmarks/fit_limit_cost.py [--repeats 3]
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

import lnrecency.theory.limit as limit
from lnrecency.theory.limit import estimate_seconds, limit_scores

SIZES = [(n, L) for n in (32, 128, 256, 512, 768, 1024, 1536, 2048) for L in (1, 2, 4)] + \
    [(2, 1000), (2, 10000), (16, 1000), (64, 200)]


def measure(n: int, layers: int, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        limit_scores(n, layers, norm="layernorm", residual=True, alpha=0.2)
        best = min(best, time.perf_counter() - t)
    return best


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=3)
    a = p.parse_args()
    saved = limit.check_time
    limit.check_time = lambda *args, **kw: None  # measure the whole range, the refused sizes included
    try:
            rows = [(n, L, measure(n, L, a.repeats)) for n, L in SIZES]
    finally:
        limit.check_time = saved
    n = np.array([r[0] for r in rows], float)
    L = np.array([r[1] for r in rows], float)
    t = np.array([r[2] for r in rows])
    X = np.stack([L, n ** 2 * L, n ** 3 * (L - 1)], 1) / t[:, None]
    coef, *_ = np.linalg.lstsq(X, np.ones_like(t), rcond=None)
    print(f"fit: seconds = ({coef[0]:.3g} + {coef[1]:.3g} n^2) layers + {coef[2]:.3g} n^3 (layers - 1)")
    print(f"{'n':>6} {'layers':>6} {'real s':>9} {'fit s':>9} {'estimate s':>11} {'estimate/real':>14}")
    for (nn, LL, tt) in rows:
        fit = (coef[0] + coef[1] * nn ** 2) * LL + coef[2] * nn ** 3 * (LL - 1)
        est = estimate_seconds(nn, LL)
        print(f"{nn:6d} {LL:6d} {tt:9.4f} {fit:9.4f} {est:11.4f} {est / tt:14.2f}")
    Path(__file__).with_name("limit_cost.json").write_text(json.dumps(
        {"model": "(a + b n^2) layers + c n^3 (layers - 1)", "coefficients": list(map(float, coef)),
         "data": [{"n": r[0], "layers": r[1], "seconds": r[2]} for r in rows]}, indent=1) + "\n")


if __name__ == "__main__":
    main()
