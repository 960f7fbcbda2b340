"""`lnrecency sweep`: phase diagrams over (residual, gamma, lam, alpha) and layers, on Dask or in process."""
from __future__ import annotations

import argparse

from lnrecency.cli.app import parse_layers, parse_number
from lnrecency.cli.options import Options
from lnrecency.model.config import NORMS

NAME = "sweep"
#: the deepest layer a phase diagram draws (one line per layer; deep stacks converge to the flat fixed point):
#: a bound checked before any work. Measured: --layers 64 --n-max 10 takes 8.5 s on 2 cores; the unbounded
#: --layers 100000 ran for minutes, its rows needing mpmath prefixes that no up-front estimate can bound usefully.
MAX_LAYERS = 64
HELP = ("phase diagram: where recency / earlier-token bias / mixed rows hold per layer and sequence length "
        "(exact limit), over a grid of settings; runs on a local Dask cluster by default")


def _floats(text: str) -> tuple:
    try:
        return tuple(parse_number(t) for t in text.split(",") if t.strip())
    except argparse.ArgumentTypeError as exc:
        raise argparse.ArgumentTypeError(f"expected comma-separated numbers; {exc}") from None


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--norm", default="layernorm", help=f"one of {', '.join(NORMS)} (default layernorm)")
    p.add_argument("--residual", default="both", choices=("off", "on", "both"),
                   help="residual settings swept (default both)")
    p.add_argument("--gamma", type=_floats, default=(1.0, 8.0), help="residual weights (default 1,8)")
    p.add_argument("--lam", type=_floats, default=(0.3, 1.0, 3.0, 8.0), help="default 0.3,1,3,8")
    p.add_argument("--alpha", type=_floats, default=(0.0, 0.25, 0.5, 0.75), help="default 0,0.25,0.5,0.75")
    p.add_argument("--layers", type=int, default=8, help="deepest layer (layers 2..L; default 8)")
    p.add_argument("--n-max", type=int, default=200, help="longest sequence length searched (default 200)")
    p.add_argument("--out", required=True,
                   help="output folder (published atomically; files lnrecency did not write are kept)")
    p.add_argument("--scheduler", default="local",
                   help="'local' (start a local Dask cluster, default), a scheduler address "
                        "(tcp://host:8786), or 'none' (this process)")
    p.add_argument("--workers", type=int, default=None,
                   help="worker processes of a local cluster (default 2); with a scheduler address, the workers it "
                        "has (for the time estimate); not with --scheduler none")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--curves", default=None, metavar="LAYERS",
                   help="also draw where recency fails as curves alpha*(lam) and alpha*(gamma) at these layers "
                        "(e.g. 3 or 3,4; each point a certified lnrecency region)")
    p.add_argument("--curve-points", type=int, default=12, help="lam / gamma values per curve (default 12)")


def run(args: Options) -> int:
    from lnrecency.experiments.sweep import SweepGrid, check_time, write_sweep
    from lnrecency.runtime.arguments import check_choice, check_int, check_real

    check_choice("norm", args.norm, NORMS)
    check_int("layers", args.layers, minimum=2, maximum=MAX_LAYERS)
    check_int("n_max", args.n_max, minimum=3)
    if args.scheduler == "none" and args.workers is not None:
        raise ValueError(f"--workers {args.workers}: --scheduler none runs the sweep in this process; --workers "
                         f"goes with --scheduler local or a scheduler address")
    workers = 2 if args.workers is None else args.workers
    if args.scheduler == "local":
        from lnrecency.runtime.distributed import check_workers

        check_workers(workers)
    check_int("workers", workers, minimum=1, maximum=4096)
    for name, values in (("gamma", args.gamma), ("lam", args.lam), ("alpha", args.alpha)):
        if not values:
            raise ValueError(f"--{name} needs at least one value")
        for v in values:
            if name == "alpha":
                check_real("alpha", v, low=0.0, high=1.0, high_open=True)
            else:
                check_real(name, v, low=0.0, low_open=True)
    res = {"off": ((False, 1.0),), "on": tuple((True, g) for g in args.gamma)}
    res["both"] = res["off"] + res["on"]
    grid = SweepGrid(args.norm, res[args.residual], tuple(args.lam), tuple(args.alpha), args.layers, args.n_max)
    curves = ()
    if args.curves is not None:

        curves = tuple(parse_layers(args.curves, "--curves"))
        for layer in curves:
            check_int("--curves layer", layer, minimum=2, maximum=args.layers)
        check_int("--curve-points", args.curve_points, minimum=2, maximum=200)
    check_time(grid, scheduler=args.scheduler, workers=workers, curves=curves,
               curve_points=args.curve_points)  # the whole sweep, refused before any work
    from lnrecency.theory.boundary import check_memory

    check_memory(args.layers, args.n_max)
    files = write_sweep(args.out, grid, scheduler=args.scheduler, workers=workers,
                        progress=False if args.no_progress else None, curves=curves, curve_points=args.curve_points)
    print(f"wrote {len(files)} files ({grid.size()} settings x layers 2..{grid.layers}) to {args.out}")
    return 0
