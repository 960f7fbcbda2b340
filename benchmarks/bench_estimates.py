"""Estimate against real time for every cost model that refuses work before doing it (issue 33: within 0.5-2x
wherever it allows the work). For each estimator and several sizes over its range it times the real computation
(best of ``--repeats``, on this machine) and prints estimate / real, per estimator the range of the ratio.
``--fit`` refits the estimators' constants to these timings (least squares on log(estimate / real), the
constants on a log scale, each estimate still times its LOAD_MARGIN where it has one) and writes the data and
the fitted constants to benchmarks/estimates.json; the constants are then copied into the modules by hand.

    python3 benchmarks/bench_estimates.py [--repeats 2] [--fit] [--only NAME[,NAME]]

Estimators: limit (float64, mpmath, sympy: lnrecency.theory.limit.estimate_seconds), boundary
(lnrecency.theory.boundary), region (lnrecency.theory.region), sweep (lnrecency.experiments.sweep), finite-width
(lnrecency.theory.finite_width), rollout (lnrecency.theory.rollout),
simulate (lnrecency.numerics.simulate), probe (lnrecency.experiments.probes.probe)
and
train (lnrecency.experiments.decoders.train.train_seconds). The float64 limit's own fit is benchmarks/fit_limit_cost.py.
"""
from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path

import numpy as np

import lnrecency.theory.boundary as boundary_mod
import lnrecency.theory.finite_width as fw_mod
import lnrecency.theory.limit as limit
import lnrecency.theory.region as region_mod
import lnrecency.theory.rollout as rollout_mod
from lnrecency.numerics import simulate_scores
from lnrecency.numerics.simulate import estimate_seconds as sim_estimate
from lnrecency.theory.limit import limit_scores

SWEEP_SMALL = dict(lams=(0.3, 3.0), alphas=(0.0, 0.5))


def best(fn, repeats: int) -> float:
    out = math.inf
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        out = min(out, time.perf_counter() - t)
    return out


def _cases():
    """name -> list of (size label, estimate(), work()); estimate() reads the module constants at call time."""
    from lnrecency.experiments.sweep import SweepGrid
    from lnrecency.experiments.sweep import estimate_seconds as sweep_est

    c: dict = {}
    c["limit float64"] = [(f"n={n}, layers={L}", lambda n=n, L=L: limit.estimate_seconds(n, L),
                           lambda n=n, L=L: limit_scores(n, L, alpha=0.2, residual=True))
                          for n, L in [(64, 2), (256, 4), (1024, 4), (2048, 1), (128, 16)]]
    c["limit mpmath dps=40"] = [(f"n={n}, layers={L}", lambda n=n, L=L: limit.estimate_seconds(n, L, 40),
                                 lambda n=n, L=L: limit_scores(n, L, dps=40))
                                for n, L in [(16, 2), (32, 2), (64, 2), (24, 6)]]
    sym = [(4, 2, 0.0, False), (16, 2, 0.0, False), (24, 2, 0.0, True), (4, 2, 0.2, True), (12, 2, 0.2, True),
           (24, 2, 0.2, True), (64, 1, 0.2, True), (2, 3, 0.0, False)]
    c["limit sympy exact"] = [(f"n={n}, layers={L}, alpha={a}" + (", residual" if r else ""),
                               lambda n=n, L=L, a=a: limit.estimate_seconds(n, L, exact=True, alpha=a),
                               lambda n=n, L=L, a=a, r=r: limit_scores(n, L, exact=True, alpha=a, residual=r))
                              for n, L, a, r in sym]
    bnd = [(4, 100, {}), (4, 1000, {}), (8, 300, {}), (16, 100, {}), (2, 2000, {}),
           (4, 1500, dict(residual=True, gamma=8.0)), (3, 600, dict(alpha=0.5))]
    c["boundary"] = [(f"layers={L}, n_max={n}" + (f", {kw}" if kw else ""),
                      lambda L=L, n=n: boundary_mod.estimate_seconds(L, n),
                      lambda L=L, n=n, kw=kw: boundary_mod.boundary(L, n, **kw)) for L, n, kw in bnd]
    reg = [((3,), 20, "alpha", {}), ((3,), 100, "alpha", {}), ((3, 4), 150, "alpha", {}), ((2,), 50, "lam", {}),
           ((4,), 60, "gamma", dict(residual=True)), ((2, 3, 4, 5), 40, "alpha", dict(lam=3.0)),
           ((3,), 100, "lam", dict(alpha=0.5))]
    c["region"] = [(f"layers={list(Ls)}, n_max={n}, vary {v}" + (f", {kw}" if kw else ""),
                    lambda Ls=Ls, n=n, v=v: region_mod.estimate_seconds(
                        Ls, n, len(region_mod._scan(v, *region_mod.DEFAULT_RANGES[v], region_mod.SCAN))),
                    lambda Ls=Ls, n=n, v=v, kw=kw: region_mod.regions(Ls, n, v, **kw)) for Ls, n, v, kw in reg]
    grids = [(SweepGrid(layers=4, n_max=100, **SWEEP_SMALL), "none", 1, ()),
             (SweepGrid(layers=8, n_max=200), "none", 1, ()),
             (SweepGrid(layers=8, n_max=200), "local", 2, ()),
             (SweepGrid(layers=4, n_max=60, **SWEEP_SMALL), "none", 1, (3,)),
             (SweepGrid(layers=5, n_max=120, **SWEEP_SMALL), "none", 1, (3, 4))]
    c["sweep"] = [(f"{g.size()} settings, layers={g.layers}, n_max={g.n_max}, {s}/{w}"
                   + (f", curves {cv}" if cv else ""),
                   lambda g=g, s=s, w=w, cv=cv: sweep_est(g, scheduler=s, workers=w, curves=cv, curve_points=4),
                   lambda g=g, s=s, w=w, cv=cv: _sweep_run(g, s, w, cv)) for g, s, w, cv in grids]
    c["finite-width"] = [(f"n={n}, layers={L}", lambda n=n, L=L: fw_mod.estimate_seconds(n, L),
                          lambda n=n, L=L: fw_mod.finite_width(n, L))
                         for n, L in [(8, 2), (16, 2), (32, 2), (48, 2), (24, 6), (64, 1)]]
    c["rollout"] = [(f"uniform_rollout n={n}, layers={L}", lambda n=n, L=L: rollout_mod.rollout_seconds(n, L),
                     lambda n=n, L=L: rollout_mod.uniform_rollout(n, L)) for n, L in [(500, 4), (1000, 4), (2000, 2)]]
    c["simulate"] = [(f"n={n}, layers={L}, samples={s}", lambda n=n, L=L, s=s: sim_estimate(n, L, s),
                      lambda n=n, L=L, s=s: simulate_scores(n, L, 64, s, seed=0, method="gram", progress=False))
                     for n, L, s in [(8, 2, 20000), (16, 4, 20000), (32, 2, 5000), (64, 2, 1000)]]
    try:
        from lnrecency.experiments.decoders.decoder import build
        from lnrecency.experiments.decoders.decoder_config import DecoderConfig, TrainSettings
        from lnrecency.experiments.decoders.train import train, train_seconds
        from lnrecency.experiments.probes.probe import ProbeSettings, probe_seconds
        from lnrecency.experiments.probes.probe_decoder import probe_decoder
        from lnrecency.model.config import ModelConfig
    except ImportError:  # the models extra is not installed
        return c
    pr = [(2, 32, 64, 256), (4, 64, 256, 256), (8, 128, 128, 128), (2, 256, 512, 64), (1, 16, 32, 64),
          (4, 512, 64, 16)]
    probe_decoder(build(DecoderConfig.identity_of(ModelConfig(), d=8, layers=1, n=4), 0),
                  ProbeSettings(n=4, sequences=8, seed=0))  # torch's first-call set-up, paid once per process
    c["probe (identity)"] = [
        (f"n={n}, layers={L}, d={d}, sequences={q}", lambda L=L, n=n, d=d, q=q: probe_seconds(L, 1, n, d, q),
         lambda L=L, n=n, d=d, q=q: probe_decoder(build(DecoderConfig.identity_of(ModelConfig(), d=d, layers=L, n=n),
                                                        0), ProbeSettings(n=n, sequences=q, seed=0)))
        for L, n, d, q in pr]
    tr = [(dict(n_layers=2, d_model=64), dict(steps=150, n=32, batch=32)),
          (dict(n_layers=4, d_model=128), dict(steps=60, n=64, batch=32)),
          (dict(n_layers=2, d_model=64, mlp=True), dict(steps=150, n=32, batch=64)),
          (dict(n_layers=1, d_model=32), dict(steps=300, n=16, batch=16)),
          (dict(n_layers=2, d_model=256, mlp=True), dict(steps=20, n=128, batch=16)),
          (dict(n_layers=6, d_model=64), dict(steps=60, n=32, batch=32)),
          (dict(n_layers=2, d_model=128, mlp=True), dict(steps=40, n=256, batch=8)),
          (dict(n_layers=3, d_model=96), dict(steps=100, n=48, batch=128))]
    c["train"] = []
    for arch, run in tr:
        cfg = DecoderConfig(vocab=64, context=run["n"], n_heads=4, **arch)
        st = TrainSettings(task="induction", eval_every=50, **run)
        c["train"].append((f"layers={arch['n_layers']}, d={arch['d_model']}{', mlp' if arch.get('mlp') else ''}, "
                           f"steps={st.steps}, batch={st.batch}, n={st.n}",
                           lambda cfg=cfg, st=st: train_seconds(cfg, st), lambda cfg=cfg, st=st: train(cfg, st)))
    return c


def _sweep_run(grid, scheduler, workers, curves):
    from lnrecency.experiments.sweep import boundary_curves, sweep

    sweep(grid, scheduler=scheduler, workers=workers, progress=False)
    if curves:
        boundary_curves(grid, curves, 4, scheduler=scheduler, workers=workers, progress=False)


#: the constants each --fit adjusts: estimator -> (module, attribute of the dict, keys)
FITTED = {
    "boundary": ("lnrecency.theory.boundary", "BOUNDARY_COST", ("FIXED",)),
    "region": ("lnrecency.theory.region", "REGION_COST", ("FACTOR",)),
    "sweep": ("lnrecency.experiments.sweep", "SWEEP_COST", ("LOCAL_START", "CURVE_FACTOR")),
    "finite-width": ("lnrecency.theory.finite_width", "FW_COST", ("FIXED", "PER_BATCH", "PER_OP")),
    "train": ("lnrecency.experiments.decoders.train", "TRAIN_COST", ("LAYER", "RATE", "EVAL")),
    "probe (identity)": ("lnrecency.experiments.probes.probe_costs", "PROBE_COST", ("PER_SEQUENCE_LAYER", "CUBIC")),
}


def fit(name: str, rows: list, cases: list) -> dict:
    """Least squares on log(estimate / real) over the log of the constants FITTED[name]."""
    import importlib

    from scipy.optimize import least_squares

    mod_name, attr, keys = FITTED[name]
    if not keys:
        return {}
    consts = getattr(importlib.import_module(mod_name), attr)
    x0 = np.log([consts[k] for k in keys])
    real = np.array([r[2] for r in rows])

    def resid(x):
        for k, v in zip(keys, np.exp(x)):
            consts[k] = float(v)
        return np.log([est() for _, est, _ in cases]) - np.log(real)

    res = least_squares(resid, x0)
    resid(res.x)
    return {k: float(f"{consts[k]:.3g}") for k in keys}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=2)
    p.add_argument("--fit", action="store_true")
    p.add_argument("--only", default=None, help="comma-separated estimator names")
    a = p.parse_args()
    saved = limit.check_time
    cases = _cases()
    if a.only:
        cases = {k: v for k, v in cases.items() if k in a.only.split(",")}
    rows: dict = {}
    print(f"{'estimator':20s} {'size':58s} {'estimate s':>10s} {'real s':>9s} {'est/real':>8s}", flush=True)
    for name, items in cases.items():
        for label, est, work in items:
            if name.startswith("limit"):
                limit.check_time = lambda *x, **k: None  # time the work itself, whatever the estimate says
            try:
                real = best(work, 1 if name in ("limit sympy exact", "sweep", "train", "region") else a.repeats)
            finally:
                limit.check_time = saved
            rows.setdefault(name, []).append([label, est(), real])
            r = rows[name][-1]
            print(f"{name:20s} {label:58s} {r[1]:10.3g} {r[2]:9.3g} {r[1] / r[2]:8.2f}", flush=True)
    fits = {}
    if a.fit:
        for name in rows:
            if name in FITTED:
                fits[name] = fit(name, rows[name], cases[name])
                for r, (_, est, _) in zip(rows[name], cases[name]):
                    r[1] = est()
        print("fitted constants:", json.dumps(fits, indent=1))
    print("\nestimate/real per estimator (goal 0.5-2):")
    for name, items in rows.items():
        q = [r[1] / r[2] for r in items]
        print(f"  {name:20s} {min(q):5.2f} - {max(q):5.2f}")
    if a.fit:
        out = Path(__file__).with_name("estimates.json")
        old = json.loads(out.read_text()) if out.exists() else {}
        keep = {k: v for k, v in old.get("rows", {}).items() if k not in rows} if a.only else {}
        allrows = {**keep, **rows}
        ranges = {k: [round(min(r[1] / r[2] for r in v), 2), round(max(r[1] / r[2] for r in v), 2)]
                  for k, v in allrows.items()}
        out.write_text(json.dumps({"ranges": ranges, "rows": allrows, "fits": {**old.get("fits", {}), **fits}},
                                  indent=1) + "\n")


if __name__ == "__main__":
    main()
