"""`lnrecency limit`: the exact d -> infinity expected scores E[S^(l)_ij], layer by layer."""
from __future__ import annotations

import argparse
import json

from lnrecency.cli.app import add_config_arguments, config_from_args, default_n, with_convention
from lnrecency.cli.options import Options

NAME = "limit"
HELP = "print the exact d -> infinity expected scores S^(l)_ij (float64 or mpmath)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--n", type=int, default=None,
                   help="sequence length (default 8; with --convention the authors' S: 10 for v2, 50 for v1)")
    p.add_argument("--layers", type=int, default=2, help="number of layers (default 2)")
    p.add_argument("--dps", type=int, default=None, help="mpmath significant digits (default: float64)")
    p.add_argument("--digits", type=int, default=None,
                   help="significant digits printed (default 6 in float64, --dps with --dps)")
    p.add_argument("--json", action="store_true", help="JSON output: {config, n, layers, dps, scores}")
    add_config_arguments(p)


def run(args: Options) -> int:
    from lnrecency.runtime.arguments import check_int

    cfg = config_from_args(args)  # a bad model or size is refused before numpy and sympy load
    check_int("n", default_n(args))
    check_int("layers", args.layers)
    import mpmath
    import numpy as np

    from lnrecency.theory.limit import limit_scores

    n = default_n(args)
    top = 17 if args.dps is None else args.dps
    digits = args.digits
    if digits is None:
        digits = 6 if args.dps is None else args.dps
    if not 1 <= digits <= top:
        raise ValueError(f"--digits must be in [1, {top}] ({'float64' if args.dps is None else '--dps'}); "
                         f"got {digits}")
    s = limit_scores(n, args.layers, config=cfg, dps=args.dps)
    if args.json:
        def cell(x):
            if args.dps is None:
                return None if np.isnan(x) else float(x)
            return None if mpmath.isnan(x) else mpmath.nstr(x, args.dps)
        rows = [[[cell(x) for x in row] for row in layer] for layer in s]
        print(json.dumps(with_convention({"config": cfg.as_dict(), "n": n, "layers": args.layers,
                                          "dps": args.dps, "scores": rows}, args)))
        return 0
    print(f"# exact d -> infinity limit, {cfg.label()}, n={n}"
          + ("" if args.dps is None else f", mpmath dps={args.dps}"))
    for layer_index, layer in enumerate(s, start=1):
        print(f"\nlayer {layer_index}: S[i, j] (rows i = 1..n, columns j = 1..i)")
        for i, row in enumerate(layer, start=1):
            cells = [mpmath.nstr(x, digits) if args.dps else f"{x:.{digits}g}" for x in row[:i]]
            print(f"i={i:<4d} " + "  ".join(cells))
    return 0
