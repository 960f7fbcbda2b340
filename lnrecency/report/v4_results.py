"""Plan v4's results on its page (issue 76), from the snapshot of its run (docs/thesis_text_v4.json, written by
``lnrecency experiments thesis-text-v4 --json`` with plan v2's published runs for the secondary intervals): the plain
reading, the three tests with their Holm levels, the probe's noise, each cell's slopes, the secondary intervals and the
runs that missed the target, between the thesis-text-v4 markers of docs/thesis-text-v4.md."""
from __future__ import annotations

import math

__all__ = ["V4_BEGIN", "V4_END", "v4_reading", "v4_block"]

V4_BEGIN, V4_END = "<!-- thesis-text-v4:begin -->", "<!-- thesis-text-v4:end -->"
def _mean(t: dict) -> float | None:
    iv = t.get("interval")
    return None if not iv else 0.5 * (iv[0] + iv[1])


def v4_reading(snapshot: dict) -> str:
    """The plan's three tests in plain words, each with its estimate, interval and verdict, and what its decision
    means: the reading declared with the plan (lnrecency.experiments.plans.declared), checked against the snapshot's
    own rows by the engine before it is said (a reading the rows contradict is refused, never rendered), and marked
    when it was written after the runs."""
    from lnrecency.experiments.plans.declared import study
    from lnrecency.experiments.plans.engine import check_readings

    tests = snapshot["tests"]
    readings = {} if snapshot.get("quick") else check_readings(study("thesis-text-v4"), snapshot)
    parts = []
    words = {"U1": "With BOS and no normalisation, layer 1's BOS share imposed at the LayerNorm level, layer 2's slope "
                   "is", "U2": "With BOS and LayerNorm, the share clamped to the none level, it is",
             "N1": "Without BOS, at held-out loss 4.25, LayerNorm minus none is"}
    for key in ("U1", "U2", "N1"):
        t = tests.get(key)
        if t is None:
            continue
        if _mean(t) is None:
            parts.append(f"{words[key]} not decided ({t.get('why') or 'no test'}).")
            continue
        lo, hi = t["interval"]
        r = readings.get(key)
        meaning = "" if r is None else (f" In the plan's words, {r.text.rstrip('.')}." if r.written == "before the runs"
                                        else f" Read after the runs (not in the plan), {r.text.rstrip('.')}.")
        parts.append(f"{words[key]} {_mean(t):+.4f} logit per key [{lo:+.4f}, {hi:+.4f}] ({key} {t['verdict']})."
                     + meaning)
    return "**In plain words.** " + " ".join(parts)


def v4_block(snapshot: dict) -> str:
    """The results block of docs/thesis-text-v4.md from the snapshot of plan v4's run."""
    from lnrecency.inference.seed_tests import holm_levels

    tests = snapshot["tests"]
    order = [k for k in ("U1", "U2", "N1") if k in tests]
    lines = [V4_BEGIN, v4_reading(snapshot), "",
             f"Plan SHA-256 `{snapshot['plan_sha256']}`" + (" (quick run: not decisive)" if snapshot.get("quick")
                                                            else "") + "; Holm over U1, U2, N1 at 0.05.", "",
             "| test | statement | verdict | interval (95 %, logit per key) | detectable effect | p (pair) / Holm "
             "level |", "|---|---|---|---|---|---|"]
    pairs = [tests[k].get("p_pair", float("nan")) for k in order]
    for k, p, level in zip(order, pairs, holm_levels(pairs, 0.05)):
        t = tests[k]
        span = f"[{t['interval'][0]:+.4f}, {t['interval'][1]:+.4f}]" if t.get("interval") else t.get("why") or "n/a"
        effect = f"{t['detectable_effect']:.4f}" if t.get("detectable_effect") is not None else "n/a"
        lines.append(f"| {k} | {t['statement']} | {t['verdict']} | {span} | {effect} | "
                     + ("n/a" if p is None or (isinstance(p, float) and math.isnan(p)) else f"{p:.2g} / {level:.3g}")
                     + " |")
    lines += ["", "Each cell's runs (the per-seed rows are in docs/thesis_text_v4.json):", "",
              "| cell | runs | used | mean slope (SE over runs) | one run's probe SE | between-run SD | ratio (target "
              "< 1/3) |", "|---|---|---|---|---|---|---|"]
    for cell, rows in snapshot["runs"].items():
        used = [r for r in rows if (r["reached"] if cell.startswith("N1") else r["learned"])]
        slopes = [r["slope"] for r in used]
        n = len(slopes)
        mean = sum(slopes) / n if n else None
        se = (math.sqrt(sum((s - mean) ** 2 for s in slopes) / (n - 1)) / math.sqrt(n)) if n > 1 else None
        nz = snapshot["noise"].get(cell) or {}
        ratio = nz.get("ratio")
        lines.append(f"| {cell} | {len(rows)} | {n} | "
                     + ("n/a" if mean is None else f"{mean:+.5f}" + (f" ({se:.5f})" if se is not None else ""))
                     + f" | {nz.get('probe_se', float('nan')):.5f} | "
                     + ("n/a" if nz.get("seed_sd") is None else f"{nz['seed_sd']:.5f}") + " | "
                     + ("n/a" if ratio is None else f"{ratio:.2f} ({'met' if ratio < 1 / 3 else 'missed'})") + " |")
    missed = snapshot.get("missed_target") or []
    lines += ["", ("Every N1 run reached the target loss." if not missed else
                   f"Never reached the target loss within the cap (left out of N1): {', '.join(missed)}.")]
    for key, m in (snapshot.get("secondary") or {}).items():  # intervals with their side, never verdicts
        lo, hi = m["interval"]
        lines += ["", f"Secondary (no verdict): {key}: {m['mean']:+.4f} logit per key, 95 % interval [{lo:+.4f}, "
                      f"{hi:+.4f}], {m['side']} 0 ({m['seeds'][0]} and {m['seeds'][1]} runs)."]
    return "\n".join(lines + [V4_END])
