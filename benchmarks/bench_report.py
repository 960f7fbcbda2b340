"""Wall time and peak memory of the README's main job, `lnrecency report`, default and --quick, and of
rendering it from stored evidence (`lnrecency verify --quick --out E`, then `report --from E`; goal 20 s).

    python3 benchmarks/bench_report.py                 # measure and print
    python3 benchmarks/bench_report.py --render-only   # only the render-from-evidence time
    python3 benchmarks/bench_report.py --write-docs    # also rewrite the timing sentence of docs/report.md

Each run is a fresh process (interpreter start-up included) writing into a temporary folder; peak
memory is the largest resident set of the run and of its worker process (RUSAGE_CHILDREN).
"""
from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BEGIN, END = "<!-- timings:begin -->", "<!-- timings:end -->"


def measure(quick: bool) -> tuple[float, float]:
    """(seconds, peak MiB) of one `lnrecency report` run in a fresh process."""
    with tempfile.TemporaryDirectory() as tmp:
        argv = [sys.executable, "-m", "lnrecency.cli.app", "report", "--out", os.path.join(tmp, "r")]
        t0 = time.perf_counter()
        subprocess.run(argv + (["--quick"] if quick else []), check=True, cwd=ROOT,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        seconds = time.perf_counter() - t0
    return seconds, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def measure_render() -> tuple[float, float]:
    """(seconds to write the quick evidence, seconds to render the report from it), fresh processes."""
    with tempfile.TemporaryDirectory() as tmp:
        ev, out = os.path.join(tmp, "ev"), os.path.join(tmp, "r")
        run = [sys.executable, "-m", "lnrecency.cli.app"]
        t0 = time.perf_counter()
        subprocess.run(run + ["verify", "--quick", "--out", ev], check=True, cwd=ROOT,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        t1 = time.perf_counter()
        subprocess.run(run + ["report", "--from", ev, "--out", out], check=True, cwd=ROOT,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return t1 - t0, time.perf_counter() - t1


def sentence(full: tuple[float, float], quick: tuple[float, float]) -> str:
    return (f"{BEGIN}On this 2-core machine (otherwise idle) the default took {full[0]:.0f} s and `--quick` "
            f"{quick[0]:.0f} s wall-clock (interpreter start-up included), peak memory about "
            f"{max(full[1], quick[1]):.0f} MiB (goals: 3 min and 30 s; measured by "
            f"`python3 benchmarks/bench_report.py --write-docs`).{END}")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--write-docs", action="store_true", help="rewrite the timing sentence of docs/report.md")
    p.add_argument("--render-only", action="store_true", help="only verify --out and report --from (quick)")
    args = p.parse_args(argv)
    write, render = measure_render()
    print(f"verify --quick --out: {write:.1f} s; report --from (render only): {render:.1f} s (goal 20 s)")
    if args.render_only:
        return 0
    quick = measure(True)
    full = measure(False)
    print(f"report --quick: {quick[0]:.1f} s; report (default): {full[0]:.1f} s; "
          f"peak RSS {max(full[1], quick[1]):.0f} MiB")
    if args.write_docs:
        path = os.path.join(ROOT, "docs", "report.md")
        text = open(path, encoding="utf-8").read()
        new, count = re.subn(re.escape(BEGIN) + ".*?" + re.escape(END), sentence(full, quick), text,
                             flags=re.S)
        if count != 1:
            raise SystemExit(f"docs/report.md must hold exactly one {BEGIN} ... {END} block; found {count}")
        open(path, "w", encoding="utf-8").write(new)
        print("docs/report.md timing sentence rewritten")
    return 0


if __name__ == "__main__":
    sys.exit(main())
