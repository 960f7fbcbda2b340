"""Estimate against real time for the cost models that refuse work before doing it (issue 33: within 0.5-2x
wherever they allow the work). For each estimator and several sizes it times the real computation (best of
``--repeats``, on this machine) and prints estimate / real; ``--fit`` also fits the constants of the models
whose form is a single power law (mpmath and sympy limits, the simulation) and writes the data and the fits to
benchmarks/estimates.json.

    python3 benchmarks/bench_estimates.py [--repeats 2] [--fit]

Estimators: theory.limit.estimate_seconds (float64, mpmath, sympy), numerics.simulate.estimate_seconds,
and the finite-width theory's per-layer overhead; the float64 limit's own fit is benchmarks/fit_limit_cost.py.
"""
from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path

import numpy as np

import lnrecency.theory.limit as limit
from lnrecency.numerics import simulate_scores
from lnrecency.numerics.simulate import estimate_seconds as sim_estimate
from lnrecency.theory.finite_width import finite_width
from lnrecency.theory.limit import estimate_seconds, limit_scores

CASES = {
    "limit float64": [(64, 2), (256, 4), (1024, 4), (2048, 1)],
    "limit mpmath dps=40": [(16, 2), (32, 2), (48, 2), (64, 2)],
    "limit sympy exact": [(4, 2), (8, 2), (12, 2), (14, 2)],
    "simulate": [(8, 2, 20000), (16, 4, 20000), (32, 2, 5000), (64, 2, 1000)],
    "finite-width": [(8, 2), (16, 2), (32, 2), (48, 2)],
    "probe (identity)": [(2, 32, 64, 256), (4, 64, 256, 256), (8, 128, 128, 128), (2, 256, 512, 64)],
}


def best(fn, repeats: int) -> float:
    out = math.inf
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        out = min(out, time.perf_counter() - t)
    return out


def run(repeats: int) -> dict:
    saved = limit.check_time
    limit.check_time = lambda *a, **k: None  # time the work itself, whatever the current estimate says
    rows = {}
    try:
        for n, L in CASES["limit float64"]:
            rows.setdefault("limit float64", []).append(
                (n, L, estimate_seconds(n, L), best(lambda: limit_scores(n, L, alpha=0.2, residual=True), repeats)))
        for n, L in CASES["limit mpmath dps=40"]:
            rows.setdefault("limit mpmath dps=40", []).append(
                (n, L, estimate_seconds(n, L, 40), best(lambda: limit_scores(n, L, dps=40), repeats)))
        for n, L in CASES["limit sympy exact"]:
            rows.setdefault("limit sympy exact", []).append(
                (n, L, estimate_seconds(n, L, exact=True),
                 best(lambda: limit_scores(n, L, exact=True, alpha=0.2, residual=True), 1)))
    finally:
        limit.check_time = saved
    for n, L, s in CASES["simulate"]:
        rows.setdefault("simulate", []).append(
            (n, L, sim_estimate(n, L, s), best(lambda: simulate_scores(n, L, 64, s, seed=0, method="gram",
                                                                       progress=False), repeats), s))
    for n, L in CASES["finite-width"]:
        rows.setdefault("finite-width", []).append((n, L, None, best(lambda: finite_width(n, L), repeats)))
    try:
        from lnrecency.config import ModelConfig
        from lnrecency.models.config import DecoderConfig
        from lnrecency.models.decoder import build
        from lnrecency.models.probe import ProbeSettings, probe_decoder, probe_seconds
    except ImportError:  # the models extra is not installed
        return rows
    for L, n, d, seqs in CASES["probe (identity)"]:
        model = build(DecoderConfig.identity_of(ModelConfig(), d=d, layers=L, n=n), 0)
        st = ProbeSettings(n=n, sequences=seqs, seed=0)
        rows.setdefault("probe (identity)", []).append(
            (n, L, probe_seconds(L, 1, n, d, seqs), best(lambda: probe_decoder(model, st), repeats), seqs))
    return rows


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=2)
    p.add_argument("--fit", action="store_true")
    a = p.parse_args()
    rows = run(a.repeats)
    print(f"{'estimator':22s} {'size':>22s} {'estimate s':>11s} {'real s':>9s} {'estimate/real':>14s}")
    for name, items in rows.items():
        for item in items:
            n, L, est, real = item[:4]
            size = f"n={n}, layers={L}" + (f", samples={item[4]}" if len(item) > 4 else "")
            ratio = f"{est / real:.2f}" if est is not None else "(no estimate)"
            print(f"{name:22s} {size:>22s} {est if est is not None else float('nan'):11.3g} {real:9.3g} {ratio:>14s}")
    if a.fit:
        fits = {}
        for name, xs in (("limit mpmath dps=40", lambda r: r[1] * r[0] ** 3),
                         ("limit sympy exact", lambda r: r[1] * r[0] ** 3),
                         ("simulate", lambda r: r[4] * r[1] * r[0] ** 2 * (r[0] + 8))):
            x = np.array([xs(r) for r in rows[name]], float)
            y = np.array([r[3] for r in rows[name]], float)
            k = float(np.exp(np.mean(np.log(y / x))))  # one constant, fitted on the log scale
            fits[name] = {"seconds_per_unit": k, "worst_ratio": float(max(y / (k * x)) / min(y / (k * x)))}
        out = Path(__file__).with_name("estimates.json")
        out.write_text(json.dumps({"rows": rows, "fits": fits}, indent=1) + "\n")
        print(json.dumps(fits, indent=1))


if __name__ == "__main__":
    main()
