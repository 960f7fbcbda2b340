"""`lnrecency bias`: Definition-1 profile of one layer, row by row (lnrecency.experiments.profiler)."""
from __future__ import annotations

import argparse
import json

from lnrecency.cli.app import add_config_arguments, config_from_args, with_convention
from lnrecency.cli.options import Options
from lnrecency.inference.evidence import strict_json as strict

NAME = "bias"
HELP = "classify each row of a layer as recency / earlier / flat / mixed (exact limit or Monte Carlo)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--layer", type=int, required=True, help="layer l >= 1")
    p.add_argument("--n", type=int, required=True, help="sequence length")
    p.add_argument("--method", default="limit", help="limit (exact d -> infinity) or mc (finite d)")
    p.add_argument("--dps", type=int, default=None, help="mpmath digits when float64 cannot resolve (limit)")
    p.add_argument("--d", type=int, default=None, help="width d (mc)")
    p.add_argument("--samples", type=int, default=None, help="Monte Carlo samples (mc)")
    p.add_argument("--seed", type=int, default=None, help="random seed (mc; default 0)")
    p.add_argument("--significance", type=float, default=None,
                   help="mc: bound on P(any sign in the profile wrong), Bonferroni (default 1e-3)")
    p.add_argument("--json", action="store_true",
                   help='JSON {"layer", "method", "n", "config", ..., "rows": [{"i", "bias", ...}]}')
    add_config_arguments(p, embedding=True, width=False)


#: the flags each --method reads; one given to the other method is refused, not ignored (--d also sets the width
#: of the authors' --convention, which both methods read)
METHOD_FLAGS = {"limit": ("dps",), "mc": ("d", "samples", "seed", "significance")}


def run(args: Options) -> int:
    from lnrecency.experiments.profiler import METHODS, bias_profile
    from lnrecency.runtime.arguments import check_choice

    check_choice("--method", args.method, METHODS)
    for method, flags in METHOD_FLAGS.items():
        unused = [f"--{f}" for f in flags if method != args.method and getattr(args, f) is not None
                  and not (f == "d" and args.convention is not None)]
        if unused:
            raise ValueError(f"{', '.join(unused)} goes with --method {method}; this run is --method {args.method}")
    cfg = config_from_args(args)
    given = {k: getattr(args, k) for k in METHOD_FLAGS[args.method] if getattr(args, k) is not None}
    if args.method == "mc":
        given.setdefault("seed", 0)
    prof = bias_profile(args.layer, args.n, config=cfg, method=args.method, **given)
    if args.json:
        print(json.dumps(with_convention(strict(prof.to_json()), args)))
        return 0
    head = f"# layer {args.layer}, {cfg.label()}, n={args.n}, method={args.method}"
    if args.method == "mc":
        m = prof.meta
        head += (f", d={m['d']}, samples={m['samples']}, seed={m['seed']}, significance={m['significance']:g}"
                 f" (k={m['k']:.2f}, {m['comparisons']} comparisons)")
    print(head)
    for r in prof.rows:
        extra = f"  [{r.precision}]" if r.precision != "float64" and not r.stderr else ""
        if r.stderr:
            extra = f"  min z={min(r.z):.2f}  max z={max(r.z):.2f}  resolution={r.resolution:.3g}"
        print(f"i={r.i:<4d} {r.bias}{extra}")
    print("summary: " + ", ".join(f"{k} {v}" for k, v in prof.summary().items()))
    return 0
