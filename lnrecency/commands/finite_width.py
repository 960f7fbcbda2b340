"""`lnrecency finite-width`: the O(1/d) correction c of every expected score (and, with --d, the
first-order expectation limit + c/d), from lnrecency.theory.finite_width."""
from __future__ import annotations

import argparse
import json

import numpy as np

from lnrecency.cli import add_config_arguments, config_from_args
from lnrecency.theory.finite_width import finite_width

NAME = "finite-width"
HELP = ("print the 1/d coefficient c of every expected score, E_d S = S_lim + c/d + O(1/d^2), "
        "and with --d the first-order expectation at that width")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--n", type=int, default=8, help="sequence length (default 8)")
    p.add_argument("--layers", type=int, default=2, help="number of layers (default 2)")
    p.add_argument("--d", type=int, default=None, help="width: also print expected = limit + c/d")
    p.add_argument("--digits", type=int, default=6, help="significant digits in text mode (1-17)")
    p.add_argument("--json", action="store_true",
                   help='JSON: {"config", "n", "layers", "c", "limit", "variance"[, "d", "expected"]}')
    add_config_arguments(p, embedding=True)


def run(args: argparse.Namespace) -> int:
    if not 1 <= args.digits <= 17:
        raise ValueError(f"--digits must be in [1, 17]; got {args.digits}")
    cfg = config_from_args(args)
    fw = finite_width(args.n, args.layers, config=cfg)
    if args.d is not None:
        fw.expected(args.d)  # validates d before printing anything
    if args.json:
        print(json.dumps(fw.to_json(args.d)))
        return 0
    g = args.digits
    print(f"# finite-width theory, {cfg.label()} ({cfg.embedding} embeddings), n={args.n}")
    print(f"# {fw.label}")
    blocks = [("c (1/d coefficient)", fw.c), ("limit S_lim", fw.limit), ("v = d Var_d S", fw.variance)]
    if args.d is not None:
        blocks.append((f"expected at d={args.d}: limit + c/d", fw.expected(args.d)))
    for layer in range(args.layers):
        for title, arr in blocks:
            print(f"\nlayer {layer + 1}, {title}: rows i = 1..n, columns j = 1..i")
            for i in range(args.n):
                print(f"i={i + 1:<4d} " + "  ".join(f"{x:.{g}g}" for x in arr[layer, i, :i + 1]))
    return 0
