"""Command-line interface ``lnrecency``: one subcommand per module in :mod:`lnrecency.commands`.

Each command module defines ``NAME``, ``HELP``, ``add_arguments(parser)`` and ``run(args) -> int``.
Model parameters are parsed once, here (:func:`add_config_arguments` / :func:`config_from_args`), and
validated once, by :class:`lnrecency.config.ModelConfig`.
"""
from __future__ import annotations

import argparse
import importlib
import math
import sys
from typing import Sequence

from lnrecency.config import EMBEDDINGS, NORMS, ModelConfig

# Modules under lnrecency.commands, in the order `lnrecency --help` lists them.
COMMANDS = ("limit", "finite_width", "boundary", "report", "verify", "bias", "simulate", "check_formula")


def _number(text: str) -> float:
    """A float, or 'sqrt(X)' for sqrt(X) (the authors' lam = sqrt(d) and gamma = sqrt(d))."""
    t = text.strip()
    try:
        if t.startswith("sqrt(") and t.endswith(")"):
            return math.sqrt(float(t[5:-1]))
        return float(t)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number or sqrt(number); got {text!r}") from None


def add_config_arguments(parser: argparse.ArgumentParser, *, embedding: bool = False) -> None:
    """The model flags (README, "The model"): --norm, --residual, --gamma, --lam, --alpha (and --embedding)."""
    g = parser.add_argument_group("model M(norm, residual, lam, gamma, alpha) (see the README)")
    g.add_argument("--norm", default="layernorm", help=f"one of {', '.join(NORMS)} (default layernorm)")
    g.add_argument("--residual", action="store_true", help="h' = h + gamma * o instead of h' = o")
    g.add_argument("--gamma", type=_number, default=1.0, help="residual weight > 0 (default 1)")
    g.add_argument("--lam", type=_number, default=1.0, help="inverse temperature > 0, e.g. 1 or sqrt(64)")
    g.add_argument("--alpha", type=_number, default=0.0, help="embedding anisotropy in [0, 1) (default 0)")
    if embedding:
        g.add_argument("--embedding", default="gaussian", help=f"one of {', '.join(EMBEDDINGS)}")


def config_from_args(args: argparse.Namespace) -> ModelConfig:
    return ModelConfig(norm=args.norm, residual=args.residual, gamma=args.gamma, lam=args.lam,
                       alpha=args.alpha, embedding=getattr(args, "embedding", "gaussian"))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="lnrecency",
        description="Verify 'LayerNorm Induces Recency Bias in Transformer Decoders' (Kim et al.).",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    parser.subcommands = {}
    for name in COMMANDS:
        module = importlib.import_module(f"lnrecency.commands.{name}")
        p = sub.add_parser(module.NAME, help=module.HELP, description=module.HELP)
        module.add_arguments(p)
        p.set_defaults(_run=module.run)
        parser.subcommands[module.NAME] = p
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra:  # the subcommand's usage, not the top-level one (argparse.error exits with status 2)
        parser.subcommands[args.command].error(f"unrecognized arguments: {' '.join(extra)}")
    try:
        return int(args._run(args) or 0)
    except (ValueError, MemoryError) as exc:  # invalid input or a refused size: one line, no traceback
        print(f"lnrecency {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"lnrecency {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (e.g. `| head`): stop quietly, no traceback
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as exc:  # e.g. an output folder that cannot be created or written
        where = f"cannot write {exc.filename}: " if exc.filename is not None else ""
        print(f"lnrecency {args.command}: error: {where}{exc.strerror or exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
