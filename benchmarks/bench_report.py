"""Wall time and peak memory of the README's main job, `lnrecency report`, default and --quick, and of
rendering it from stored evidence (`lnrecency verify --quick --out E`, then `report --from E`; goal 20 s).

    python3 benchmarks/bench_report.py                 # measure and print
    python3 benchmarks/bench_report.py --render-only   # only the render-from-evidence time
    python3 benchmarks/bench_report.py --write-costs   # also record them in lnrecency/data/costs.json

Each run is a fresh process (interpreter start-up included) writing into a temporary folder; peak
memory is the largest resident set of the run and of its worker process (RUSAGE_CHILDREN).
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

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


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


def write_costs(full: tuple[float, float], quick: tuple[float, float]) -> None:
    """Record the two runs in lnrecency/data/costs.json (seconds, today's date, peak MiB): the one source that
    the README and docs/report.md are generated from (python3 -m lnrecency.report.regenerate)."""
    path = os.path.join(ROOT, "lnrecency", "data", "costs.json")
    data = json.load(open(path, encoding="utf-8"))
    for name, (seconds, peak) in (("report", full), ("report --quick", quick)):
        data["commands"][name].update(seconds=round(seconds), date=datetime.date.today().isoformat(),
                                      peak_mib=round(peak))
    with open(path + ".part", "w", encoding="utf-8") as fh:
        fh.write(json.dumps(data, indent=1) + "\n")
    os.replace(path + ".part", path)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--write-costs", action="store_true", help="record both runs in lnrecency/data/costs.json (then "
                   "python3 -m lnrecency.report.regenerate writes them into the README and docs/report.md)")
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
    if args.write_costs:
        write_costs(full, quick)
        print("lnrecency/data/costs.json: both runs recorded; run python3 -m lnrecency.report.regenerate")
    return 0


if __name__ == "__main__":
    sys.exit(main())
