"""`lnrecency report`: theory-vs-simulation tables, figures and index.md for reviewers."""
from __future__ import annotations

import argparse

from lnrecency.cli.options import Options
from lnrecency.files.table_record import REPORT_FORMATS, parse_formats

NAME = "report"
HELP = "write the reviewer report (tables in md/csv/tex/json, PNG+PDF figures (--quick: PNG), index.md) into a folder"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", default="report", help="output folder (default ./report)")
    from lnrecency.claims.catalog import cost, duration

    quick = cost("report --quick")
    p.add_argument("--quick", action="store_true",
                   help="small settings instead of the default" + ("" if quick is None else
                        f" ({duration(quick['seconds'])} on 2 cores with nothing cached, measured {quick['date']})"))
    p.add_argument("--format", default=",".join(REPORT_FORMATS),
                   help=f"comma-separated formats among {', '.join(REPORT_FORMATS)} (default all; html: one "
                        f"self-contained page, index.html, beside index.md)")
    p.add_argument("--seed", type=int, default=0, help="Monte Carlo seed (default 0); same seed, same bytes")
    p.add_argument("--from", dest="evidence", default=None, metavar="DIR",
                   help="render from the evidence `lnrecency verify --out DIR` wrote, computing nothing (the "
                        "settings are the evidence's: --quick, --seed, --convention are refused with it)")
    p.add_argument("--evidence-out", default=None, metavar="DIR",
                   help="also write this run's evidence into DIR: the files `lnrecency verify --out DIR` writes for "
                        "the same settings, byte for byte, from the same computation (`report --from DIR` renders "
                        "this report again)")
    cache = p.add_mutually_exclusive_group()
    cache.add_argument("--no-cache", action="store_true",
                       help="read no cached result (a hermetic report: the claims on trained and real models read "
                            "'not run'; what else ran on this machine changes nothing) and draw every figure (no "
                            "figure cache; with --from too)")
    cache.add_argument("--cache", default=None, metavar="DIR",
                       help="read cached results (and keep drawn figures) in DIR instead of $LNRECENCY_CACHE (default "
                            "~/.cache/lnrecency)")
    p.add_argument("--convention", default="authors-v2", choices=("authors-v2", "authors-v1"),
                   help="the authors' convention of the report's 'authors' simulation' section (default "
                        "authors-v2: the paper's Figure 1; authors-v1: its first version's LayerNorm figure)")


def _index(formats) -> str:
    """The page to open: the self-contained HTML page where it was written, else index.md (written always)."""
    return "index.html" if "html" in formats else "index.md"


def run(args: Options) -> int:
    formats = parse_formats(args.format, REPORT_FORMATS)  # flags are refused before the report's libraries load
    from lnrecency.runtime.arguments import check_int

    check_int("--seed", args.seed, minimum=0)  # here, not after the report's imports (14-30 s under load)
    if args.evidence is not None and (args.quick or args.seed != 0 or args.convention != "authors-v2"):
        raise ValueError("--from renders the evidence with its own settings; drop --quick, --seed and "
                         "--convention (they were fixed by lnrecency verify --out)")
    if args.evidence is not None and args.evidence_out is not None:
        raise ValueError("--from renders stored evidence and computes none; drop --evidence-out (the folder --from "
                         "names is the evidence)")
    import contextlib
    import tempfile
    from pathlib import Path

    from lnrecency.files.atomic import check_out
    from lnrecency.files.store import EVIDENCE_FILES, check_store_folder

    # every path checked here, before the report's libraries load (1-2 s and 170 MiB)
    if args.cache is not None and not args.cache.strip():
        raise ValueError("--cache: empty path; give the folder of cached results (or leave --cache out for "
                         "$LNRECENCY_CACHE)")
    if args.cache is not None and not Path(args.cache).is_dir():
        raise ValueError(f"--cache {args.cache!r} is not a folder")
    check_out(args.out)
    if args.evidence is not None:
        check_store_folder(args.evidence)
    if args.evidence_out is not None:
        if Path(args.evidence_out).resolve() == Path(args.out).resolve():
            raise ValueError(f"--evidence-out {args.evidence_out!r} is the report's --out; the evidence needs a "
                             "folder of its own")
        check_out(args.evidence_out, EVIDENCE_FILES, flag="--evidence-out")  # before the work, as verify --out does
    from lnrecency.experiments.run_cache import using_root
    from lnrecency.report.build import build_report

    # --no-cache reads an empty temporary root; without it no temporary folder is made
    with (tempfile.TemporaryDirectory(prefix="lnrecency-no-cache-") if args.no_cache
          else contextlib.nullcontext(args.cache)) as root, using_root(root, hermetic=args.no_cache):
        result = build_report(args.out, quick=args.quick, formats=formats, seed=args.seed,
                              convention=args.convention, evidence=args.evidence, evidence_out=args.evidence_out)
    drawn = len(result.figures) - len(result.not_run)  # a figure whose experiment is not cached is not drawn
    skipped = f"; {len(result.not_run)} not run: their experiments are not cached" if result.not_run else ""
    print(f"wrote {len(result.files)} files ({len(result.tables)} tables, {drawn} figures drawn{skipped}) "
          f"to {result.out} in {result.seconds:.1f} s; open {result.out / _index(formats)}")
    if args.evidence_out is not None:
        print(f"wrote its evidence to {args.evidence_out} (render it again with lnrecency report --from "
              f"{args.evidence_out} --out REPORT)")
    return 0
