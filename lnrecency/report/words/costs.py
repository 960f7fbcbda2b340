"""The measured costs in words (lnrecency/data/costs.json): the README's quick-start sentence and the sentences the
documentation pages hold between their markers (the report's timings, the GGUF probe, plans v2's and Wu's runs).
Every number is read from costs.json, never typed."""
from __future__ import annotations

__all__ = ["costs_sentence", "timings_sentence", "gguf_sentence", "v2_cost_sentence", "wu_cost_sentence"]

COSTS_BEGIN, COSTS_END = "<!-- costs:begin -->", "<!-- costs:end -->"
TIMINGS_BEGIN, TIMINGS_END = "<!-- timings:begin -->", "<!-- timings:end -->"


def costs_sentence() -> str:
    """The quick start's measured costs (lnrecency/data/costs.json), between the costs markers."""
    import json
    from importlib.resources import files

    from lnrecency.claims.catalog import duration

    data = json.loads(files("lnrecency").joinpath("data/costs.json").read_text())
    c, i = data["commands"], data["installs"]
    rep, quick, suite = c["report"], c["report --quick"], c["pytest"]
    return (f"{COSTS_BEGIN}Measured on this project's 2-core machine ({rep['date']}): the first installs a "
            f"{i['report']['mb']} MB virtual environment and writes the report in {duration(rep['seconds'])} with "
            f"nothing cached (`--quick`: {duration(quick['seconds'])}); the second installs about "
            f"{i['test']['mb'] / 1000:.1f} GB and runs the suite ({suite['tests']} tests: {suite['passed']} passed, "
            f"{suite['tests'] - suite['passed']} skipped) in {duration(suite['seconds'])} "
            f"({suite['date']}).{COSTS_END}")


#: a measured time this close to its goal (a fraction of the goal), either side, is said to meet or miss it by a hair:
#: two runs of the same code minutes apart on this machine differ by about that much (7.4 s and 8.3 s, report --from)
HAIR = 0.1


def timings_sentence() -> str:
    """The report's measured wall times and peak memory (lnrecency/data/costs.json, written by
    ``benchmarks/bench_report.py --write-costs``), between the timings markers of docs/report.md: with nothing
    cached, and again with the figures cached (lnrecency.files.figure_cache)."""
    from lnrecency.claims.catalog import cost, duration

    rep, quick = cost("report"), cost("report --quick")
    quick_warm, ren, ren_warm = (cost("report --quick (figures cached)"), cost("report --from"),
                                 cost("report --from (figures cached)"))
    peak = max(rep.get("peak_mib") or 0, quick.get("peak_mib") or 0)
    def against(entry: dict, goal: float) -> str:
        # a time measured more than once is the median of its runs, their range beside it; within a tenth of the goal
        # either side, the sentence says it was by a hair (and, from one run, that one run decides nothing)
        seconds, runs = entry["seconds"], entry.get("runs") or []
        said = (f"median of {len(runs)} runs, {min(runs):.1f}-{max(runs):.1f} s; " if len(runs) > 1 else "")
        said += f"goal {goal:g} s: {'met' if seconds <= goal else 'missed'}"
        return said + (f" by a hair, {abs(goal - seconds):.1f} s" + (", in one run" if len(runs) < 2 else "")
                       if abs(goal - seconds) <= HAIR * goal else "")

    cached = "" if not (quick_warm and ren and ren_warm) else (
        f"; rendered `--from` the quick evidence, {ren['seconds']:.1f} s ({against(ren, 8)}); run again "
        f"with its figures in the cache, `--quick` took {quick_warm['seconds']:.1f} s "
        f"({against(quick_warm, 15)}) and `--from` {ren_warm['seconds']:.1f} s "
        f"({against(ren_warm, 8)})")
    return (f"{TIMINGS_BEGIN}On this project's 2-core machine ({rep['date']}) the default took "
            f"{duration(rep['seconds'])} (one run) and `--quick` {quick['seconds']:.1f} s ({against(quick, 15)}) "
            f"wall-clock with nothing cached "
            f"(interpreter start-up included)" + (f", the largest single process at about {peak} MiB resident (up to "
                                                 f"four run at once: two verdict workers and two drawing processes)"
                                                 if peak else "") + cached +
            ". `python3 benchmarks/bench_report.py --write-costs` measures them into lnrecency/data/costs.json."
            f"{TIMINGS_END}")


GGUF_BEGIN, GGUF_END = "<!-- gguf-cost:begin -->", "<!-- gguf-cost:end -->"


def gguf_sentence() -> str:
    """The default GGUF probe's measured time and peak memory beside its estimate (lnrecency/data/costs.json),
    between the gguf-cost markers of docs/pretrained.md."""
    from lnrecency.claims.catalog import cost, duration

    c = cost("probe --gguf")
    return (f"{GGUF_BEGIN}Measured on this project's 2-core machine ({c['date']}): {c['what']}: "
            f"{duration(c['seconds'])} and {c['peak_mib']} MiB at the peak, against the estimate it prints before "
            f"loading, {duration(c['estimate_seconds'])} and {c['estimate_peak_mib']} MiB.{GGUF_END}")


V2_COST_BEGIN, V2_COST_END = "<!-- v2-cost:begin -->", "<!-- v2-cost:end -->"


def v2_cost_sentence() -> str:
    """Plan v2's measured run time (lnrecency/data/costs.json), between the v2-cost markers."""
    from lnrecency.claims.catalog import cost, duration

    c, q = cost("experiments thesis-text-v2"), cost("experiments thesis-text-v2 --quick")
    return (f"{V2_COST_BEGIN}Measured ({c['date']}): {duration(c['seconds'])}, {c['what']}. `--quick`: "
            f"{duration(q['seconds'])} ({q['what']}).{V2_COST_END}")


WU_COST_BEGIN, WU_COST_END = "<!-- wu-cost:begin -->", "<!-- wu-cost:end -->"


def wu_cost_sentence() -> str:
    """Wu et al.'s experiment's measured run time (lnrecency/data/costs.json), between the wu-cost markers."""
    from lnrecency.claims.catalog import cost, duration

    c, q = cost("experiments wu-icl"), cost("experiments wu-icl --quick")
    return (f"{WU_COST_BEGIN}Measured ({c['date']}): {duration(c['seconds'])}, {c['what']}. `--quick`: "
            f"{duration(q['seconds'])} ({q['what']}).{WU_COST_END}")
