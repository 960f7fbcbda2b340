"""`lnrecency compare`: theory against simulation for any setting, one table per quantity and layer (the exact limit,
limit + c/d, the Monte Carlo mean and SE, their z-scores, the calibrated decision with its tolerance), from
:func:`lnrecency.experiments.compare.compare`."""
from __future__ import annotations

import argparse
import sys

from lnrecency.cli.app import add_config_arguments, config_from_args, parse_number
from lnrecency.cli.options import Options, png_path

NAME = "compare"
HELP = ("theory against Monte Carlo for a setting of your own: per quantity (scores, output norm and variance, h(j)) "
        "and layer, the exact limit, limit + c/d, the MC mean +- SE, z-scores and a calibrated decision")
EPILOG = ("example: lnrecency compare --norm layernorm --residual --alpha 0.3 --d 64 --n 6 --quantity scores; "
          "the decision rule, the family-wise rate and the remainder bound: lnrecency.experiments.compare "
          "(docs/finite-width.md)")


def _alphas(text: str) -> tuple:
    try:
        out = tuple(parse_number(t) for t in text.split(",") if t.strip())
    except argparse.ArgumentTypeError as exc:
        raise argparse.ArgumentTypeError(f"expected comma-separated alphas; {exc}") from None
    if not out:
        raise argparse.ArgumentTypeError(f"expected comma-separated alphas; got {text!r}")
    return out


def add_arguments(p: argparse.ArgumentParser) -> None:
    from lnrecency.choices import COMPARE_ESTIMATORS as ESTIMATORS
    from lnrecency.choices import COMPARE_QUANTITIES as QUANTITIES

    p.add_argument("--d", type=int, default=64, help="width d of the Monte Carlo (default 64)")
    p.add_argument("--n", type=int, default=6, help="sequence length (default 6; at most 64)")
    p.add_argument("--layers", type=int, default=2, help="number of layers (default 2)")
    p.add_argument("--quantity", default=None, metavar="LIST",
                   help=f"comma list of {', '.join(QUANTITIES)} (default every one that applies: all but h with "
                        f"--residual)")
    p.add_argument("--alphas", type=_alphas, default=None, metavar="LIST",
                   help="several alphas, e.g. 0,0.3,0.6 (h(j) against alpha); replaces --alpha")
    p.add_argument("--samples", type=int, default=None,
                   help="Monte Carlo draws at d and at each reference width (default 20000; with --se the most it "
                        "may take)")
    p.add_argument("--se", type=float, default=None,
                   help="a target standard error: draw until every entry's SE is at most SE (a pilot chooses the "
                        "samples)")
    p.add_argument("--seed", type=int, default=0, help="seed (default 0; the references use seed+1 and seed+2)")
    p.add_argument("--estimator", default="linear", choices=ESTIMATORS,
                   help="the scores' control variate: linear (mean exactly 0, independent of the c under test; "
                        "default) or none")
    p.add_argument("--fwer", type=float, default=0.01,
                   help="family-wise false-alarm rate of the whole call (default 0.01; half to the checks, half to "
                        "the remainder bound)")
    p.add_argument("--d-ref", type=int, default=None,
                   help="width at which the O(1/d^2) remainder is measured, with twice it (default max(2 + removed "
                        "directions, d // 8))")
    p.add_argument("--format", default="md", choices=("md", "csv", "tex", "json"),
                   help="what is printed: Markdown tables (default), CSV, LaTeX, or one JSON document")
    p.add_argument("--out", default=None, metavar="DIR",
                   help="also write every table as .md, .csv, .tex and .json into this folder (published "
                        "atomically), with compare.json")
    p.add_argument("--figure", default=None, metavar="FILE.png",
                   help="draw the theory (limit and limit + c/d) against the Monte Carlo points (2 SE bars) into "
                        "this PNG")
    p.add_argument("--scheduler", default="none",
                   help="where the Monte Carlo chunks run: 'none' (threads here, default), 'local' (a local Dask "
                        "cluster of --workers processes) or a Dask scheduler address; same bytes")
    p.add_argument("--workers", type=int, default=2, help="worker processes of a local Dask cluster (default 2)")
    add_config_arguments(p, embedding=True, width=False)


def run(args: Options) -> int:
    import json

    from lnrecency.choices import COMPARE_QUANTITIES as QUANTITIES
    from lnrecency.experiments.compare import compare
    from lnrecency.runtime.arguments import check_choice
    from lnrecency.runtime.distributed import check_workers

    cfg = config_from_args(args)
    quantities = None
    if args.quantity is not None:
        quantities = tuple(q.strip() for q in args.quantity.split(",") if q.strip())
        if not quantities:
            raise ValueError(f"--quantity must be a comma list of {', '.join(QUANTITIES)}; got {args.quantity!r}")
        for q in quantities:
            check_choice("--quantity", q, QUANTITIES)
    if args.alphas is not None and args.alpha != 0.0:
        raise ValueError(f"--alphas {','.join(f'{a:g}' for a in args.alphas)} replaces --alpha; got --alpha "
                         f"{args.alpha:g} too")
    figure = None if args.figure is None else png_path("--figure", args.figure)
    if args.out is not None:
        from lnrecency.files.atomic import check_out

        check_out(args.out)
    check_workers(args.workers)
    kw = dict(d=args.d, n=args.n, layers=args.layers, quantities=quantities, alphas=args.alphas,
              samples=args.samples, se=args.se, seed=args.seed, estimator=args.estimator, fwer=args.fwer,
              d_ref=args.d_ref, config=cfg, progress=None)
    if args.scheduler == "none":
        res = compare(**kw)
    else:
        from lnrecency.runtime.distributed import executor

        with executor(args.scheduler, args.workers) as ex:
            res = compare(executor=ex, **kw)
    tables = res.tables()
    if args.out is not None:
        from lnrecency.files.atomic import atomic_write_text, publish, staged_directory

        names = [f"{t.name}.{f}" for t in tables for f in ("md", "csv", "tex", "json")] + ["compare.json"]
        with staged_directory(args.out, names) as stage:
            for t in tables:
                t.write(stage)
            atomic_write_text(stage / "compare.json", json.dumps(res.to_json(), allow_nan=False, indent=1) + "\n")
            publish(stage, args.out)
    if figure is not None:
        from lnrecency.files.figure_record import ReportFigure

        ReportFigure(figure.stem, "theory against Monte Carlo", res.config_label(), res.figure()).write(
            figure.parent, ("png",))
    if args.format == "json":
        print(json.dumps(res.to_json(), allow_nan=False))
    else:
        print("\n\n".join(t.render(args.format) for t in tables))
    flagged = res.flagged()
    print(f"# {len(flagged)} of {len(res.entries)} entries differ from limit + c/d beyond their tolerance "
          f"(family-wise false-alarm rate {res.fwer:g})"
          + (": " + ", ".join(f"{e.quantity} layer {e.layer} ({e.i},{e.j}) alpha {e.alpha:g}" for e in flagged[:8])
             + (" ..." if len(flagged) > 8 else "") if flagged else ""), file=sys.stderr)
    return 0
