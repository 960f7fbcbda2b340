"""A plan's results on its page, rendered from its declaration and the snapshot of its run (issue 82): the plan's
tests in plain words (each with its estimate, interval, verdict and the reading its declaration holds for that outcome,
checked against the snapshot's own rows by the engine before it is said), the tests with their Holm levels, each
cell's runs and probe noise, the runs that missed a target and the secondary intervals, between the page's
``<!-- NAME:begin -->`` / ``<!-- NAME:end -->`` markers (NAME the experiment's name). A plan that declares
``published`` and ``page`` gets this block with nothing else written (plan v4's page is rendered so)."""
from __future__ import annotations

import math

__all__ = ["markers", "plan_reading", "plan_block", "pages"]


def markers(study) -> tuple[str, str]:
    return f"<!-- {study.name}:begin -->", f"<!-- {study.name}:end -->"


def pages() -> list:
    """The declared plans whose page this module fills (their ``published`` snapshot and ``page``)."""
    from lnrecency.experiments.plans.declared import plans

    return [s for s in plans() if s.published and s.page]


def _mean(t: dict) -> float | None:
    iv = t.get("interval")
    return None if not iv else 0.5 * (iv[0] + iv[1])


def plan_reading(study, snapshot: dict) -> str:
    """The plan's tests in plain words: where, what is compared, its estimate and interval and verdict, then what that
    outcome means in the plan's declared reading (marked when written after the runs)."""
    from lnrecency.experiments.plans.engine import check_readings

    tests = snapshot["tests"]
    readings = {} if snapshot.get("quick") else check_readings(study, snapshot)
    parts = []
    for t in study.tests:
        got = tests.get(t.id)
        if got is None:
            continue
        lead = f"{t.where[0].upper()}{t.where[1:]}: {t.comparison}"
        if _mean(got) is None:
            parts.append(f"{lead} not decided ({got.get('why') or 'no test'}).")
            continue
        lo, hi = got["interval"]
        r = readings.get(t.id)
        meaning = "" if r is None else (f" The plan's reading of this outcome: \"{r.text.rstrip('.')}.\""
                                        if r.written == "before the runs" else
                                        f" Read after the runs (not in the plan): {r.text.rstrip('.')}.")
        parts.append(f"{lead} {_mean(got):+.4f} {t.unit} [{lo:+.4f}, {hi:+.4f}] ({t.id} {got['verdict']})." + meaning)
    return "**In plain words.** " + " ".join(parts)


def _cells(study, snapshot: dict) -> list[str]:
    lines = [f"Each cell's runs (the per-seed rows are in docs/{study.published}):", "",
             "| cell | runs | used | mean slope (SE over runs) | one run's probe SE | between-run SD | ratio (target "
             "< 1/3) |", "|---|---|---|---|---|---|---|"]
    for cell, rows in snapshot["runs"].items():
        used = study.used(cell, rows)
        slopes = [r["slope"] for r in used]
        n = len(slopes)
        mean = sum(slopes) / n if n else None
        se = (math.sqrt(sum((s - mean) ** 2 for s in slopes) / (n - 1)) / math.sqrt(n)) if n > 1 else None
        nz = (snapshot.get("noise") or {}).get(cell) or {}
        ratio = nz.get("ratio")
        lines.append(f"| {cell} | {len(rows)} | {n} | "
                     + ("n/a" if mean is None else f"{mean:+.5f}" + (f" ({se:.5f})" if se is not None else ""))
                     + " | " + ("n/a" if nz.get("probe_se") is None else f"{nz['probe_se']:.5f}") + " | "
                     + ("n/a" if nz.get("seed_sd") is None else f"{nz['seed_sd']:.5f}") + " | "
                     + ("n/a" if ratio is None else f"{ratio:.2f} ({'met' if ratio < 1 / 3 else 'missed'})") + " |")
    return lines


def plan_block(study, snapshot: dict) -> str:
    """The results block of ``study``'s page from the snapshot of its run."""
    from lnrecency.inference.seed_tests import holm_levels

    begin, end = markers(study)
    tests = snapshot["tests"]
    order = [t.id for t in study.tests if t.id in tests]
    unit = study.tests[0].unit
    lines = [begin, plan_reading(study, snapshot), "",
             f"Plan SHA-256 `{snapshot['plan_sha256']}`" + (" (quick run: not decisive)" if snapshot.get("quick")
                                                            else "")
             + f"; Holm over {', '.join(order)} at {study.fwer:g}.", "",
             f"| test | statement | verdict | interval (95 %, {unit}) | detectable effect | p (pair) / Holm level |",
             "|---|---|---|---|---|---|"]
    pairs = [tests[k].get("p_pair", float("nan")) for k in order]
    for k, p, level in zip(order, pairs, holm_levels(pairs, study.fwer)):
        t = tests[k]
        span = f"[{t['interval'][0]:+.4f}, {t['interval'][1]:+.4f}]" if t.get("interval") else t.get("why") or "n/a"
        effect = f"{t['detectable_effect']:.4f}" if t.get("detectable_effect") is not None else "n/a"
        lines.append(f"| {k} | {t['statement']} | {t['verdict']} | {span} | {effect} | "
                     + ("n/a" if p is None or (isinstance(p, float) and math.isnan(p)) else f"{p:.2g} / {level:.3g}")
                     + " |")
    lines += ["", *_cells(study, snapshot)]
    if "missed_target" in snapshot:
        missed = snapshot["missed_target"] or []
        lines += ["", ("Every run with a target loss reached it." if not missed else
                       f"Never reached the target loss within the cap (left out): {', '.join(missed)}.")]
    for key, m in (snapshot.get("secondary") or {}).items():  # intervals with their side, never verdicts
        lo, hi = m["interval"]
        lines += ["", f"Secondary (no verdict): {key}: {m['mean']:+.4f} {unit}, 95 % interval [{lo:+.4f}, "
                      f"{hi:+.4f}], {m['side']} 0 ({m['seeds'][0]} and {m['seeds'][1]} runs)."]
    return "\n".join(lines + [end])
