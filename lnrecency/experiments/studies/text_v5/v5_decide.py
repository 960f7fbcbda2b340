"""Plan v5's results from its per-seed table (``docs/thesis_text_v5.json`` publishes the table; the engine decides the
ten tests from it alone by their declared rules, in the plan's two Holm families:
:func:`lnrecency.experiments.plans.engine.decide`), its secondary intervals, the trajectories of T and the predictions
compared with the outcomes."""
from __future__ import annotations

import numpy as np

from lnrecency.experiments.plans.declared import study
from lnrecency.experiments.studies.text_v5 import v5_plan

__all__ = ["END", "MATCHED", "ARM_TESTS", "noise", "secondary", "trajectories", "compare", "snapshot"]

#: T's two points: the run's end (3.0M tokens) and the matched loss, as T1's declared rule reads them
END, MATCHED = study("thesis-text-v5").test("T1").rule.sample.at, study("thesis-text-v5").test("T1").rule.sample.minus
#: F's and P's arms, each read by one test against a fixed boundary (their declared rules)
ARM_TESTS = {t.id: t.rule.sample.cell for t in study("thesis-text-v5").tests if t.rule.sample.at is None}


def _at(rows: list, point: str, gate: bool = True) -> dict:
    """seed -> the slope at ``point`` of the runs that have it (and passed the gate)."""
    return {r["seed"]: r["points"][point]["slope"] for r in rows if point in r["points"] and (r["learned"] or not gate)}


def noise(table: dict) -> dict:
    """Per arm: one run's mean probe SE against the between-seed SD of its slope (T: at 3.0M tokens and at loss
    4.25)."""
    from lnrecency.inference.seed_tests import probe_noise

    out = {}
    for arm, rows in table.items():
        for what, get in ((arm, lambda r: (r["slope"], r["slope_se"])),) + (
                ((f"{arm} at {MATCHED}", lambda r: (r["points"][MATCHED]["slope"], r["points"][MATCHED]["se"])),)
                if arm.startswith("T") else ()):
            pairs = [get(r) for r in rows if not what.endswith(MATCHED) or MATCHED in r["points"]]
            if len(pairs) >= 2:
                out[what] = probe_noise([p[0] for p in pairs], [p[1] for p in pairs])
    return out


def _interval(new, old, boundary=None) -> dict | None:
    from lnrecency.inference.seed_tests import SeedTest

    if len(new) < 2 or (old is not None and len(old) < 2):
        return None
    test = SeedTest(tuple(new), other=None if old is None else tuple(old), boundary=boundary or 0.0)
    lo, hi = test.interval()
    return {"mean": test.mean, "interval": [lo, hi], "seeds": [len(new)] + ([len(old)] if old is not None else []),
            "side": "above" if lo > 0 else "below" if hi < 0 else "across"}


def trajectories(table: dict) -> dict:
    """T per point: each arm's mean slope, loss and tokens, and LayerNorm - none (Welch) with its side."""
    out = {}
    points = sorted({p for arm in ("Tln", "Tnone") for r in table.get(arm, []) for p in r["points"]},
                    key=lambda p: (p.startswith("step"), -float(p.split()[1]) if p.startswith("loss")
                                   else float(p.split()[1])))
    for p in points:
        row = {}
        for arm in ("Tln", "Tnone"):
            got = [r["points"][p] for r in table.get(arm, []) if p in r["points"]]
            row[arm] = {"runs": len(got), **({"slope": float(np.mean([g["slope"] for g in got])),
                                              "tokens": float(np.median([g["tokens"] for g in got])),
                                              "loss": float(np.mean([g["loss"] for g in got]))} if got else {})}
        diff = _interval(list(_at(table.get("Tln", []), p, False).values()),
                         list(_at(table.get("Tnone", []), p, False).values()))
        out[p] = {**row, "layernorm - none": diff}
    return out


def secondary(table: dict, v2: dict | None, v4: dict | None) -> dict:
    """The plan's secondary intervals (no verdicts): each F and P arm minus plan v4's U1 and minus plan v2's BOS
    LayerNorm cell; each arm's BOS path share of the slope; none's own change from loss 4.25 to 3.0M tokens."""
    out: dict = {}
    u1 = [r["slope"] for r in (v4 or {}).get("runs", {}).get("U1 none", []) if r.get("learned", True)]
    ln2 = [r["slope"] for r in (v2 or {}).get("runs", {}).get("bos layernorm", []) if r.get("learned", True)]
    for tid, cell in ARM_TESTS.items():
        new = [r["slope"] for r in table.get(cell, []) if r["learned"]]
        for name, old in ((f"{cell} - v4 U1", u1), (f"{cell} - v2 bos layernorm", ln2)):
            got = _interval(new, old)
            if got:
                out[name] = got
        shares = [r["paths"]["bos"] / r["slope"] for r in table.get(cell, []) if r["paths"] and r["slope"]]
        if shares:
            out[f"{cell} bos path share"] = {"mean": float(np.mean(shares)), "runs": len(shares)}
    none = table.get("Tnone", [])
    end, matched = _at(none, END), _at(none, MATCHED, False)
    got = _interval([end[s] - matched[s] for s in sorted(end) if s in matched], None)
    if got:
        out["Tnone 3.0M - loss 4.25"] = got
    return out


def compare(tests: dict, sizes: dict) -> dict:
    """Each prediction of the plan against its test: the predicted verdict and size, the outcome and the measured
    mean and interval; ``held``: the verdict is the predicted one."""
    predicted_verdict = {t: "confirmed" for t in ("F1", "F2", "F3", "D1", "D2", "D3", "D4", "T1", "T2")}
    predicted_verdict["T3"] = "refuted or inconclusive"
    out = {}
    for tid, t in tests.items():
        size = sizes.get(tid)
        interval = t.get("interval")
        out[tid] = {"predicted": predicted_verdict[tid], "predicted_size": size, "verdict": t["verdict"],
                    "mean": t.get("mean"), "interval": interval,
                    "held": t["verdict"] in predicted_verdict[tid].split(" or "),
                    "size_inside": (None if size is None or not interval else interval[0] <= size <= interval[1])}
    return out


def snapshot(runs: list, st, v2: dict | None = None, v3: dict | None = None, v4: dict | None = None) -> dict:
    """The plan's results as ``docs/thesis_text_v5.json`` holds them: settings, plan hash, the per-seed table, the
    probe noise, the ten tests (p-values, verdicts, the per-seed values each was decided on), the trajectories, the
    secondary intervals and the predictions compared (``v2``, ``v3``, ``v4``: the published snapshots the plan's
    predictions and secondary intervals read)."""
    from lnrecency.experiments.plans.engine import decided_tests
    from lnrecency.experiments.plans.text_arms import seed_table

    table = seed_table(runs)
    tests = decided_tests(study("thesis-text-v5"), table)
    sizes = v5_plan.predictions(v2, v3) if v2 and v3 else {}
    missed = [f"{r['arm']} seed {r['seed']} ({MATCHED})" for r in runs if r["arm"].startswith("T")
              and not any(p["at"] == MATCHED for p in r["points"])]
    return {"experiment": "thesis-text-v5", "plan_sha256": v5_plan.plan_sha256(),
            "settings": st.as_dict(),
            "noise": noise(table), "tests": tests, "trajectories": trajectories(table),
            "secondary": secondary(table, v2, v4), "predictions": compare(tests, sizes), "missed_target": missed,
            "runs": table}


def plan_snapshot(runs: list, st, words: dict) -> dict:
    """The engine's snapshot hook: :func:`snapshot` with the published snapshots of plans v2-v4 read from docs/
    (:func:`lnrecency.experiments.plans.engine.published_snapshot`)."""
    from lnrecency.experiments.plans.engine import published_snapshot

    return snapshot(runs, st, *(published_snapshot(f"thesis_text_v{k}.json") for k in (2, 3, 4)))


def lines(snap: dict) -> list[str]:
    """The command's printed lines: each arm's mean slope and probe noise, each prediction against its outcome."""
    out = []
    for cell, rows in snap["runs"].items():
        ratio = (snap["noise"].get(cell) or {}).get("ratio")
        mean = sum(r["slope"] for r in rows) / len(rows)
        out.append(f"  {cell}: layer-2 slope {mean:+.4f}, {len(rows)} seeds, probe SE / seed SD "
                   + ("n/a" if ratio is None else f"{ratio:.2f}"))
    for tid, p in snap["predictions"].items():
        out.append(f"  {tid}: predicted {p['predicted']}; {p['verdict']} ({'held' if p['held'] else 'failed'})")
    return out
