"""`lnrecency finite-width`: the O(1/d) correction c of every expected score (and, with --d, the
first-order expectation limit + c/d), from lnrecency.theory.finite_width."""
from __future__ import annotations

import argparse
import json

from lnrecency.cli.app import add_config_arguments, config_from_args, default_n, with_convention
from lnrecency.cli.options import Options

NAME = "finite-width"
HELP = ("print the 1/d coefficient c of every expected score, E_d S = S_lim + c/d + O(1/d^2), "
        "and with --d the first-order expectation at that width")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--n", type=int, default=None,
                   help="sequence length (default 8; with --convention the authors' S: 10 for v2, 50 for v1)")
    p.add_argument("--layers", type=int, default=2, help="number of layers (default 2)")
    p.add_argument("--d", type=int, default=None, help="width: also print expected = limit + c/d")
    p.add_argument("--measure", type=int, default=None, metavar="SAMPLES",
                   help="with --d: measure the next term E_d S - limit - c/d by Monte Carlo at that width "
                        "(gram sampler, c-free linear control variate, SAMPLES draws)")
    p.add_argument("--seed", type=int, default=0, help="seed of --measure (default 0)")
    p.add_argument("--digits", type=int, default=6, help="significant digits in text mode (1-17)")
    p.add_argument("--json", action="store_true",
                   help='JSON: {"config", "n", "layers", "c", "limit", "variance"[, "d", "expected"]}')
    add_config_arguments(p, embedding=True, width=False)


def run(args: Options) -> int:
    import numpy as np

    from lnrecency.theory.finite_width import finite_width

    if not 1 <= args.digits <= 17:
        raise ValueError(f"--digits must be in [1, 17]; got {args.digits}")
    cfg = config_from_args(args)
    n = default_n(args)
    fw = finite_width(n, args.layers, config=cfg)
    if args.d is not None:
        fw.expected(args.d)  # validates d before printing anything
    elif args.measure is not None:
        raise ValueError("--measure needs --d (the width at which the next term is measured)")
    remainder = None if args.measure is None else measure_remainder(fw, args.d, args.measure, args.seed)
    if args.json:
        out = fw.to_json(args.d)
        if remainder is not None:
            out["remainder"] = remainder
        print(json.dumps(with_convention(out, args)))
        return 0
    g = args.digits
    print(f"# finite-width theory, {cfg.label()} ({cfg.embedding} embeddings), n={n}")
    print(f"# {fw.label}")
    blocks = [("c (1/d coefficient)", fw.c), ("limit S_lim", fw.limit), ("v = d Var_d S", fw.variance)]
    if args.d is not None:
        blocks.append((f"expected at d={args.d}: limit + c/d", fw.expected(args.d)))
    if remainder is not None:
        print(f"# measured next term at d={args.d} ({remainder['samples']} draws): "
              f"max |E_d S - limit - c/d| = {remainder['max_abs']:.3g} (+- {remainder['stderr_at_max']:.2g} "
              f"SE); first-order term max |c/d| = {np.nanmax(np.abs(fw.c)) / args.d:.3g}")
    for layer in range(args.layers):
        for title, arr in blocks:
            print(f"\nlayer {layer + 1}, {title}: rows i = 1..n, columns j = 1..i")
            for i in range(n):
                print(f"i={i + 1:<4d} " + "  ".join(f"{x:.{g}g}" for x in arr[layer, i, :i + 1]))
    return 0


def measure_remainder(fw, d: int, samples: int, seed: int) -> dict:
    """E_d S - limit - c/d by Monte Carlo at width d (gram sampler, linear control variate: its mean is
    exactly 0, so the measurement does not use c); per entry and its maximum, with standard errors."""
    import numpy as np

    from lnrecency.numerics import simulate_scores
    from lnrecency.runtime.arguments import check_int
    from lnrecency.theory.finite_width import nested

    samples = check_int("measure", samples, minimum=2)
    sim = simulate_scores(fw.n, fw.layers, d, samples, seed=seed, method="gram", config=fw.config,
                          paired=False, control_variate="linear")
    r = sim.mean - fw.expected(d)
    low = np.tril(np.ones((fw.n, fw.n), bool))
    at = np.unravel_index(np.nanargmax(np.where(low, np.abs(r), -1.0)), r.shape)

    return {"d": d, "samples": samples, "seed": seed, "control_variate": "linear",
            "max_abs": float(abs(r[at])), "stderr_at_max": float(sim.stderr[at]),
            "at": [int(a) + 1 for a in at], "values": nested(r), "stderr": nested(sim.stderr)}
