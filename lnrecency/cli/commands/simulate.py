"""`lnrecency simulate`: finite-width Monte Carlo means +- standard errors of the scores S^(l)_ij."""
from __future__ import annotations

import argparse
import json

from lnrecency.cli.app import add_config_arguments, config_from_args, default_n, with_convention
from lnrecency.cli.options import Options
from lnrecency.runtime.arguments import check_int

NAME = "simulate"
RP_MAX_N = 100  # beyond, the recency probability (paired accumulators, 16 L n^3 bytes) is not computed
HELP = "Monte Carlo mean +- SE of the scores S^(l)_ij at finite width d (direct or d-independent gram)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--n", type=int, default=None,
                   help="sequence length (default 8; with --convention the authors' S: 10 for v2, 50 for v1)")
    p.add_argument("--layers", type=int, default=2, help="number of layers (default 2)")
    p.add_argument("--d", type=int, default=64, help="width d (default 64)")
    p.add_argument("--samples", type=int, default=None,
                   help="Monte Carlo samples (default 10000; with --se, the most it may take)")
    p.add_argument("--se", type=float, default=None,
                   help="a target standard error: draw until every score entry's SE is at most SE, the estimator "
                        "(the quadratic control variate where it applies) and the samples chosen by a pilot of "
                        "2048 draws; the samples used are printed")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--method", default="gram", help="direct or gram (default gram: cost independent of d)")
    p.add_argument("--chunk", type=int, default=None, help="samples per chunk (default: from a memory budget)")
    p.add_argument("--control-variate", default=None, choices=("none", "linear", "quadratic"),
                   help="subtract a Taylor polynomial of the scores with known mean (finite-width "
                        "theory): linear (c-free) or quadratic (sharpest); default none (with --se: chosen)")
    p.add_argument("--scheduler", default="none",
                   help="where the chunks run: 'none' (threads of this process, default), 'local' (a local "
                        "Dask cluster of --workers processes) or a Dask scheduler address; same bytes")
    p.add_argument("--workers", type=int, default=2,
                   help="worker processes of a local Dask cluster (default 2; at most the usable cores)")
    p.add_argument("--digits", type=int, default=5, help="digits printed (default 5)")
    p.add_argument("--json", action="store_true",
                   help="JSON output: {config, n, layers, d, samples, seed, method, mean, stderr, "
                        "recency_probability, convention (with --convention)}")
    add_config_arguments(p, embedding=True, width=False)


def run(args: Options) -> int:
    from lnrecency.runtime.arguments import check_choice, check_real
    from lnrecency.runtime.distributed import check_workers

    # every flag checked first, before numpy and the Monte Carlo load (about 2.7 s on a loaded machine)
    check_int("digits", args.digits, minimum=1, maximum=17)
    check_int("--seed", args.seed, minimum=0)
    if args.se is not None:
        check_real("--se", args.se, low=0.0, low_open=True)
    check_workers(args.workers)  # bounded by the usable cores whatever the scheduler (more only queue up)
    cfg = config_from_args(args)
    n = check_int("--n", default_n(args), minimum=1)
    check_int("--layers", args.layers, minimum=1)
    removed = cfg.normalisation.removed
    if args.d < removed + 1:
        why = f" for --norm {cfg.norm} (centring leaves d - {removed} directions)" if removed else ""
        raise ValueError(f"--d must be an integer >= {removed + 1}{why}; got {args.d}")
    for flag, value, least in (("--samples", args.samples, 2), ("--chunk", args.chunk, 1)):
        if value is not None:
            check_int(flag, value, minimum=least)
    check_choice("--method", args.method, ("direct", "gram"))
    import numpy as np

    from lnrecency.numerics import estimate_memory, simulate_scores

    rp_on = 3 <= n <= RP_MAX_N  # RP needs the paired accumulators: 16 * layers * n^3 bytes
    samples = args.samples if args.samples is not None or args.se is not None else 10000
    kw = dict(seed=args.seed, method=args.method, chunk=args.chunk, config=cfg, paired=rp_on, progress=True,
              control_variate=args.control_variate if args.control_variate is not None or args.se is not None
              else "none", se=args.se)
    if args.scheduler == "none":
        r = simulate_scores(n, args.layers, args.d, samples, **kw)
    else:
        from lnrecency.runtime.distributed import executor

        estimate_memory(n, args.layers, args.d, method=args.method)  # validates before a cluster starts
        with executor(args.scheduler, args.workers) as ex:
            r = simulate_scores(n, args.layers, args.d, samples, executor=ex, **kw)
    rp = [r.recency_probability(layer) for layer in range(1, r.layers + 1)] if rp_on else []
    if args.json:
        def rows(a):
            return [[[None if np.isnan(x) else float(x) for x in row] for row in layer] for layer in a]
        print(json.dumps(with_convention({"config": cfg.as_dict(), "n": n, "layers": args.layers, "d": args.d,
                          "samples": r.samples, "se_target": args.se, "seed": args.seed, "method": args.method,
                          "control_variate": r.control_variate,
                          "mean": rows(r.mean), "stderr": rows(r.stderr),
                          "output_sq_norm_mean": r.output_sq_norm_mean.tolist(),
                          "output_sq_norm_stderr": r.output_sq_norm_stderr.tolist(),
                          "recency_probability": [{"layer": k, "estimate": e.mean, "stderr": e.stderr}
                                                  for k, e in enumerate(rp, start=1)] if rp_on else None},
                                         args)))
        return 0
    print(f"# Monte Carlo at d={args.d}, {cfg.label()}, embedding={cfg.embedding}, n={n}, "
          f"samples={r.samples}{f' (chosen for se <= {args.se:g})' if args.se is not None else ''}, "
          f"seed={args.seed}, method={args.method}, control variate "
          f"{r.control_variate}: mean +- standard error")
    g = args.digits
    for layer in range(r.layers):
        print(f"\nlayer {layer + 1}: S[i, j] (rows i = 1..n, columns j = 1..i)")
        for i in range(r.n):
            cells = [f"{r.mean[layer, i, j]:.{g}g}+-{r.stderr[layer, i, j]:.2g}" for j in range(i + 1)]
            print(f"i={i + 1:<4d} " + "  ".join(cells))
        print("|o_i|^2: " + "  ".join(f"{m:.{g}g}+-{s:.2g}" for m, s in
                                      zip(r.output_sq_norm_mean[layer], r.output_sq_norm_stderr[layer])))
        if rp:
            print(f"recency probability RP (triples j < k < i, fraction with S_ik > S_ij): "
                  f"{rp[layer].mean:.{g}g} +- {rp[layer].stderr:.2g}")
    return 0
