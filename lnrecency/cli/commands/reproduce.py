"""`lnrecency reproduce`: the authors' simulation figures in their convention, beside our theory."""
from __future__ import annotations

import argparse

from lnrecency.choices import DEFAULT_SAMPLES, FIGURE_KEYS
from lnrecency.cli.options import Options
from lnrecency.model.authors_presets import CONVENTIONS

NAME = "reproduce"
HELP = ("regenerate the authors' figures (authors-v2 convention) panel by panel with RP +- SE, beside our "
        "limit and first-order theory, plus a table of every panel")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--convention", default="authors-v2", choices=tuple(CONVENTIONS),
                   help="whose figures: authors-v2 (the paper, default) or authors-v1 (its first version)")
    p.add_argument("--figure", default="all", choices=FIGURE_KEYS + ("all",),
                   help="which figure (v2: 1-5, A1, A2 appendix; v1: v1-l2norm, v1-l2norm_alpha, v1-layernorm; "
                        "docs/authors.md lists each figure's file) or all of the convention's (default)")
    p.add_argument("--samples", type=int, default=None,
                   help=f"draws per (row, d) (default {DEFAULT_SAMPLES['authors-v2']} for authors-v2, "
                        f"{DEFAULT_SAMPLES['authors-v1']} for authors-v1; the authors used 10000000 and 100000)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--out", required=True,
                   help="output folder (published atomically; files lnrecency did not write are kept)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


def run(args: Options) -> int:
    from lnrecency.experiments.authors.reproduce import reproduce

    files = reproduce(args.out, figure=args.figure, samples=args.samples, seed=args.seed,
                      progress=False if args.no_progress else None, convention=args.convention)
    print(f"wrote {len(files)} files to {args.out}")
    return 0
