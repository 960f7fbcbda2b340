"""Wall time and peak memory of the README's main job, `lnrecency report`, default and --quick, and of
rendering it from stored evidence (`lnrecency verify --quick --out E`, then `report --from E`), each with an empty
cache root (nothing cached: every figure drawn) and again on the same root (the figures copied from the figure
cache, lnrecency.files.figure_cache): the cold run is the baseline of the warm one, in the same run. Goals (issue
84): --quick within 15 s, --from within 8 s.

    python3 benchmarks/bench_report.py                 # measure and print
    python3 benchmarks/bench_report.py --render-only   # only the render-from-evidence times
    python3 benchmarks/bench_report.py --write-costs   # also record them in lnrecency/data/costs.json
    python3 benchmarks/bench_report.py --runs 5        # each time held against a goal: the median of 5 runs
    python3 benchmarks/bench_report.py --claim-seconds # only each claim's time (lnrecency/data/claim_seconds.json)

Each run is a fresh process (interpreter start-up included) writing into a temporary folder, with
LNRECENCY_CACHE pointing at a temporary cache root; peak memory is the largest resident set of the runs and of their
worker processes (RUSAGE_CHILDREN).
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUN = [sys.executable, "-m", "lnrecency.cli.app"]


def _timed(argv: list[str], cache: str) -> float:
    """Seconds of one command in a fresh process with ``cache`` as its cache root."""
    env = dict(os.environ, LNRECENCY_CACHE=cache)
    t0 = time.perf_counter()
    subprocess.run(RUN + argv, check=True, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0


def median(values: list[float]) -> float:
    return statistics.median(values)


def repeated(measure_once, runs: int) -> list[tuple]:
    """``runs`` results of ``measure_once()``: a time on this shared 2-core machine varies by a tenth or more between
    runs minutes apart, so a time held against a goal is the median of several runs, their range beside it."""
    return [measure_once() for _ in range(runs)]


def measure(quick: bool) -> tuple[tuple[float, float], float]:
    """((cold seconds, peak MiB), warm seconds) of `lnrecency report`: an empty cache root, then the same root."""
    with tempfile.TemporaryDirectory() as tmp:
        cache = os.path.join(tmp, "cache")
        argv = ["report", "--out", os.path.join(tmp, "r")] + (["--quick"] if quick else [])
        cold = _timed(argv, cache)
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        warm = _timed(argv[:2] + [os.path.join(tmp, "r2")] + argv[3:], cache)
    return (cold, peak), warm


def measure_render() -> tuple[float, float, float]:
    """(seconds to write the quick evidence, to render the report from it with an empty cache root, and again on
    that root)."""
    with tempfile.TemporaryDirectory() as tmp:
        ev, cache = os.path.join(tmp, "ev"), os.path.join(tmp, "cache")
        write = _timed(["verify", "--quick", "--out", ev], os.path.join(tmp, "other"))
        cold = _timed(["report", "--from", ev, "--out", os.path.join(tmp, "r")], cache)
        warm = _timed(["report", "--from", ev, "--out", os.path.join(tmp, "r2")], cache)
    return write, cold, warm


def write_costs(full: tuple[float, float], quick: list[tuple[float, float]], warm: dict[str, list[float]]) -> None:
    """Record the runs in lnrecency/data/costs.json (seconds, today's date, peak MiB): the one source that the
    README and docs/report.md are generated from (python3 -m lnrecency.report.regenerate). ``full``: the default
    report's one run; ``quick``: the quick report's runs, nothing cached; ``warm``: command -> seconds of its runs
    (the runs with the figures cached, and report --from's cold runs). A command run more than once records the
    median as its seconds and every run beside it."""
    path = os.path.join(ROOT, "lnrecency", "data", "costs.json")
    data = json.load(open(path, encoding="utf-8"))
    today = datetime.date.today().isoformat()
    data["commands"]["report"].update(seconds=round(full[0]), date=today, peak_mib=round(full[1]))
    data["commands"]["report --quick"].update(seconds=round(median([s for s, _ in quick]), 1), date=today,
                                              peak_mib=round(max(p for _, p in quick)),
                                              runs=[round(s, 1) for s, _ in quick])
    whats = {"report --quick (figures cached)": "the same run again on the same cache root: figures copied",
             "report --from": "the quick report rendered from `verify --quick --out` evidence, nothing cached",
             "report --from (figures cached)": "the same render again on the same cache root: figures copied"}
    for name, runs in warm.items():
        data["commands"][name] = {"seconds": round(median(runs), 1), "date": today, "what": whats[name],
                                  "runs": [round(s, 1) for s in runs]}
    with open(path + ".part", "w", encoding="utf-8") as fh:
        fh.write(json.dumps(data, indent=1) + "\n")
    os.replace(path + ".part", path)


_CLAIM_SECONDS = """
import json, sys, time
from lnrecency.claims.registry import CLAIMS, _run, available
quick = sys.argv[1] == "quick"
out = {}
for cid in CLAIMS:
    if available(cid, quick):
        t = time.process_time()
        _run(cid, quick)
        out[cid] = round(time.process_time() - t, 2)
print(json.dumps(out))
"""


def claim_seconds(quick: bool) -> dict[str, float]:
    """Claim -> CPU seconds of its evaluation, each claim in turn in one fresh process (nothing cached between
    runs but what a report's worker also shares: the imports), at the quick or the full settings."""
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, LNRECENCY_CACHE=os.path.join(tmp, "cache"), OMP_NUM_THREADS="1")
        got = subprocess.run([sys.executable, "-c", _CLAIM_SECONDS, "quick" if quick else "full"], check=True,
                             cwd=ROOT, env=env, capture_output=True, text=True)
    return json.loads(got.stdout.splitlines()[-1])


def write_claim_seconds() -> None:
    """lnrecency/data/claim_seconds.json: each claim's measured evaluation time, quick and full, the order in which
    the report's verdict workers take the claims (lnrecency.claims.registry.longest_first)."""
    path = os.path.join(ROOT, "lnrecency", "data", "claim_seconds.json")
    data = {"about": "CPU seconds of each claim's evaluation, one claim at a time in one process (one BLAS thread), "
                     "at the quick and the full settings: the report's verdict workers take the longest first "
                     "(lnrecency.claims.registry.longest_first). Measured by python3 benchmarks/bench_report.py "
                     "--write-costs; a scheduling order only: no result depends on it.",
            "date": datetime.date.today().isoformat(), "quick": claim_seconds(True), "full": claim_seconds(False)}
    with open(path + ".part", "w", encoding="utf-8") as fh:
        fh.write(json.dumps(data, indent=1) + "\n")
    os.replace(path + ".part", path)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--write-costs", action="store_true", help="record both runs in lnrecency/data/costs.json (then "
                   "python3 -m lnrecency.report.regenerate writes them into the README and docs/report.md)")
    p.add_argument("--render-only", action="store_true", help="only verify --out and report --from (quick)")
    p.add_argument("--runs", type=int, default=3, choices=range(1, 11), metavar="1..10",
                   help="runs of each time held against a goal (the quick report and its render); their median is "
                        "recorded, their range beside it (default 3; the default report runs once)")
    p.add_argument("--claim-seconds", action="store_true", help="only measure each claim's evaluation time into "
                   "lnrecency/data/claim_seconds.json (also done by --write-costs)")
    args = p.parse_args(argv)
    if args.claim_seconds or args.write_costs:
        write_claim_seconds()
        print("lnrecency/data/claim_seconds.json: each claim's evaluation time, quick and full")
        if args.claim_seconds:
            return 0
    renders = repeated(measure_render, args.runs)
    write, cold, warm = (median([r[k] for r in renders]) for k in range(3))
    print(f"verify --quick --out: {write:.1f} s; report --from: {cold:.1f} s with nothing cached, {warm:.1f} s with "
          f"its figures cached ({cold / warm:.1f}x; goal 8 s; medians of {args.runs} runs)")
    if args.render_only:
        return 0
    quicks = repeated(lambda: measure(True), args.runs)
    quick_cold, quick_warm = median([q[0][0] for q in quicks]), median([q[1] for q in quicks])
    full, _ = measure(False)
    print(f"report --quick: {quick_cold:.1f} s with nothing cached (runs: "
          f"{', '.join(f'{q[0][0]:.1f}' for q in quicks)}), {quick_warm:.1f} s with its figures cached "
          f"({quick_cold / quick_warm:.1f}x; goal 15 s); report (default, one run): {full[0]:.1f} s; "
          f"peak RSS {max([full[1]] + [q[0][1] for q in quicks]):.0f} MiB")
    if args.write_costs:
        write_costs(full, [q[0] for q in quicks], {"report --quick (figures cached)": [q[1] for q in quicks],
                                                   "report --from": [r[1] for r in renders],
                                                   "report --from (figures cached)": [r[2] for r in renders]})
        print("lnrecency/data/costs.json: the runs recorded; run python3 -m lnrecency.report.regenerate")
    return 0


if __name__ == "__main__":
    sys.exit(main())
