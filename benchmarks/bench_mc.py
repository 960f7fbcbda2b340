"""Benchmarks of the finite-width Monte Carlo. Prints every figure the benchmarks report.

    python3 benchmarks/bench_mc.py            # full run (several minutes)
    python3 benchmarks/bench_mc.py --quick    # smaller sample counts; totals are extrapolated and say so

Each timed run is a fresh subprocess, so its peak resident memory (ru_maxrss, including the Python
interpreter and numpy, reported separately as the baseline) is that run's own.
Sections: authors (the authors' setting), flat (gram time per sample vs d), ratio (gram vs direct at
d = 4096), se (time to SE <= 1e-4 on every layer-2 entry at n = 50), cv (the same at d = 64 with and
without control variates), slope (rate of E_d S -> limit).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
AUTHORS = dict(n=50, layers=4, d=64, norm="l2", residual=True, gamma=1.0, lam=1.0,
               embedding="normalized")  # l2 with gamma = 1: the unscaled normalised output is added


def _child(spec: dict) -> dict:
    """Run one simulate_scores call in this process; return time, peak RSS and SE summaries."""
    import numpy as np

    from lnrecency.numerics import simulate_scores

    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    t0, c0 = time.perf_counter(), time.process_time()
    r = simulate_scores(**spec)
    secs, cpu = time.perf_counter() - t0, time.process_time() - c0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    lay2 = r.stderr[1] if r.layers > 1 else r.stderr[0]
    off = np.tril(np.ones(lay2.shape, bool), -1)
    return dict(seconds=secs, cpu_seconds=cpu, peak_rss=peak, baseline_rss=base, chunk=r.chunk,
                max_se_layer2=float(np.max(lay2[off])), representation=r.representation,
                max_sd_layer2=float(np.max(lay2[off]) * math.sqrt(r.samples)))


def run(spec: dict) -> dict:
    """_child(spec) in a fresh interpreter."""
    out = subprocess.run([sys.executable, __file__, "--child", json.dumps(spec)], check=True,
                         capture_output=True, text=True, cwd=ROOT,
                         env={**os.environ, "PYTHONPATH": ROOT})
    return json.loads(out.stdout.strip().splitlines()[-1])


def mib(x: float) -> str:
    return f"{x / 2**20:.0f} MiB"


def authors(quick: bool) -> None:
    samples = 10000 if quick else 100000
    scale = 100000 / samples
    print(f"\n## Authors' setting: n=50, d=64, 4 layers, l2, residual (gamma=1), normalized embeddings, "
          f"samples={samples}" + (f" (quick: times x{scale:g} extrapolated to 100000)" if quick else ""))
    print("baseline (authors' full-batch implementation, as stated in the issue): about 25 s, 8 GB")
    for alpha in (0.0, 0.2):
        for method, paired, workers in (("direct", True, None), ("direct", False, None),
                                        ("gram", True, None), ("gram", False, None), ("direct", True, 1)):
            spec = dict(AUTHORS, alpha=alpha, samples=samples, seed=1, method=method, paired=paired)
            r = run(spec if workers is None else dict(spec, workers=workers))
            tag = " (default method and options)" if (method, paired, workers) == ("direct", True, None) else ""
            workers = "auto" if workers is None else workers
            print(f"alpha={alpha:g} method={method:6s} paired={str(paired):5s} workers={workers}: "
                  f"{r['seconds'] * scale:6.1f} s wall ({r['cpu_seconds'] * scale:6.1f} s CPU) per 100000 "
                  f"samples, peak RSS {mib(r['peak_rss'])} "
                  f"(interpreter+numpy {mib(r['baseline_rss'])}), chunk={r['chunk']}, "
                  f"max layer-2 SE {r['max_se_layer2'] * math.sqrt(samples / 100000):.2e} "
                  f"at 100000 samples{tag}")


def flat(quick: bool) -> None:
    samples = 1000 if quick else 5000
    print(f"\n## gram: time per sample vs d (n=50, 4 layers, l2, residual, normalized, paired=False, "
          f"samples={samples})")
    for d in (64, 256, 1024, 4096, 16384, 65536, 262144, 10**6):
        r = run(dict(AUTHORS, d=d, alpha=0.0, samples=samples, seed=2, method="gram", paired=False))
        print(f"d={d:>8d}: {r['seconds'] / samples * 1e6:8.1f} us/sample wall, "
              f"{r['cpu_seconds'] / samples * 1e6:8.1f} us CPU ({r['representation']})")


def ratio(quick: bool) -> None:
    samples = 200 if quick else 1000
    print(f"\n## gram vs direct at d=4096 (n=50, 4 layers, l2, residual, normalized, paired=False, "
          f"samples={samples})")
    spec = dict(AUTHORS, d=4096, alpha=0.0, samples=samples, seed=3, paired=False)
    g, dr = run(dict(spec, method="gram")), run(dict(spec, method="direct"))
    print(f"gram {g['seconds'] / samples * 1e6:.1f} us/sample, direct {dr['seconds'] / samples * 1e6:.1f} "
          f"us/sample: direct / gram = {dr['seconds'] / g['seconds']:.1f}x wall, "
          f"{dr['cpu_seconds'] / g['cpu_seconds']:.1f}x CPU")


def se_target(quick: bool) -> None:
    target = 1e-4
    print(f"\n## Time to SE <= {target:g} on every layer-2 entry j < i at n=50 (authors' model, 2 layers: "
          f"layer-2 scores need no more; gram, paired=False; S_ii = lam exactly has SE 0)")
    for d in (64, 256, 1024, 4096):
        spec = dict(AUTHORS, layers=2, d=d, alpha=0.0, seed=4, method="gram", paired=False)
        pilot = run(dict(spec, samples=4000))
        need = math.ceil((pilot["max_sd_layer2"] / target) ** 2 * 1.05)  # 5% margin on the pilot SD
        per = pilot["cpu_seconds"] / 4000  # CPU time: less sensitive to other load on the machine
        if quick or need * per > 600:  # CPU seconds
            why = "quick" if quick else "over 600 s"
            print(f"d={d}: pilot max SD {pilot['max_sd_layer2']:.4f} -> {need} samples, predicted "
                  f"{need * per:.1f} s CPU ({why}: not run); SD ~ d^-1/2, so the samples needed scale as 1/d")
            continue
        r = run(dict(spec, samples=need, seed=5))
        print(f"d={d}: {need} samples (pilot max SD {pilot['max_sd_layer2']:.4f}) in {r['seconds']:.1f} s "
              f"wall ({r['cpu_seconds']:.1f} s CPU), "
              f"achieved max layer-2 SE {r['max_se_layer2']:.2e}, peak RSS {mib(r['peak_rss'])}")


def control_variates(quick: bool) -> None:
    """Time to SE <= 1e-4 on every layer-2 entry at n = 50, d = 64, without and with control variates,
    in one run (the finite-width theory's goal: <= 60 s here)."""
    target, d = 1e-4, 64
    print(f"\n## Control variates: time to SE <= {target:g} on every layer-2 entry j < i at n=50, d={d} "
          f"(authors' model, 2 layers, gram, paired=False); pilot 2000 samples each, 5% margin")
    spec = dict(AUTHORS, layers=2, d=d, alpha=0.0, method="gram", paired=False)
    times = {}
    for variate in ("none", "linear", "quadratic"):
        pilot = run(dict(spec, samples=2000, seed=6, control_variate=variate))
        need = math.ceil((pilot["max_sd_layer2"] / target) ** 2 * 1.05)
        per = pilot["seconds"] / 2000
        if quick or need * per > 600:
            why = "quick" if quick else "over 600 s"
            times[variate] = need * per
            print(f"{variate:9s}: pilot max SD {pilot['max_sd_layer2']:.5f} -> {need} samples, predicted "
                  f"{need * per:.1f} s wall ({why}: not run)")
            continue
        r = run(dict(spec, samples=need, seed=7, control_variate=variate))
        times[variate] = r["seconds"]
        print(f"{variate:9s}: {need} samples (pilot max SD {pilot['max_sd_layer2']:.5f}) in {r['seconds']:.1f} s "
              f"wall ({r['cpu_seconds']:.1f} s CPU), achieved max layer-2 SE {r['max_se_layer2']:.2e}, "
              f"peak RSS {mib(r['peak_rss'])}")
    for variate in ("linear", "quadratic"):
        print(f"speed-up {variate} vs none: {times['none'] / times[variate]:.1f}x")


def slope(quick: bool) -> None:
    from lnrecency.numerics import convergence_in_d

    samples = 10000 if quick else 40000
    ds = [64, 128, 256, 512, 1024]
    print(f"\n## Slope of log|E_d S - S_limit| vs log d (n=6, 3 layers, gram, samples={samples} per d, "
          f"d={ds}; WLS on entries resolved beyond 5 SE; expected -1)")
    configs = [dict(norm="layernorm"), dict(norm="l2", residual=True, alpha=0.2),
               dict(norm="layernorm", lam=2.0, alpha=0.2, embedding="normalized"),
               dict(norm="none", residual=True, gamma=0.5)]
    for params in configs:
        t0 = time.perf_counter()
        res = convergence_in_d(6, 3, ds, samples, seed=6, **params)
        try:
            f = res.fit_rate()
            txt = (f"slope {f.slope:+.3f} +- {f.stderr:.3f} (chi2/dof {f.chi2:.1f}/{f.dof}, "
                   f"{f.entries} entries, {f.points} points)")
        except ValueError as exc:
            txt = f"no resolved bias: {exc}"
        print(f"{res.config.label()} {res.config.embedding}: {txt} [{time.perf_counter() - t0:.1f} s]")


SECTIONS = {"authors": authors, "flat": flat, "ratio": ratio, "se": se_target, "cv": control_variates,
            "slope": slope}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="smaller sample counts (extrapolated totals)")
    p.add_argument("--sections", nargs="+", choices=sorted(SECTIONS), default=list(SECTIONS))
    p.add_argument("--child", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        print(json.dumps(_child(json.loads(args.child))))
        return 0
    print(f"# bench_mc.py {'--quick ' if args.quick else ''}on {os.cpu_count()} CPUs, "
          f"load average {os.getloadavg()[0]:.2f} at start")
    for name in args.sections:
        SECTIONS[name](args.quick)
    print(f"\n# load average {os.getloadavg()[0]:.2f} at the end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
