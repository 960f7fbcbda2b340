"""Command-line interface ``lnrecency``: one subcommand per module in :mod:`lnrecency.cli.commands`.

Each command module defines ``NAME``, ``HELP``, ``add_arguments(parser)`` and ``run(args) -> int``.
Model parameters are parsed once, here (:func:`add_config_arguments` / :func:`config_from_args`), and
validated once, by :class:`lnrecency.model.config.ModelConfig`.
"""
from __future__ import annotations

import argparse
import dataclasses
import importlib
import math
import re
import sys
from typing import Any, Sequence

from lnrecency.cli.options import Options
from lnrecency.model.config import EMBEDDINGS, NORMS, ModelConfig
from lnrecency.runtime.parser import OneLineParser
from lnrecency.runtime.signals import Terminated, said_stop, stop_signals

# Modules under lnrecency.cli.commands (those on decoders in its sub-package decoders), in the order `lnrecency
# --help` lists them.
COMMANDS = ("limit", "finite_width", "boundary", "region", "sweep", "reproduce", "report", "verify", "bias",
            "simulate", "compare", "check_formula",
            "decoders.train", "decoders.probe", "decoders.experiments", "decoders.corpus_stats")


#: commands whose work is estimated and refused above a time limit; they take --max-seconds (module names, without
#: their sub-package)
TIME_LIMITED = ("limit", "finite_width", "boundary", "region", "sweep", "bias", "simulate", "compare", "probe",
                "train")


def parse_number(text: str) -> float:
    """A float, or 'sqrt(X)' for sqrt(X) (the authors' lam = sqrt(d) and gamma = sqrt(d))."""
    t = text.strip()
    try:
        if t.startswith("sqrt(") and t.endswith(")"):
            return math.sqrt(float(t[5:-1]))
        return float(t)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number or sqrt(number); got {text!r}") from None


def parse_layers(text: str, flag: str = "--layer") -> list[int]:
    """A layer number or a comma list such as 3,4 (1 to 16 layers in [1, 64])."""
    try:
        out = [int(x) for x in str(text).split(",") if x.strip()]
    except ValueError:
        raise ValueError(f"{flag} must be a layer number or a comma list such as 3,4; got {text!r}") from None
    if not out or len(out) > 16 or any(not 1 <= x <= 64 for x in out):
        raise ValueError(f"{flag} must name 1 to 16 layers in [1, 64]; got {text!r}")
    return out


def add_config_arguments(parser: argparse.ArgumentParser, *, embedding: bool = False,
                         convention: bool = True, width: bool = True) -> None:
    """The model flags (README, "The model"): --norm, --residual, --gamma, --lam, --alpha (and --embedding),
    and --convention (the authors' setting at width --d, mapped onto these; lnrecency.model.authors_presets).
    ``width=False``: the command defines its own --d (the width it simulates or expands at)."""
    g = parser.add_argument_group("model M(norm, residual, lam, gamma, alpha) (docs/model.md)")
    g.add_argument("--norm", default="layernorm", help=f"one of {', '.join(NORMS)} (default layernorm)")
    g.add_argument("--residual", action="store_true", help="h' = h + gamma * o instead of h' = o")
    g.add_argument("--gamma", type=parse_number, default=None, help="residual weight > 0 (default 1)")
    g.add_argument("--lam", type=parse_number, default=None,
                   help="inverse temperature > 0, e.g. 1 or sqrt(64) (default 1)")
    g.add_argument("--alpha", type=parse_number, default=0.0, help="embedding anisotropy in [0, 1) (default 0)")
    if embedding:
        g.add_argument("--embedding", default=None, help=f"one of {', '.join(EMBEDDINGS)} (default gaussian)")
    if convention:
        from lnrecency.model.authors_presets import CONVENTIONS

        g.add_argument("--convention", default=None, choices=tuple(CONVENTIONS),
                       help="the authors' simulation setting: --norm layernorm|none, --residual, --alpha and "
                            "--d as in their code, mapped exactly onto our model (lnrecency.model.authors_presets; "
                            "docs/authors.md)")
        g.add_argument("--ln-scaling", action="store_true",
                       help="authors-v1 with LayerNorm: scores divided by d instead of sqrt(d)")
        if width:
            g.add_argument("--d", type=int, default=None, help="width d (with --convention: fixes lam, gamma)")


def _convention_kw(args: argparse.Namespace) -> dict:
    return dict(norm=args.norm, residual=args.residual, alpha=args.alpha, d=args.d,
                ln_scaling=getattr(args, "ln_scaling", False))


def config_from_args(args: argparse.Namespace) -> ModelConfig:
    """The model of the parsed flags; with --convention the authors' setting mapped at --d. Reads the
    flags only (the Namespace is not changed)."""
    conv = getattr(args, "convention", None)
    if conv is None:
        if getattr(args, "ln_scaling", False):
            raise ValueError("--ln-scaling needs --convention authors-v1")
        return ModelConfig(norm=args.norm, residual=args.residual,
                           gamma=1.0 if args.gamma is None else args.gamma,
                           lam=1.0 if args.lam is None else args.lam, alpha=args.alpha,
                           embedding=getattr(args, "embedding", None) or "gaussian")
    from lnrecency.model.authors_presets import preset

    fixed = [f"--{name} {value:g}" for name, value in (("lam", args.lam), ("gamma", args.gamma))
             if value is not None]
    if getattr(args, "embedding", None) is not None:
        fixed.append(f"--embedding {args.embedding}")
    if fixed:
        raise ValueError(f"with --convention {conv}, lam, gamma and the embedding follow from the authors' "
                         f"setting at --d; got {', '.join(fixed)}")
    if getattr(args, "d", None) is None:
        raise ValueError(f"--convention {conv} needs --d (the width fixes lam = sqrt(d) and the residual "
                         f"weight)")
    return preset(conv, **_convention_kw(args))


def default_n(args: argparse.Namespace, default: int = 8) -> int:
    """--n as given; else the authors' sequence length under --convention; else ``default``."""
    if getattr(args, "n", None) is not None:
        return args.n
    if getattr(args, "convention", None) is not None:
        from lnrecency.model.authors_presets import CONVENTIONS

        return CONVENTIONS[args.convention].n
    return default


def with_convention(out: dict, args: argparse.Namespace) -> dict:
    """Add the convention record (the authors' setting and the equivalent configuration) to a JSON
    output when --convention was given."""
    conv = getattr(args, "convention", None)
    if conv is not None:  # the same mapping as config_from_args
        from lnrecency.model.authors_presets import convention_record

        out["convention"] = convention_record(conv, **_convention_kw(args))
    return out


class _Declared:
    """A parser or argument group that records each option it declares (the ``argparse.Action`` that
    ``add_argument`` returns): the fields of the command's typed arguments object, declared once."""

    def __init__(self, target, seen: list) -> None:
        self._target, self._seen = target, seen

    def add_argument(self, *args, **kwargs) -> argparse.Action:
        action = self._target.add_argument(*args, **kwargs)
        self._seen.append(action)
        return action

    def add_argument_group(self, *args, **kwargs) -> "_Declared":
        return _Declared(self._target.add_argument_group(*args, **kwargs), self._seen)

    def add_mutually_exclusive_group(self, *args, **kwargs) -> "_Declared":
        return _Declared(self._target.add_mutually_exclusive_group(*args, **kwargs), self._seen)

    def __getattr__(self, name: str):  # set_defaults, error, ...: the parser's own
        return getattr(self._target, name)


def _annotation(action: argparse.Action) -> Any:
    """The field type of an option: bool for a flag, else what its converter returns (str by default)."""
    if action.nargs == 0:
        return bool
    conv = action.type or str
    return getattr(conv, "__annotations__", {}).get("return", conv) if callable(conv) else Any


def arguments_type(command: str, actions: list[argparse.Action], parameter_flags: dict[str, str] | None = None) -> type:
    """The frozen dataclass a command's ``run`` receives (a subclass of :class:`~lnrecency.cli.options.Options`):
    one field per declared option (its dest, typed by its converter), plus ``command``; the parsed values cannot be
    changed on the way (no side channels). Its class attribute ``FLAGS`` maps a parameter name to (the flag that
    sets it, that flag's dest): each option's dest to its long flag, and ``parameter_flags`` (a command module's
    ``PARAMETER_FLAGS``: a library parameter named otherwise than its flag, e.g. ``n_layers`` for ``--layers``);
    :func:`flag_named` reads it."""
    names = [a.dest for a in actions if a.dest != argparse.SUPPRESS]
    flags = {a.dest: (next((o for o in a.option_strings if o.startswith("--")), a.option_strings[0]), a.dest)
             for a in actions if a.option_strings and a.dest in names}
    for param, flag in (parameter_flags or {}).items():
        flags[param] = (flag, next(a.dest for a in actions if flag in a.option_strings))
    return dataclasses.make_dataclass(
        "".join(part.title() for part in command.split("-")) + "Arguments",
        [(a.dest, _annotation(a)) for a in actions if a.dest in names], bases=(Options,),
        frozen=True, kw_only=True, namespace={"__module__": __name__, "FLAGS": flags})


_REFUSED = re.compile(r"([a-z][a-z0-9_]*) (?:must|should)\b")


def flag_named(message: str, args: Options) -> str:
    """A refusal in the words of the command line. The library names its parameter (``n must be an integer in
    [3, 4096]; got -3``); the user passed a flag, so the parameter's name becomes the flag's (``--n must be ...``)
    where the command has that flag (``FLAGS`` of its arguments type) and the refused value is the one the user
    gave it (the message's ``got`` part). Any other message is returned as it is: a parameter the user did not
    set is never given a flag's name."""
    m = _REFUSED.match(message)
    named = getattr(type(args), "FLAGS", {}).get(m.group(1)) if m else None
    if named is None:
        return message
    flag, dest = named
    value = getattr(args, dest, None)
    if value is None or isinstance(value, bool):
        return message
    given = "|".join(re.escape(v) for v in {str(value), repr(value)})
    if not re.search(rf"\bgot (?:{re.escape(m.group(1))}=)?(?:{given})(?![\w.])", message):
        return message
    return flag + message[len(m.group(1)):]


def build_parser() -> argparse.ArgumentParser:
    """The ``lnrecency`` parser; ``parser.commands[name]`` is (module, subparser, arguments type)."""
    parser = OneLineParser(  # no abbreviations: `train --d 0` would be read as --device 0
        prog="lnrecency",
        description="Verify 'LayerNorm Induces Recency Bias in Transformer Decoders' (Kim et al.).",
        allow_abbrev=False,
    )
    from importlib.metadata import PackageNotFoundError, version

    try:
        ver = version("lnrecency")
    except PackageNotFoundError:  # running from a source tree that is not installed
        ver = "unknown (not installed)"
    parser.add_argument("--version", action="version", version=f"lnrecency {ver}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    parser.commands = {}
    for name in COMMANDS:
        module = importlib.import_module(f"lnrecency.cli.commands.{name}")
        p = sub.add_parser(module.NAME, help=module.HELP, description=getattr(module, "DESCRIPTION", module.HELP),
                           epilog=getattr(module, "EPILOG", None), allow_abbrev=False)
        seen: list[argparse.Action] = []
        module.add_arguments(_Declared(p, seen))
        if name.rpartition(".")[2] in TIME_LIMITED:
            seen.append(p.add_argument(
                "--max-seconds", type=float, default=None, metavar="S",
                help="raise (or lower) the time limit above which a computation is refused before it starts "
                     "(the limits protect an interactive answer; memory limits stay)"))
        parser.commands[module.NAME] = (module, p, arguments_type(module.NAME, seen,
                                                                  getattr(module, "PARAMETER_FLAGS", None)))
    return parser


def parse(argv: Sequence[str] | None = None):
    """(command module, typed arguments) of a command line; argparse's own errors exit with status 2."""
    parser = build_parser()
    ns, extra = parser.parse_known_args(argv)
    module, sub, typ = parser.commands[ns.command]
    if extra:  # the subcommand's usage, not the top-level one (argparse.error exits with status 2)
        sub.error(f"unrecognized arguments: {' '.join(extra)}")
    values = vars(ns)
    return module, typ(**{f.name: values[f.name] for f in dataclasses.fields(typ)})


#: the commands that read or write the run cache ($LNRECENCY_CACHE)
CACHE_COMMANDS = ("report", "verify", "experiments", "corpus-stats", "probe", "train")


def main(argv: Sequence[str] | None = None) -> int:
    module, args = parse(argv)
    # a stopped run's pool leaves its queue semaphores to multiprocessing's resource tracker, which cleans them up
    # and would warn about it on stderr after our one line (the tracker inherits these options when it starts)
    if "ignore:resource_tracker:UserWarning" not in sys.warnoptions:
        sys.warnoptions.append("ignore:resource_tracker:UserWarning")
    stopped = f"lnrecency {args.command}: stopped by %s; output folders are as they were before the run"
    try:
        from lnrecency.files.atomic import holding_output
        from lnrecency.runtime.timelimit import max_seconds

        # an output folder is locked for the whole run: a second run on the same --out is refused at once
        out = getattr(args, "out", None)
        if args.command in CACHE_COMMANDS and getattr(args, "cache", None) is None \
                and not getattr(args, "no_cache", False):
            from lnrecency.experiments.run_cache import cache_root

            cache_root()  # a cache root that is not a folder is refused now, not after the first computation
        with stop_signals(), max_seconds(getattr(args, "max_seconds", None)), holding_output(out):
            return int(module.run(args) or 0)
    except (ValueError, MemoryError, OverflowError) as exc:  # invalid input or a refused size: one line
        print(f"lnrecency {args.command}: error: {flag_named(str(exc), args)}", file=sys.stderr)
        return 2
    except (KeyboardInterrupt, Terminated, SystemExit) as exc:  # SystemExit: SIGTERM while an output folder was
        code = said_stop(exc, stopped)  # staged (lnrecency.files.atomic)
        if code is None:
            raise
        return code
    except BrokenPipeError:  # the reader went away (e.g. `| head`): stop quietly, no traceback
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as exc:  # an output folder that cannot be written, or an input that cannot be read: the file and
        # the system's reason, in the Unix form (`path: Permission denied`), which says neither "read" nor "write"
        # (a name of thousands of characters is shown by its start and its length)
        name = None if exc.filename is None else str(exc.filename)
        where = "" if name is None else (f"{name}: " if len(name) <= 200 else
                                         f"{name[:80]}... ({len(name)} characters): ")
        print(f"lnrecency {args.command}: error: {where}{exc.strerror or exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
