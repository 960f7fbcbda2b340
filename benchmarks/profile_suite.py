"""The suite's cost per test: CPU seconds (this process and the children it waited for: workers, kernels, commands)
and wall seconds of each test, measured by running the whole suite once. A fixture shared by several tests (module,
package or session scope) is counted apart, once, as what its setup cost: a test's own cost is the rest. Writes
tests/test_costs.json, which conftest.py reads to mark a test ``slow`` when its own CPU time, or the setup of a shared
fixture it uses, reaches ``slow_cpu_seconds`` (the quick development loop, ``pytest -m 'not slow'``, leaves it out;
the suite runs it).

    python3 benchmarks/profile_suite.py [--threshold 2.5] [pytest arguments]

Measure on an otherwise idle machine; the file records the date, the machine's CPU count, the totals, each test's
CPU and wall seconds and each shared fixture's setup CPU seconds.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "test_costs.json"
#: the default threshold: a test of this much CPU or more is left out of the quick loop
SLOW_CPU_SECONDS = 2.5

_ROWS: dict[str, tuple[float, float, bool]] = {}
_FIXTURES: dict[str, float] = {}  # "baseid::name" -> CPU seconds of one setup (the most over its setups)
_SHARED = [0.0]  # shared fixtures' setup CPU within the current test


def _cpu() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_fixture_setup(fixturedef, request):
    """(The plugin, loaded into the profiled run by ``-p profile_suite``.) The fixtures a fixture depends on are set
    up before this hook: each is counted once, as itself."""
    cpu = _cpu()
    yield
    if fixturedef.scope != "function":
        spent = _cpu() - cpu
        key = f"{fixturedef.baseid}::{fixturedef.argname}"
        _FIXTURES[key] = max(_FIXTURES.get(key, 0.0), spent)
        _SHARED[0] += spent


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    cpu, wall = _cpu(), time.monotonic()
    _SHARED[0] = 0.0
    yield
    # slow for another reason than this file (a fixture, a hand mark): out of the quick loop whatever it costs
    marked = any("measured" not in m.kwargs for m in item.iter_markers("slow"))
    _ROWS[item.nodeid] = (_cpu() - cpu - _SHARED[0], time.monotonic() - wall, marked)


def pytest_sessionfinish(session, exitstatus):
    target = os.environ.get("LNRECENCY_PROFILE_OUT")
    if target:
        Path(target).write_text(json.dumps({"tests": _ROWS, "fixtures": _FIXTURES}), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threshold", type=float, default=SLOW_CPU_SECONDS,
                        help=f"CPU seconds from which a test is marked slow (default {SLOW_CPU_SECONDS})")
    args, rest = parser.parse_known_args(argv)
    if not args.threshold > 0:
        parser.error(f"--threshold must be a positive number of seconds; got {args.threshold}")
    with tempfile.TemporaryDirectory(prefix="lnrecency-profile-") as scratch:
        rows_file = Path(scratch) / "rows.json"
        env = {**os.environ, "LNRECENCY_PROFILE_OUT": str(rows_file),
               "PYTHONPATH": os.pathsep.join([str(Path(__file__).parent), os.environ.get("PYTHONPATH", "")])}
        start = time.monotonic()
        rc = subprocess.run([sys.executable, "-m", "pytest", "-p", "profile_suite", "-p", "no:cacheprovider",
                             "-n", "0", "-q", *rest], cwd=ROOT, env=env).returncode
        wall = time.monotonic() - start
        if rc != 0 or not rows_file.is_file():
            print(f"profile_suite: the suite did not pass (exit {rc}); {OUT.name} is not written", file=sys.stderr)
            return 1
        measured = json.loads(rows_file.read_text(encoding="utf-8"))
    tests = {k: {"cpu": round(c, 2), "wall": round(w, 2), **({"marked": True} if m else {})}
             for k, (c, w, m) in sorted(measured["tests"].items())}
    fixtures = {k: round(c, 2) for k, c in sorted(measured["fixtures"].items())}
    data = {"what": "CPU seconds of each test (its own: without the shared fixtures' setups) and of each shared "
                    "fixture's setup, and each test's wall seconds, in one full run (benchmarks/profile_suite.py)",
            "date": datetime.date.today().isoformat(), "cpus": os.cpu_count(),
            "slow_cpu_seconds": args.threshold, "run_wall_seconds": round(wall, 1),
            "total_cpu_seconds": round(sum(v["cpu"] for v in tests.values()) + sum(fixtures.values()), 1),
            "fixtures": fixtures, "tests": tests}
    OUT.write_text(json.dumps(data, indent=0) + "\n", encoding="utf-8")
    over = sum(1 for v in tests.values() if v["cpu"] >= args.threshold)
    print(f"{len(tests)} tests, {data['total_cpu_seconds']} CPU-s in {wall:.0f} s; {over} tests and "
          f"{sum(c >= args.threshold for c in fixtures.values())} shared fixtures at {args.threshold} CPU-s or more; "
          f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
