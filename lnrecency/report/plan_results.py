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
                                        f" Read after the runs (not in the plan): {r.text.rstrip('.')}.") + (
            f" (Our note, after the runs: {r.note.rstrip('.')}.)" if r is not None and r.note else "")
        parts.append(f"{lead} {_mean(got):+.4f} {t.unit} [{lo:+.4f}, {hi:+.4f}] ({t.id} {got['verdict']})." + meaning)
    return "**In plain words.** " + " ".join(parts)


def _cells(study, snapshot: dict) -> list[str]:
    lines = [f"Each cell's runs (the per-seed rows are in docs/{study.published}):", "",
             "| cell | runs | used | mean slope (SE over runs) | one run's probe SE | between-run SD | ratio (target "
             "< 1/3) | final held-out loss |", "|---|---|---|---|---|---|---|---|"]
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
                     + ("n/a" if ratio is None else f"{ratio:.2f} ({'met' if ratio < 1 / 3 else 'missed'})") + " | "
                     + _range([r.get("final_loss") for r in used]) + " |")
    return lines


def _range(values: list) -> str:
    got = [v for v in values if isinstance(v, (int, float))]
    return "n/a" if not got else f"{min(got):.2f}" if min(got) == max(got) else f"{min(got):.2f}-{max(got):.2f}"


def plan_block(study, snapshot: dict) -> str:
    """The results block of ``study``'s page from the snapshot of its run."""
    from lnrecency.inference.seed_tests import holm_levels

    begin, end = markers(study)
    tests = snapshot["tests"]
    families = {k: [t for t in v if t in tests] for k, v in study.holm_families().items()}
    unit = study.tests[0].unit
    holm = "; ".join(f"Holm over {', '.join(v)} at {study.fwer:g}" for v in families.values())
    lines = [begin, plan_reading(study, snapshot), "",
             f"Plan SHA-256 `{snapshot['plan_sha256']}`" + (" (quick run: not decisive)" if snapshot.get("quick")
                                                            else "")
             + f"; {holm}" + (" (each family at its own rate)" if len(families) > 1 else "") + ".", "",
             f"| test | statement | verdict | interval (95 %, {unit}) | detectable effect | p (pair) / Holm level |",
             "|---|---|---|---|---|---|"]
    for order in families.values():
        pairs = [tests[k].get("p_pair", float("nan")) for k in order]
        for k, p, level in zip(order, pairs, holm_levels(pairs, study.fwer)):
            t = tests[k]
            span = (f"[{t['interval'][0]:+.4f}, {t['interval'][1]:+.4f}]" if t.get("interval")
                    else t.get("why") or "n/a")
            effect = f"{t['detectable_effect']:.4f}" if t.get("detectable_effect") is not None else "n/a"
            lines.append(f"| {k} | {t['statement']} | {t['verdict']} | {span} | {effect} | "
                         + ("n/a" if p is None or (isinstance(p, float) and math.isnan(p))
                            else f"{p:.2g} / {level:.3g}") + " |")
    lines += ["", *_cells(study, snapshot)]
    if "missed_target" in snapshot:
        missed = snapshot["missed_target"] or []
        lines += ["", ("Every run with a target loss reached it." if not missed else
                       f"Never reached the target loss within the cap (left out): {', '.join(missed)}.")]
    lines += _predictions(study, snapshot) + _trajectories(snapshot, unit)
    for key, m in (snapshot.get("secondary") or {}).items():  # intervals with their side, never verdicts
        if "interval" not in m:  # a share, not an interval
            lines += ["", f"Secondary (no verdict): {key}: {m['mean']:.2f} (mean over {m['runs']} runs)."]
            continue
        lo, hi = m["interval"]
        runs = " and ".join(str(n) for n in m["seeds"])
        lines += ["", f"Secondary (no verdict): {key}: {m['mean']:+.4f} {unit}, 95 % interval [{lo:+.4f}, "
                      f"{hi:+.4f}], {m['side']} 0 ({runs} runs)."]
    return "\n".join(lines + [end])


def _predictions(study, snapshot: dict) -> list[str]:
    """The plan's predictions (written before its runs) against its outcomes: held or failed, never re-worded."""
    got = snapshot.get("predictions") or {}
    if not got:
        return []
    lines = ["", "Predictions written in the plan before the runs, against the outcomes:", "",
             "| test | predicted | predicted size | outcome | measured (95 % interval) | prediction |",
             "|---|---|---|---|---|---|"]
    for t in study.tests:
        p = got.get(t.id)
        if p is None:
            continue
        size = "none stated" if p.get("predicted_size") is None else f"{p['predicted_size']:+.4f}"
        iv = p.get("interval")
        measured = "n/a" if not iv else f"{p['mean']:+.4f} [{iv[0]:+.4f}, {iv[1]:+.4f}]"
        inside = {True: ", size inside the interval", False: ", size outside the interval"}.get(p.get("size_inside"),
                                                                                               "")
        lines.append(f"| {t.in_text or t.id} | {p['predicted']} | {size} | {p['verdict']} | {measured} | "
                     f"{'held' if p['held'] else 'failed'}{inside} |")
    return lines


def _trajectories(snapshot: dict, unit: str) -> list[str]:
    """A plan's slopes along training (its T arms): per probed point, each arm's mean slope, median tokens and mean
    held-out loss, and LayerNorm - none with its interval and side (secondary, no verdict)."""
    got = snapshot.get("trajectories") or {}
    if not got:
        return []
    arms = [a for a in next(iter(got.values())) if a != "layernorm - none"]
    lines = ["", f"Along training (secondary, no verdicts; slopes in {unit}):", "",
             "| point | " + " | ".join(f"{a}: runs, slope, tokens, loss" for a in arms)
             + " | LayerNorm - none (95 %) |", "|---|" + "---|" * (len(arms) + 1)]
    for point, row in got.items():
        cells = []
        for a in arms:
            r = row[a]
            cells.append(f"{r['runs']}" + ("" if not r["runs"] else
                                           f", {r['slope']:+.5f}, {r['tokens'] / 1e6:.2f}M, {r['loss']:.3f}"))
        d = row.get("layernorm - none")
        diff = "n/a" if not d else (f"{d['mean']:+.5f} [{d['interval'][0]:+.5f}, {d['interval'][1]:+.5f}], "
                                    f"{d['side']} 0")
        lines.append(f"| {point} | " + " | ".join(cells) + f" | {diff} |")
    return lines
