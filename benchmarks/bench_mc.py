"""Benchmarks of the finite-width Monte Carlo. Prints every figure the benchmarks report.

    python3 benchmarks/bench_mc.py            # full run (several minutes)
    python3 benchmarks/bench_mc.py --quick    # smaller sample counts; totals are extrapolated and say so

Each timed run is a fresh subprocess, so its peak resident memory (ru_maxrss, including the Python
interpreter and numpy, reported separately as the baseline) is that run's own.
Sections: authors (the authors' setting: the default call against a full-batch float32 torch stand-in of the
authors' method, run in the same benchmark, and the other options), breakdown (where the time of one chunk
goes, per layer), batches (time per draw against the sub-batch a pass through the layers takes, and the rule's
choice against the former fixed 32), flat (gram time per sample vs d), ratio (gram vs direct at d = 4096), se (time
to SE <= 1e-4 on every layer-2 entry at n = 50), cv (the same at d = 64 with and without control variates), slope
(rate of E_d S -> limit).
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
    out = dict(seconds=secs, cpu_seconds=cpu, peak_rss=peak, baseline_rss=base, chunk=r.chunk,
               max_se_layer2=float(np.max(lay2[off])), representation=r.representation,
               max_sd_layer2=float(np.max(lay2[off]) * math.sqrt(r.samples)))
    if r.paired and r.n >= 3:
        out["rp"] = [r.recency_probability(layer).mean for layer in range(1, r.layers + 1)]
    out["mean_l1"] = r.mean[0][off].tolist()
    return out


def _torch_child(spec: dict) -> dict:
    """The authors' method at the same setting, in float32 torch on the whole batch at once (their notebook
    concept/simulation.ipynb: every instance in one tensor, attn.mean(0) per layer), adapted to the
    normalised embeddings and the l2 normalisation of this setting. torch's own threads (all cores)."""
    import torch

    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    torch.manual_seed(spec["seed"])
    b, n, d, alpha = spec["samples"], spec["n"], spec["d"], spec["alpha"]
    t0, c0 = time.perf_counter(), time.process_time()
    v = torch.randn(b, n, d) + math.sqrt(alpha / (1 - alpha)) * torch.randn(b, 1, d)
    out = v / v.norm(dim=-1, keepdim=True)
    del v
    mask = torch.zeros(n, n).masked_fill(torch.ones(n, n).triu(1).bool(), float("-inf"))
    means = []
    for _ in range(spec["layers"]):
        hidden = out / out.norm(dim=-1, keepdim=True)
        attn = hidden @ hidden.mT
        if spec["lam"] != 1:  # the authors' code has no lam and no gamma: no extra pass where they are 1
            attn *= spec["lam"]
        attn += mask
        o = torch.softmax(attn, dim=-1) @ hidden
        if spec["gamma"] != 1:
            o *= spec["gamma"]
        out = o + out
        means.append(attn.mean(0))
        del attn, hidden, o
    secs, cpu = time.perf_counter() - t0, time.process_time() - c0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    off = torch.ones(n, n).tril(-1).bool()
    return dict(seconds=secs, cpu_seconds=cpu, peak_rss=peak, baseline_rss=base, threads=torch.get_num_threads(),
                mean_l1=means[0][off].tolist())


def _tuned_torch_child(spec: dict) -> dict:
    """The same computation in torch written for speed, as a user tuning it would: F.normalize, the mask and the
    residual fused into baddbmm, the draws in batches of ``batch`` (default: all at once; the authors' section sweeps
    it and keeps the fastest, so that the batch fits the caches), the scores' sums in float64, every core's thread."""
    import torch
    import torch.nn.functional as F

    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    torch.set_num_threads(os.cpu_count() or 1)
    torch.manual_seed(spec["seed"])
    total, n, d, alpha = spec["samples"], spec["n"], spec["d"], spec["alpha"]
    batch = min(spec.get("batch") or total, total)
    assert spec["lam"] == 1 and spec["gamma"] == 1, "the tuned stand-in is written for lam = gamma = 1"
    t0, c0 = time.perf_counter(), time.process_time()
    mask = torch.zeros(n, n).masked_fill(torch.ones(n, n).triu(1).bool(), float("-inf"))
    sums = [torch.zeros(n, n, dtype=torch.float64) for _ in range(spec["layers"])]
    done = 0
    while done < total:
        b = min(batch, total - done)
        v = torch.randn(b, n, d)
        v += math.sqrt(alpha / (1 - alpha)) * torch.randn(b, 1, d)
        out = F.normalize(v, dim=-1)
        del v
        for layer in range(spec["layers"]):
            hidden = F.normalize(out, dim=-1)
            attn = torch.baddbmm(mask.expand(b, n, n), hidden, hidden.mT)
            out = torch.baddbmm(out, torch.softmax(attn, dim=-1), hidden)
            sums[layer] += attn.sum(0, dtype=torch.float64)
            del attn, hidden
        done += b
    secs, cpu = time.perf_counter() - t0, time.process_time() - c0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    off = torch.ones(n, n).tril(-1).bool()
    return dict(seconds=secs, cpu_seconds=cpu, peak_rss=peak, baseline_rss=base, threads=torch.get_num_threads(),
                batch=batch, mean_l1=(sums[0] / total)[off].tolist())


def _tuned_torch_se_child(spec: dict) -> dict:
    """The tuned torch stand-in run to a standard error: ``samples`` draws in batches of ``batch`` (the full batch
    of a million draws would not fit), the scores of layer ``layer`` summed in float64 (mean and SE per entry), as a
    user of torch would run it to a target (every layer of the model computed, as the authors' code does); returns
    the largest SD and SE over that layer's entries j < i."""
    import torch
    import torch.nn.functional as F

    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    torch.manual_seed(spec["seed"])
    n, d, alpha, layer = spec["n"], spec["d"], spec["alpha"], spec["layer"]
    assert spec["lam"] == 1 and spec["gamma"] == 1, "the tuned stand-in is written for lam = gamma = 1"
    s1 = torch.zeros(n, n, dtype=torch.float64)
    s2 = torch.zeros(n, n, dtype=torch.float64)
    t0, c0 = time.perf_counter(), time.process_time()
    done = 0
    while done < spec["samples"]:
        b = min(spec["batch"], spec["samples"] - done)
        v = torch.randn(b, n, d)
        v += math.sqrt(alpha / (1 - alpha)) * torch.randn(b, 1, d)
        out = F.normalize(v, dim=-1)
        mask = torch.zeros(n, n).masked_fill(torch.ones(n, n).triu(1).bool(), float("-inf")).expand(b, n, n)
        for q in range(spec["layers"]):  # the whole model, as the authors' code runs it
            hidden = F.normalize(out, dim=-1)
            attn = torch.baddbmm(mask, hidden, hidden.mT)
            if q == layer - 1:
                a = attn.nan_to_num(neginf=0.0).to(torch.float64)
                s1 += a.sum(0)
                s2 += (a * a).sum(0)
                del a
            out = torch.baddbmm(out, torch.softmax(attn, dim=-1), hidden)
        done += b
    secs, cpu = time.perf_counter() - t0, time.process_time() - c0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    mean = s1 / done
    sd = ((s2 / done - mean * mean).clamp_min(0) * done / (done - 1)).sqrt()
    off = torch.ones(n, n).tril(-1).bool()
    return dict(seconds=secs, cpu_seconds=cpu, peak_rss=peak, baseline_rss=base, threads=torch.get_num_threads(),
                max_sd=float(sd[off].max()), max_se=float(sd[off].max() / math.sqrt(done)), samples=done)


def _se_child(spec: dict) -> dict:
    """simulate_scores run to a target SE, as a user calls it (the default estimator choice), in this process."""
    import numpy as np

    from lnrecency.numerics import simulate_scores

    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    layer, target = spec.pop("layer"), spec.pop("se")
    t0, c0 = time.perf_counter(), time.process_time()
    r = simulate_scores(se=target, se_layers=layer, progress=False, **spec)
    secs, cpu = time.perf_counter() - t0, time.process_time() - c0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    off = np.tril(np.ones((r.n, r.n), bool), -1)
    return dict(seconds=secs, cpu_seconds=cpu, peak_rss=peak, baseline_rss=base, samples=r.samples,
                estimator=r.control_variate, max_se=float(np.max(r.stderr[layer - 1][off])))


def run(spec: dict, *, torch_standin: bool = False, tuned: bool = False, flag: str | None = None) -> dict:
    """_child(spec) (or the torch stand-in) in a fresh interpreter."""
    flag = flag or ("--tuned-torch-child" if tuned else "--torch-child" if torch_standin else "--child")
    out = subprocess.run([sys.executable, __file__, flag, json.dumps(spec)], check=True,
                         capture_output=True, text=True, cwd=ROOT,
                         env={**os.environ, "PYTHONPATH": ROOT})
    return json.loads(out.stdout.strip().splitlines()[-1])


def mib(x: float) -> str:
    return f"{x / 2**20:.0f} MiB"


def authors(quick: bool) -> None:
    """The issue's call, numerics.simulate_scores(50, 4, 64, 100000, embedding="normalized", norm="l2",
    residual=True, alpha=0.2) with its default method (gram) and with method="direct", against the two torch
    stand-ins, alternating (notebook torch, ours, ours direct, tuned torch) so that all see the same load; then the
    other options. The full run writes the per-sample rows into docs/library.md."""
    samples = 10000 if quick else 100000
    scale = 100000 / samples
    print(f"\n## Authors' setting: n=50, d=64, 4 layers, l2, residual (gamma=1), normalized embeddings, "
          f"samples={samples}" + (f" (quick: times x{scale:g} extrapolated to 100000)" if quick else ""))
    from lnrecency.numerics.orderings import active_backend

    default = dict(AUTHORS, alpha=0.2, samples=samples, seed=1)
    sweep = {}
    for batch in TORCH_BATCHES:  # the tuned torch's batch size, chosen by its own measured speed (a user's tuning)
        sweep[batch] = run(dict(default, batch=batch), tuned=True)["seconds"]
    best = min(sweep, key=sweep.get)
    print(f"tuned torch batch sweep ({samples:,} draws): " + ", ".join(f"{b or 'all'}: {t:.2f} s"
                                                               for b, t in sweep.items()) + f"; kept {best or 'all'}")
    ratios, tuned_ratios, rows = [], [], []
    for rep in range(1 if quick else 3):
        ref = run(dict(default, seed=rep), torch_standin=True)
        ours = run(dict(default, seed=rep))
        direct = run(dict(default, seed=rep, method="direct"))
        tuned = run(dict(default, seed=rep, batch=best), tuned=True)
        ratios.append(ours["seconds"] / ref["seconds"])
        tuned_ratios.append(ours["seconds"] / tuned["seconds"])
        rows.append({"batch": tuned["batch"], "threads": tuned["threads"],
                     "torch": tuned["seconds"] * scale, "torch_mib": round(tuned["peak_rss"] / 2**20),
                     "ours": ours["seconds"] * scale, "ours_mib": round(ours["peak_rss"] / 2**20),
                     "direct": direct["seconds"] * scale, "direct_mib": round(direct["peak_rss"] / 2**20),
                     "notebook": ref["seconds"] * scale})
        print(f"pair {rep + 1}: tuned torch (F.normalize, baddbmm) {tuned['seconds'] * scale:6.1f} s, peak RSS "
              f"{mib(tuned['peak_rss'])}; ratio ours / tuned {tuned_ratios[-1]:.2f}; method='direct' "
              f"{direct['seconds'] * scale:6.1f} s, ratio {direct['seconds'] / tuned['seconds']:.2f}")
        gap = max(abs(a - b) for a, b in zip(ours["mean_l1"], ref["mean_l1"]))
        print(f"pair {rep + 1}: torch full batch (float32, {ref['threads']} threads) {ref['seconds'] * scale:6.1f} s, "
              f"peak RSS {mib(ref['peak_rss'])}; default simulate_scores (float64, paired, {ours['representation']} "
              f"coordinates, orderings backend {active_backend()!r}) {ours['seconds'] * scale:6.1f} s, peak RSS "
              f"{mib(ours['peak_rss'])} (interpreter+imports {mib(ours['baseline_rss'])}); ratio {ratios[-1]:.2f}; "
              f"largest layer-1 mean gap {gap:.1e} (float32 vs float64 and different draws: "
              f"Monte Carlo noise, SE ~ {ours['max_se_layer2'] * math.sqrt(samples / 100000):.0e})")
    print(f"time ratio ours / torch written like the authors' notebook: {min(ratios):.2f} to {max(ratios):.2f}; "
          f"ours / tuned torch: {min(tuned_ratios):.2f} to {max(tuned_ratios):.2f} "
          f"({len(ratios)} alternating run(s))")
    if not quick:
        write_block(PER_SAMPLE_BEGIN, PER_SAMPLE_END, render_per_sample(rows, _today()))
    for alpha in (0.0, 0.2):
        for method, paired, workers in (("gram", True, None), ("gram", False, None),
                                        ("direct", True, None), ("direct", False, None), ("gram", True, 1)):
            spec = dict(AUTHORS, alpha=alpha, samples=samples, seed=1, method=method, paired=paired)
            r = run(spec if workers is None else dict(spec, workers=workers))
            tag = " (default method and options)" if (method, paired, workers) == ("gram", True, None) else ""
            workers = "auto" if workers is None else workers
            print(f"alpha={alpha:g} method={method:6s} paired={str(paired):5s} workers={workers}: "
                  f"{r['seconds'] * scale:6.1f} s wall ({r['cpu_seconds'] * scale:6.1f} s CPU) per 100000 "
                  f"samples, peak RSS {mib(r['peak_rss'])} "
                  f"(interpreter+numpy {mib(r['baseline_rss'])}), chunk={r['chunk']}, "
                  f"max layer-2 SE {r['max_se_layer2'] * math.sqrt(samples / 100000):.2e} "
                  f"at 100000 samples{tag}")


def breakdown(quick: bool) -> None:
    """Where one chunk's time goes at the authors' setting, on one thread (BLAS held to one thread, as in a
    run), per draw: the draw and embedding, then per layer the normalisation, the two products, the softmax,
    the update, the output norms, and the fused pass over a sub-batch's scores (row moments and ordering
    counts, each backend); and the merge of a chunk into the totals. The whole chunk costs more than the sum
    of its parts: the parts are timed alone, with their data in the cache."""
    import numpy as np

    from lnrecency.model.arithmetic import Arithmetic, causal_mask
    from lnrecency.model.config import make_config
    from lnrecency.numerics.chunks import Accumulator, forward_batch, summarise_chunk
    from lnrecency.numerics.orderings import BACKENDS, accumulate
    from lnrecency.numerics.samplers import Representation, draw_range, embed
    from lnrecency.runtime.child import one_blas_thread

    reps = 3 if quick else 10
    cfg = make_config(None, **{k: v for k, v in AUTHORS.items() if k not in ("n", "layers", "d")}, alpha=0.2)
    n, d, layers = AUTHORS["n"], AUTHORS["d"], AUTHORS["layers"]
    rep = Representation(n, d, "gram")  # the default method: Bartlett coordinates at this setting
    b = 360  # the chunk a default run at this setting takes (CHUNK_BUDGET_BYTES)
    times: dict[str, float] = {}

    def timed(name, fn):
        t0 = time.perf_counter()
        for _ in range(reps):
            out = fn()
        times[name] = (time.perf_counter() - t0) / reps / b * 1e6
        return out

    with one_blas_thread():
        raw = timed("draw (RNG blocks)", lambda: draw_range(rep, 1, 0, b))
        x = timed("embed", lambda: embed(raw, cfg, d))
        norm, update, ar, mask, u = cfg.normalisation, cfg.update, Arithmetic(), causal_mask(n), rep.u
        xs = x[:32]
        per = {}

        def clock(name, fn):
            t0 = time.perf_counter()
            out = fn()
            per[name] = per.get(name, 0.0) + time.perf_counter() - t0
            return out

        def scores(nh):
            s = nh @ nh.swapaxes(1, 2)
            s *= cfg.lam
            return s

        def mask_and_norms(s, o):
            s *= mask
            return np.einsum("bnd,bnd->bn", o, o), o @ u

        def layer_parts():
            h = xs
            for _ in range(layers):
                nh = clock("normalisation", lambda: norm.vectors(h, u))
                s = clock("product S = lam N N^T", lambda: scores(nh))
                w = clock("softmax", lambda: ar.causal_softmax(s, mask, diagonal_is_max=norm.scales))
                o = clock("product o = P N", lambda: w @ nh)
                clock("mask and output norms", lambda: mask_and_norms(s, o))
                h = clock("update", lambda: update.vectors(h, o, float(cfg.gamma)))

        for _ in range(reps * 6):
            layer_parts()
        for name, secs in per.items():
            times[f"layer: {name}"] = secs / (reps * 6) / 32 / layers * 1e6
        s = np.tril(np.random.default_rng(0).standard_normal((b, n, n)))

        batch = forward_batch(n, rep.dim)
        sub = s[:batch]
        ref = sub.mean(axis=0)

        def fused_pass(backend):
            sums = np.zeros((n, n)), np.zeros((n, n, n)), np.zeros((n, n, n), dtype=np.int64)
            accumulate(sub, ref, *sums, np.zeros(batch, dtype=np.int64), backend=backend)

        for backend in BACKENDS:  # per draw of a sub-batch: `timed` divides by b, so rescale
            try:
                timed(f"layer: moments and ordering counts, backend {backend}", lambda: fused_pass(backend))
                times[f"layer: moments and ordering counts, backend {backend}"] *= b / batch
            except ImportError:
                times[f"layer: moments and ordering counts, backend {backend}"] = float("nan")
        summary = summarise_chunk(rep, 1, cfg, layers, True, "none", None, 0, b)
        acc = Accumulator(n, layers, True)
        acc.merge(summary)
        timed("merge of one chunk (main thread)", lambda: acc.merge(summary))
        timed("whole chunk (summarise_chunk)", lambda: summarise_chunk(rep, 1, cfg, layers, True, "none", None, 0, b))
    print(f"\n## Breakdown of one chunk of {b} draws at the authors' setting, default method ({rep.name} coordinates: "
          f"{rep.dim}) (one thread; us per draw; 'layer:' "
          f"rows are per layer, x{layers} layers)")
    for name, us in times.items():
        print(f"{name:58s} {us:8.2f} us")
    parts = times["draw (RNG blocks)"] + times["embed"] + layers * sum(
        v for k, v in times.items() if k.startswith("layer:") and "backend numpy" not in k)
    print(f"sum of the parts with the default backend: {parts:.1f} us per draw "
          f"(whole chunk measured: {times['whole chunk (summarise_chunk)']:.1f} us)")


def batches(quick: bool) -> None:
    """Time per draw of one chunk (summarise_chunk, one thread, best of 5) against the sub-batch of draws a pass
    through the layers takes, at short and long sequences, in both coordinates; the rule
    (numerics.chunks.forward_batch) against the former fixed 32, in the same run."""
    import numpy as np  # noqa: F401  (imported here as in the other sections)

    import lnrecency.numerics.chunks as chunks
    from lnrecency.model.config import make_config
    from lnrecency.numerics.samplers import Representation
    from lnrecency.runtime.child import one_blas_thread

    rule = chunks.forward_batch
    cfg = make_config(None, norm="layernorm", residual=True, alpha=0.2)
    cases = [(8, 64, "gram", 5), (16, 64, "gram", 4), (32, 128, "gram", 4), (16, 256, "direct", 3),
             (50, 64, "direct", 4)]
    sizes = (32, 64, 128, 256, 512)
    print("\n## Sub-batch of a pass through the layers: us per draw of one chunk (layernorm + residual, "
          "alpha 0.2, paired; one thread, best of 5)")
    print(f"{'n, d, coordinates, layers':28s} " + " ".join(f"{b:>7d}" for b in sizes) + "   rule  rule/32")
    try:
        with one_blas_thread():
            for n, d, method, layers in cases:
                rep = Representation(n, d, method)
                b = 1024 if quick else 2048

                def per_draw(size: int) -> float:
                    chunks.forward_batch = lambda n_, dim_: size
                    chunks.summarise_chunk(rep, 1, cfg, layers, True, "none", None, 0, 64)  # warm
                    best = math.inf
                    for _ in range(5):
                        t0 = time.perf_counter()
                        chunks.summarise_chunk(rep, 1, cfg, layers, True, "none", None, 0, b)
                        best = min(best, time.perf_counter() - t0)
                    return best / b * 1e6

                row = [per_draw(size) for size in sizes]
                chosen = rule(n, rep.dim)
                at_rule = row[sizes.index(chosen)] if chosen in sizes else per_draw(chosen)
                print(f"{f'{n}, {d}, {rep.name}, {layers}':28s} " + " ".join(f"{t:7.1f}" for t in row)
                      + f"   {chosen:4d}  {at_rule / row[0]:.2f}")
    finally:
        chunks.forward_batch = rule


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


def equal_se(quick: bool) -> None:
    """Time to SE <= 1e-4 on every layer-2 entry j < i, measured (not predicted), at the authors' 2- and 4-layer
    settings (n 50, d 64, l2, residual, normalised tokens, alpha 0.2): ours as a user calls it (simulate_scores(...,
    se=1e-4): its pilot, its estimator, its run, all timed) against the tuned float32 torch run to the same SE (its
    own pilot of 20,000 draws sizes it, 5% margin, batches of 20,000), alternating torch and ours. --quick: target
    1e-3 (100x fewer draws)."""
    target = 1e-3 if quick else 1e-4
    print(f"\n## Time to equal precision: SE <= {target:g} on every layer-2 entry j < i, authors' setting, measured "
          f"(ours: simulate_scores(..., se={target:g}), pilot and choice included; torch: tuned float32, sized by "
          f"its own pilot)")
    rows = []
    for layers in (2, 4):
        spec = dict(AUTHORS, layers=layers, alpha=0.2)
        torch_spec = dict(spec, layer=2, batch=20000)
        pilot = run(dict(torch_spec, samples=20000, seed=11), flag="--tuned-torch-se-child")
        need = math.ceil((pilot["max_sd"] / target) ** 2 * 1.05)
        torch_run = run(dict(torch_spec, samples=need, seed=12), flag="--tuned-torch-se-child")
        torch_seconds = pilot["seconds"] + torch_run["seconds"]
        ours = run(dict(spec, seed=13, layer=2, se=target), flag="--se-child")
        rows.append({"layers": layers, "target": target, "torch_draws": need, "torch_seconds": round(torch_seconds, 1),
                     "torch_se": torch_run["max_se"], "torch_peak_mib": round(torch_run["peak_rss"] / 2**20),
                     "ours_draws": ours["samples"], "ours_estimator": ours["estimator"],
                     "ours_seconds": round(ours["seconds"], 1), "ours_se": ours["max_se"],
                     "ours_peak_mib": round(ours["peak_rss"] / 2**20)})
        print(f"{layers} layers: tuned torch {need} draws (pilot SD {pilot['max_sd']:.4f}) in {torch_seconds:.1f} s "
              f"wall, achieved max SE {torch_run['max_se']:.2e}, peak RSS {mib(torch_run['peak_rss'])}; ours "
              f"{ours['samples']} draws ({ours['estimator']}) in {ours['seconds']:.1f} s wall, achieved max SE "
              f"{ours['max_se']:.2e}, peak RSS {mib(ours['peak_rss'])}; ours {torch_seconds / ours['seconds']:.1f}x "
              f"ahead")
    if not quick:
        write_block(EQUAL_SE_BEGIN, EQUAL_SE_END, render_equal_se(rows, _today()))
    return rows


DOCS = os.path.join(ROOT, "docs", "library.md")
EQUAL_SE_BEGIN, EQUAL_SE_END = "<!-- equal-se:begin -->", "<!-- equal-se:end -->"
PER_SAMPLE_BEGIN, PER_SAMPLE_END = "<!-- per-sample:begin -->", "<!-- per-sample:end -->"


def _today() -> str:
    import datetime

    return datetime.date.today().isoformat()


#: the batch sizes the tuned torch is tried at (None: every draw in one tensor)
TORCH_BATCHES = (4096, 16384, 65536, None)
#: a time ratio within this band of 1 reads "at parity with"
PARITY = 0.1


def _standing(ratios: list) -> str:
    """Where our time stands against the baseline's, in words read from the measured ratios: "ahead of" when every
    ratio is below 1 - PARITY, "behind" when every one is above 1 + PARITY, else "at parity with"."""
    if max(ratios) < 1 - PARITY:
        return "ahead of"
    if min(ratios) > 1 + PARITY:
        return "behind"
    return "at parity with"


def render_per_sample(rows: list, day: str) -> str:
    """The docs' table of the per-sample comparison at the authors' setting, from its measured runs."""
    from lnrecency.numerics.samplers import Representation

    gram, direct = (Representation(AUTHORS["n"], AUTHORS["d"], method) for method in ("gram", "direct"))
    assert gram.bartlett and not direct.bartlett
    numbers = {"gram": gram.randoms, "direct": direct.randoms}
    ratios = [r["ours"] / r["torch"] for r in rows]
    lines = [PER_SAMPLE_BEGIN, f"Measured by `python3 benchmarks/bench_mc.py --sections authors` on this project's "
             f"2-core machine ({day}), 100,000 draws a run, alternating; the tuned torch in batches of "
             f"{rows[0]['batch']:,} draws (the fastest of {', '.join(f'{b:,}' if b else 'all' for b in TORCH_BATCHES)}"
             f" in the same run), {rows[0]['threads']} threads; random numbers a draw: "
             f"{numbers['gram']:,} (gram, {gram.dim} coordinates) against {numbers['direct']:,} (direct, "
             f"{direct.dim}). Per sample the default is {_standing(ratios)} the tuned torch (time ratio "
             f"{min(ratios):.2f}-{max(ratios):.2f}); every figure is written here by that run:",
             "", "| run | tuned float32 torch | `simulate_scores` (default: gram) | ratio | `method=\"direct\"` "
             "| ratio |",
             "|---|---|---|---|---|---|"]
    for k, r in enumerate(rows, 1):
        lines.append(f"| {k} | {r['torch']:.1f} s, {r['torch_mib']} MiB | {r['ours']:.1f} s, {r['ours_mib']} MiB | "
                     f"{r['ours'] / r['torch']:.2f} | {r['direct']:.1f} s, {r['direct_mib']} MiB | "
                     f"{r['direct'] / r['torch']:.2f} |")
    return "\n".join(lines + [PER_SAMPLE_END])


def render_equal_se(rows: list, day: str) -> str:
    """The docs' table of the equal-precision section, from its measured rows."""
    lines = [EQUAL_SE_BEGIN, f"Measured by `python3 benchmarks/bench_mc.py --sections equal-se` on this project's "
             f"2-core machine ({day}); every figure is written here by that run:", "",
             "| layers | target SE | tuned float32 torch | `simulate_scores(..., se=)` | ahead |",
             "|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['layers']} | {r['target']:g} | {r['torch_draws']:,} draws, {r['torch_seconds']:.1f} s, "
                     f"{r['torch_peak_mib']} MiB (SE {r['torch_se']:.2e}) | {r['ours_draws']:,} draws "
                     f"({r['ours_estimator']}), {r['ours_seconds']:.1f} s, {r['ours_peak_mib']} MiB (SE "
                     f"{r['ours_se']:.2e}) | {r['torch_seconds'] / r['ours_seconds']:.1f}x |")
    return "\n".join(lines + [EQUAL_SE_END])


def write_block(begin: str, end: str, block: str) -> None:
    """Replace the block of docs/library.md between ``begin`` and ``end`` with ``block`` (the rows of this run)."""
    with open(DOCS, encoding="utf-8") as f:
        text = f.read()
    before, rest = text.split(begin, 1)
    after = rest.split(end, 1)[1]
    with open(DOCS, "w", encoding="utf-8") as f:
        f.write(before + block + after)


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


SECTIONS = {"equal-se": equal_se, "authors": authors, "breakdown": breakdown, "batches": batches, "flat": flat,
            "ratio": ratio,
            "se": se_target, "cv": control_variates, "slope": slope}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="smaller sample counts (extrapolated totals)")
    p.add_argument("--sections", nargs="+", choices=sorted(SECTIONS), default=list(SECTIONS))
    p.add_argument("--child", help=argparse.SUPPRESS)
    p.add_argument("--torch-child", help=argparse.SUPPRESS)
    p.add_argument("--tuned-torch-child", help=argparse.SUPPRESS)
    p.add_argument("--tuned-torch-se-child", help=argparse.SUPPRESS)
    p.add_argument("--se-child", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    children = {"child": _child, "torch_child": _torch_child, "tuned_torch_child": _tuned_torch_child,
                "tuned_torch_se_child": _tuned_torch_se_child, "se_child": _se_child}
    for name, fn in children.items():  # a timed run in this fresh interpreter (run())
        if getattr(args, name):
            print(json.dumps(fn(json.loads(getattr(args, name)))))
            return 0
    print(f"# bench_mc.py {'--quick ' if args.quick else ''}on {os.cpu_count()} CPUs, "
          f"load average {os.getloadavg()[0]:.2f} at start")
    for name in args.sections:
        SECTIONS[name](args.quick)
    print(f"\n# load average {os.getloadavg()[0]:.2f} at the end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
