"""Start-up time of the command line (issue 33: `lnrecency --help` and a refused flag in under 0.5 s).

Runs each command line REPEAT times in a fresh interpreter and prints the median and the worst wall time,
against the 0.5 s goal. The parser imports no numerical library (lnrecency.choices); the heavy imports
happen inside each command's run().

    python benchmarks/bench_startup.py
"""
from __future__ import annotations

import statistics
import subprocess
import sys
import time

GOAL = 0.5
REPEAT = 5
LINES = (
    ["--help"],
    ["--version"],
    ["limit", "--help"],
    ["limit", "--n", "x"],              # argparse: not an integer
    ["limit", "--n", "-3"],             # a size refused by check_int before numpy loads
    ["limit", "--n", "8", "--norm", "foo"],
    ["reproduce", "--figure", "9", "--out", "x"],
    ["probe"],                          # torch is not imported to say that a model is missing
    ["train", "lm"],
    ["report", "--format", "pdf"],
)


def wall(argv: list[str]) -> tuple[float, int]:
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "lnrecency.cli.app", *argv], capture_output=True)
    return time.perf_counter() - start, proc.returncode


def main() -> int:
    print(f"{'command line':46s} {'median s':>9s} {'worst s':>8s} {'exit':>5s}  goal {GOAL} s")
    worst_all = 0.0
    for argv in LINES:
        runs = [wall(argv) for _ in range(REPEAT)]
        times = [t for t, _ in runs]
        worst_all = max(worst_all, max(times))
        print(f"lnrecency {' '.join(argv):36s} {statistics.median(times):9.3f} {max(times):8.3f} "
              f"{runs[0][1]:5d}  {'ok' if max(times) < GOAL else 'SLOW'}")
    print(f"worst over all: {worst_all:.3f} s ({'within' if worst_all < GOAL else 'above'} the {GOAL} s goal)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
