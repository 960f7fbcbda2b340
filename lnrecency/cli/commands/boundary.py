"""`lnrecency boundary`: the first sequence length and row at which an ordering claim fails, per layer."""
from __future__ import annotations

import argparse
import json

from lnrecency.choices import MPMATH_MAX_N, ORDERINGS
from lnrecency.cli.app import add_config_arguments, config_from_args, with_convention
from lnrecency.cli.options import Options

NAME = "boundary"
HELP = ("first sequence length / row at which an ordering (Definition 1) fails at each layer, decided "
        "exactly on the d -> infinity limit up to --n-max")


#: the library's names of the flags that set them otherwise (a refusal names the flag: lnrecency.cli.app.flag_named)
PARAMETER_FLAGS = {"layers": "--layer", "first_layer": "--from-layer"}


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--layer", type=int, required=True, help="deepest layer L (layers 1..L are reported)")
    p.add_argument("--n-max", type=int, required=True, help="longest sequence length searched")
    p.add_argument("--ordering", default="recency", choices=ORDERINGS,
                   help="the claimed ordering of every row (default recency)")
    p.add_argument("--from-layer", type=int, default=1, help="first layer reported (default 1)")
    p.add_argument("--dps", type=int, default=40,
                   help="mpmath digits where float64 cannot resolve a sign (default 40)")
    p.add_argument("--json", action="store_true",
                   help='JSON: {"config", "ordering", "n_max", "layers": [{"layer", "first_failing_n", '
                        '"first_failing_row", "holds_up_to"}, ...]}')
    add_config_arguments(p)


def run(args: Options) -> int:
    from lnrecency.theory.boundary import boundary, check_memory

    cfg = config_from_args(args)
    check_memory(args.layer, args.n_max)  # before any allocation (the time check follows, in boundary)
    res = boundary(args.layer, args.n_max, ordering=args.ordering, config=cfg, dps=args.dps,
                   first_layer=args.from_layer)
    if args.json:
        print(json.dumps(with_convention({"config": cfg.as_dict(), "ordering": args.ordering,
                                          "n_max": args.n_max, "layers": [r.to_json() for r in res]}, args)))
        return 0
    print(f"# {args.ordering} (Definition 1) on rows 1..n, exact d -> infinity limit, {cfg.label()}, "
          f"n <= {args.n_max}")
    print(f"{'layer':>5}  {'first failing n (= row)':>24}  {'holds up to n':>13}  decided in")
    for r in res:
        if r.undecided_from is not None:
            print(f"{r.layer:>5}  {'undecided from ' + str(r.undecided_from):>24}  {r.holds_up_to:>13}  "
                  f"float64 cannot resolve; an mpmath prefix > {MPMATH_MAX_N} rows or above its time "
                  f"limit is not run")
        elif r.holds:
            print(f"{r.layer:>5}  {'-':>24}  {'>= ' + str(args.n_max):>13}  float64 / mpmath")
        else:
            print(f"{r.layer:>5}  {r.first_failing_n:>24}  {r.holds_up_to:>13}  {r.precision}")
    return 0
