"""`lnrecency region`: the values of alpha, lam or gamma where an ordering holds at a layer for every n <= N, as
intervals whose ends are found by root finding on the exact limit and certified by exact decisions on both
sides of each end (lnrecency.theory.region)."""
from __future__ import annotations

import argparse
import json

from lnrecency.cli.app import add_config_arguments, config_from_args, parse_layers
from lnrecency.cli.options import Options

NAME = "region"
HELP = ("where an ordering holds at layer L for every n <= N, as intervals of alpha, lam or gamma with "
        "certified ends (exact limit)")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--layer", required=True, help="layer L, or several as 3,4")
    p.add_argument("--n-max", type=int, required=True, help="every sequence length n <= N")
    p.add_argument("--vary", required=True, help="alpha | lam | gamma")
    p.add_argument("--from", dest="lo", type=float, default=None, help="range start (default alpha 0, lam/gamma 0.05)")
    p.add_argument("--to", dest="hi", type=float, default=None, help="range end (default alpha 0.999, lam 8, gamma 16)")
    p.add_argument("--ordering", default="recency", help="recency | earlier (default recency)")
    p.add_argument("--tol", type=float, default=1e-7, help="width of each end's certified bracket (<= 1e-6)")
    p.add_argument("--json", action="store_true",
                   help='JSON: {"parameter", "n_max", "ordering", "config", "layers": [{"layer", "holds": [[a, b]], '
                        '"fails": [[c, e]], "ends": [...]}]}')
    add_config_arguments(p, convention=False)


def run(args: Options) -> int:
    from lnrecency.runtime.arguments import check_choice
    from lnrecency.theory.region import PARAMETERS, regions

    check_choice("--vary", args.vary, PARAMETERS)
    check_choice("--ordering", args.ordering, ("recency", "earlier"))
    layers = parse_layers(args.layer)
    if args.vary in ("lam", "gamma") and getattr(args, args.vary) is not None:
        raise ValueError(f"--{args.vary} is what --vary {args.vary} varies; give its range with --from / --to")
    cfg = config_from_args(args)
    results = regions(sorted(set(layers)), args.n_max, args.vary, lo=args.lo, hi=args.hi, ordering=args.ordering,
                      config=cfg, tol=args.tol, progress=None)  # on stderr: a bar, or a line every 10 s
    r0 = results[0]
    if args.json:
        print(json.dumps({"parameter": args.vary, "n_max": args.n_max, "ordering": args.ordering,
                          "range": [r0.lo, r0.hi], "tolerance": r0.tol, "scan_points": r0.scan_points,
                          "config": {k: v for k, v in cfg.as_dict().items() if k != args.vary},
                          "layers": [r.to_json() for r in results]}))
        return 0
    fixed = ", ".join(f"{k}={v}" for k, v in cfg.as_dict().items() if k not in (args.vary, "embedding"))
    print(f"# {args.ordering} on every row i <= {args.n_max}, exact limit, {args.vary} in [{r0.lo:g}, {r0.hi:g}] "
          f"({fixed}); ends bracketed to {r0.tol:g}")
    for r in results:
        show = lambda segs: ", ".join(f"[{a:.8g}, {b:.8g}]" for a, b in segs) or "none"  # noqa: E731
        print(f"layer {r.layer}: holds on {show(r.holds)}; fails on {show(r.fails)}")
        for e in r.ends:
            side = "holds below, fails above" if e.holds_below else "fails below, holds above"
            print(f"    end {e.value:.9g} in [{e.lo:.10g}, {e.hi:.10g}] ({side}; first failing row "
                  f"{e.first_failing_row} on the failing side)")
        if r.undecided:
            print(f"    undecided at {len(r.undecided)} scan points (mpmath prefix too long)")
    return 0
