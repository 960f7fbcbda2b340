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
    p.add_argument("--json", action="store_true",
                   help="JSON output: {config, n, layers, dps, scores} (and rollout with --rollout)")
    p.add_argument("--rollout", action="store_true",
                   help="also the attention rollout R^(l) = A^(l) ... A^(1), the cumulative probability over the "
                        "input tokens that Wu et al.'s Theorem 4.1 is about (float64; lnrecency.theory.rollout)")
    p.add_argument("--mix", default=None,
                   help="with --rollout: auto (default: the residual-aware mix (I + gamma P) / (1 + gamma) when "
                        "--residual is on, else P), attention, residual")
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
    if args.mix is not None and not args.rollout:
        raise ValueError(f"--mix {args.mix}: goes with --rollout")
    if args.rollout:
        from lnrecency.runtime.arguments import check_choice
        from lnrecency.theory.rollout import MIXES, limit_rollout

        check_choice("--mix", args.mix or "auto", MIXES)
        if args.dps is not None:
            raise ValueError(f"--dps {args.dps}: the rollout is computed in float64; leave --dps out with --rollout")
        rollout = limit_rollout(n, args.layers, config=cfg, mix=args.mix or "auto")
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
        out = {"config": cfg.as_dict(), "n": n, "layers": args.layers, "dps": args.dps, "scores": rows}
        if args.rollout:
            out["rollout"] = [[[float(x) for x in row[:i]] for i, row in enumerate(layer, start=1)]
                              for layer in rollout]
            out["rollout_mix"] = args.mix or "auto"
        print(json.dumps(with_convention(out, args)))
        return 0
    print(f"# exact d -> infinity limit, {cfg.label()}, n={n}"
          + ("" if args.dps is None else f", mpmath dps={args.dps}"))
    for layer_index, layer in enumerate(s, start=1):
        print(f"\nlayer {layer_index}: S[i, j] (rows i = 1..n, columns j = 1..i)")
        for i, row in enumerate(layer, start=1):
            cells = [mpmath.nstr(x, digits) if args.dps else f"{x:.{digits}g}" for x in row[:i]]
            print(f"i={i:<4d} " + "  ".join(cells))
        if args.rollout:
            print(f"layer {layer_index}: rollout R[i, j] (cumulative probability over input tokens j <= i)")
            for i, row in enumerate(rollout[layer_index - 1], start=1):
                print(f"i={i:<4d} " + "  ".join(f"{x:.{digits}g}" for x in row[:i]))
    return 0
