"""Fuzz: random command lines and random formulas end with exit 0, 1 or 2 and a message, never a
traceback, within time (hypothesis; fast profile in CI, thorough on demand)."""
from __future__ import annotations

import time

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lnrecency.cli.app import main

NUMBERS = st.sampled_from(["0", "1", "-1", "2", "1e300", "-1e300", "nan", "inf", "0.5", "sqrt(4)", "x", "",
                           "99999999999", "1e-300", "3.7", "authors-v2", "authors-v1", "recency", "none",
                           "1" + "0" * 30, "-" + "9" * 40, "1e309", "-inf", "-0", ".", "..", "alpha", "lam"])
FLAGS = st.sampled_from(["--n", "--layers", "--alpha", "--lam", "--gamma", "--d", "--dps", "--digits",
                         "--samples", "--seed", "--norm", "--residual", "--json", "--bogus", "--convention",
                         "--ln-scaling", "--n-max", "--ordering", "--workers", "--lines", "--measure",
                         "--scheduler", "--out", "--vary", "--from", "--to", "--layer", "--claim"])
COMMANDS = st.sampled_from(["limit", "finite-width", "bias", "simulate", "check-formula", "boundary", "region",
                            "sweep", "verify"])
# every command gets small defaults first; the drawn flags come after and override them (argparse: last wins)
FIXED = {"check-formula": ["h", "j"], "bias": ["--layer", "2"], "boundary": ["--layer", "2", "--n-max", "12"],
         "region": ["--layer", "3", "--n-max", "10", "--vary", "alpha"],
         "sweep": ["--lam", "1", "--alpha", "0", "--residual", "off", "--layers", "2", "--n-max", "6",
                   "--scheduler", "none", "--out", "fuzz_out", "--no-progress"],
         "verify": ["--claim", "P8", "--quick"]}


# capsys is read (and so reset) in every example
ONE_FIXTURE = settings(suppress_health_check=[HealthCheck.function_scoped_fixture])


@ONE_FIXTURE
@given(command=COMMANDS, parts=st.lists(st.tuples(FLAGS, NUMBERS), max_size=4))
def test_random_command_lines_end_cleanly(capsys, tmp_path, monkeypatch, command, parts):
    monkeypatch.chdir(tmp_path)  # --out values are folder names: written here
    argv = [command] + FIXED.get(command, [])
    for flag, value in parts:
        argv += [flag] if flag in ("--residual", "--json", "--ln-scaling") else [flag, value]
    if command in ("simulate", "bias"):  # keep honest runs small: the point is the parsing
        argv += ["--samples", "50", "--n", "3"]
    t0 = time.perf_counter()
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse refusals
        code = exc.code
    err = capsys.readouterr().err
    assert code in (0, 1, 2), (argv, code)
    assert "Traceback" not in err, (argv, err)
    assert time.perf_counter() - t0 < 30, argv


ATOMS = st.sampled_from(["i", "j", "alpha", "lam", "gamma", "e", "pi", "1", "2", "0", "0.5", "32", "-3",
                         "exp(", "log(", "sqrt(", ")", "(", "+", "-", "*", "/", "**", "^", " ", "__import__",
                         "1e999", "x", "[", "lambda", "exp(exp(exp(", "sin(", "tanh(", "gamma(", "10^9", "^32",
                         "log(2)*10^9", "0.123456789", ")))"])


@ONE_FIXTURE
@given(st.lists(ATOMS, min_size=1, max_size=12))
def test_random_formulas_end_cleanly(capsys, atoms):
    text = "".join(atoms)
    t0 = time.perf_counter()
    try:
        code = main(["check-formula", "h", text])
    except SystemExit as exc:  # a formula starting with '-' reads as a flag: argparse refuses, exit 2
        code = exc.code
    err = capsys.readouterr().err
    assert code in (0, 1, 2) and "Traceback" not in err, (text, err)
    assert time.perf_counter() - t0 < 30, text
