"""`lnrecency check-formula QUANTITY EXPR`: a reviewer's formula against the derived closed form."""
from __future__ import annotations

import argparse
import json
import os
import stat
import sys

from lnrecency.choices import ALLOWED, MAX_FORMULA_LENGTH, QUANTITIES, QUANTITY_HELP
from lnrecency.cli.app import add_config_arguments
from lnrecency.cli.options import Options

NAME = "check-formula"
HELP = "check a formula (in i, j, alpha, lam, gamma) against the derived sympy closed form"


DESCRIPTION = (HELP + " of the parameter-free model at d -> infinity (docs/model.md). The quantities, for tokens "
               "x^(1) after layer 1: " + "; ".join(f"{q} = {h}" for q, h in QUANTITY_HELP.items()) + ".")
EPILOG = ("Defaults in this command: --norm layernorm (l2 and rmsnorm have the same limit), no --residual; an "
          "omitted --alpha, --lam or --gamma stays symbolic (the defaults printed above are those of the other "
          "commands). When your formula differs, the command also tries the other normalisation class, residual "
          "on and off, and lam = gamma = 1, and names the flags under which it is equal, if any. Exit status: 0 "
          f"equal, 1 different, 2 a bad formula or argument. Allowed in EXPR: {ALLOWED}.")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("quantity", choices=QUANTITIES, metavar="QUANTITY",
                   help="; ".join(f"{q}: {h}" for q, h in QUANTITY_HELP.items()))
    p.add_argument("expr", metavar="EXPR", help="e.g. 'alpha + (1-alpha)*exp(lam*alpha)/"
                   "(exp(lam)+(i-1)*exp(lam*alpha))'; '^' means power; '-' reads it from standard "
                   "input, '@FILE' from a file; a formula starting with '-' goes after '--'")
    p.add_argument("--json", action="store_true", help="JSON output (FormulaCheck.to_json)")
    add_config_arguments(p, convention=False)
    # In this command an omitted --alpha/--lam/--gamma means "keep the parameter symbolic".
    p.set_defaults(alpha=None, lam=None, gamma=None)


def _read_expr(expr: str) -> str:
    """EXPR itself, standard input for '-', or the file named by '@FILE' (at most MAX_LENGTH + 1 chars)."""
    MAX_LENGTH = MAX_FORMULA_LENGTH  # noqa: N806
    if expr == "-":
        return sys.stdin.read(MAX_LENGTH + 1)
    if expr.startswith("@"):
        try:  # a regular file only: opened without blocking (a FIFO or device is refused, never waited on)
            fd = os.open(expr[1:], os.O_RDONLY | os.O_NONBLOCK)
            with open(fd, encoding="utf-8", closefd=True) as fh:
                if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                    raise ValueError(f"EXPR file {expr[1:]!r} is not a regular file (a FIFO, device or folder is "
                                     f"not read); give a file, or the formula itself")
                return fh.read(MAX_LENGTH + 1)
        except OSError as exc:
            raise ValueError(f"EXPR file {expr[1:]!r} cannot be read: {exc.strerror or type(exc).__name__}") from None
        except UnicodeDecodeError:
            raise ValueError(f"EXPR file {expr[1:]!r} cannot be read: not UTF-8 text") from None
    return expr


def _shown(value) -> str:
    return "undefined" if value is None else str(value)


SECONDS = 6.0  # the whole check (parse, symbolic test, mpmath scan) in a child process
MEMORY = 2 ** 30


def run(args: Options) -> int:
    from lnrecency.runtime.child import BudgetExceeded, run_bounded
    from lnrecency.theory.formula import check_formula

    given = {k: getattr(args, k) for k in ("alpha", "lam", "gamma") if getattr(args, k) is not None}
    from_file = args.expr == "-" or args.expr.startswith("@")
    try:
        text = _read_expr(args.expr)
        result = run_bounded(check_formula, args.quantity, text, norm=args.norm, residual=args.residual,
                             seconds=SECONDS, memory_bytes=MEMORY, **given)
    except BudgetExceeded as exc:
        print(f"lnrecency check-formula: cannot decide: the check {exc} (budget {SECONDS:g} s, "
              f"{MEMORY / 2**30:g} GiB); simplify the formula or give fewer digits in --alpha/--lam/--gamma",
              file=sys.stderr)
        return 2
    except (ValueError, RecursionError, OverflowError) as exc:
        # nothing read from a file or standard input is echoed (it may be any file the user pointed at)
        msg = (f"EXPR from {'standard input' if args.expr == '-' else 'the file'} is not an allowed formula "
               f"({ALLOWED})" if from_file and not str(exc).startswith("EXPR file") else str(exc))
        print(f"lnrecency check-formula: error: {msg}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(result.to_json()))
        return 0 if result.equal else 1
    print(f"quantity: {result.quantity} ({QUANTITY_HELP[result.quantity]})")
    print(f"your formula:  {result.typed}")
    if str(result.typed) != str(result.expression):
        print(f"  read as:     {result.expression}")
    print(f"derived:       {result.derived}")
    print(f"equal:         {'yes' if result.equal else 'NO'}")
    print(f"method:        {result.method}")
    if result.first_difference:
        d = result.first_difference
        params = ", ".join(f"{k}={v}" for k, v in d.params.items())
        if d.user is None and d.derived is None:
            where = f"difference {d.difference}"
        else:
            where = (f"yours {_shown(d.user)}, derived {_shown(d.derived)}"
                     + (f", difference {d.difference}" if d.difference is not None
                        else " (one side is undefined there)"))
        print(f"first difference at i={d.i}, j={d.j} ({params}): {where}")
    if not result.equal:
        flags = _equal_elsewhere(args, text, given)
        print(f"equal under:   {flags}" if flags else "equal under:   none of the other flags tried (the other "
              "normalisation class, residual on and off, lam = gamma = 1)")
    return 0 if result.equal else 1


def _equal_elsewhere(args: Options, text: str, params: dict) -> str | None:
    """The flags under which the formula equals the derivation, among the other normalisation class (none vs
    the scaling ones, which share one limit), residual on and off, and lam and gamma set to 1 where they were
    symbolic; None if no such flags (or the search runs out of its budget)."""
    from lnrecency.runtime.child import BudgetExceeded, run_bounded
    from lnrecency.theory.formula import check_formula

    norms = (args.norm, "none" if args.norm != "none" else "l2")  # the user's class first
    for norm in norms:
        for residual in (args.residual, not args.residual):
            for ones in ({}, {k: 1 for k in ("lam", "gamma") if k not in params and (k == "lam" or residual)}):
                if norm == args.norm and residual == args.residual and not ones:
                    continue  # the setting already tried
                try:
                    r = run_bounded(check_formula, args.quantity, text, norm=norm, residual=residual,
                                    seconds=SECONDS, memory_bytes=MEMORY, **params, **ones)
                except (BudgetExceeded, ValueError, RecursionError, OverflowError):
                    return None
                if r.equal:
                    return " ".join([f"--norm {norm}", *(["--residual"] if residual else []),
                                     *(f"--{k} 1" for k in ones)] + [f"--{k} {v}" for k, v in params.items()])
    return None
