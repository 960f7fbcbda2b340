"""The thesis on text, plan version 3 (issue 67): the learned read-out of layer 1's BOS share put to causal tests,
and layer 2's logits taken apart path by path (``python3 -m lnrecency.experiments.studies.thesis_text_v3``).

The design and the five primary tests are fixed in advance in ``lnrecency/data/thesis_text_plan_v3.md`` (its SHA-256,
:func:`plan_sha256`, is part of every cache key and record). In short: plan v2's 48 models (their final weights,
:mod:`lnrecency.experiments.studies.v2_weights`), each probed on 320 held-out windows of its own kind; on the same
windows the three interventions of :mod:`lnrecency.experiments.studies.v3_paths` and the exact path decomposition of
layer 2's logits. The engine decides A1, B1, C1, A0, C0 by their declared rules
(:func:`lnrecency.experiments.plans.engine.decide`), Holm's procedure over them only, from the per-seed table the
snapshot publishes (``docs/thesis_text_v3.json``).
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field

import numpy as np

from lnrecency.experiments.plans.declared import study
from lnrecency.experiments.run_cache import PlanRuns
from lnrecency.experiments.studies.thesis_text import NORMS, learned
from lnrecency.experiments.studies.thesis_text_v2 import V2Settings, cached_v2, corpus_data, plain_corpus_data

__all__ = ["V3Settings", "plan_path", "plan_sha256", "probe_run", "run_v3", "cached_v3", "seed_table",
           "decided_tests", "snapshot", "RUN_KEYS", "shaped_theory"]

VERSION = 2  # 2: each model's read-out gain (the sink theory with a read-out, issue 67 item 4)



#: the plan's declaration: its text (``PLAN.plan_path()``) and SHA-256 (``PLAN.plan_sha256()``), defined once there
PLAN = study("thesis-text-v3")
plan_path, plan_sha256 = PLAN.plan_path, PLAN.plan_sha256


@dataclass(frozen=True)
class V3Settings:
    """Plan v3 over plan v2's models (``v2``): ``windows`` held-out windows per run."""

    windows: int = 320
    v2: V2Settings = field(default_factory=V2Settings)

    @classmethod
    def preset(cls, quick: bool) -> "V3Settings":
        """Default: the plan's 48 models, 320 windows each; quick: plan v2's quick models (3 seeds per cell, 60 steps),
        16 windows (a smoke test, never decisive)."""
        return cls(windows=16, v2=V2Settings.preset(True)) if quick else cls()

    @property
    def quick(self) -> bool:
        return self == V3Settings.preset(True)

    def jobs(self) -> list[tuple[bool, str, int]]:
        return self.v2.jobs()

    def key(self) -> str:
        text = json.dumps({"v": VERSION, "plan": plan_sha256(), "windows": self.windows, "v2": self.v2.key()},
                          sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def windows_of(self, bos: bool, norm: str, seed: int) -> np.ndarray:
        """The run's own held-out windows (BOS first in the BOS arm), drawn from a stream of this plan's own."""
        base = self.v2.base
        data = corpus_data(base.corpus) if bos else plain_corpus_data(base.corpus)
        seq = np.random.SeedSequence([base.probe_seed("attn2", norm, seed), 3])
        text, _ = data.heldout(base.n, self.windows, np.random.Generator(np.random.PCG64(seq)))
        return text


def _stat(values: np.ndarray) -> dict:
    v = np.asarray(values, dtype=float)
    return {"mean": float(v.mean()), "se": float(v.std(ddof=1) / np.sqrt(v.size))}


def probe_run(bos: bool, norm: str, seed: int, st: V3Settings) -> dict:
    """One model of the plan (a worker's job): its layer-2 slope on the plan's windows (mean and SE over windows),
    each intervention's slope and its paired change, and the path decomposition."""
    from lnrecency.experiments.studies import v3_paths as vp
    from lnrecency.experiments.studies.v2_weights import load_model

    model = load_model(st.v2, bos, norm, seed)
    l2 = vp.layer2(model, st.windows_of(bos, norm, seed))
    y = l2.normed()
    intact = vp.slopes(l2.logits(y, y))
    out = {"bos": bool(bos), "norm": norm, "seed": int(seed), "windows": int(st.windows), "plan_sha256": plan_sha256(),
           "intact": _stat(intact), "interventions": {}, "decomposition": vp.decompose(l2),
           "readout_gain": vp.readout_gain(l2)}
    for kind in vp.INTERVENTIONS:
        s = vp.slopes(vp.intervened_logits(l2, kind))
        out["interventions"][kind] = {**_stat(s), "change": _stat(s - intact)}
    return out


RUN_KEYS = ("bos", "norm", "seed", "windows", "plan_sha256", "intact", "interventions", "decomposition",
            "readout_gain")
_STAT = {"mean": float, "se": float}
RUN_SHAPE = {"bos": bool, "norm": str, "seed": int, "windows": int, "plan_sha256": str, "intact": _STAT,
             "readout_gain": float,
             "interventions": {k: {**_STAT, "change": _STAT} for k in ("qk_identity", "bos_direction", "scale_fixed")},
             "decomposition": {"total": float, "sum_error": float,
                               "paths": {p: {"slope": float, "scale": float, "numerator": float, "interaction": float}
                                         for p in ("own", "bos", "other", "bias")}}}


#: the plan's probes in the cache: ``{key}-{bos|nobos}-{norm}-{seed}.json`` under thesis-text-v3/, each checked
#: against its job and this plan's SHA-256
RUNS = PlanRuns("thesis-text-v3", ("bos", "norm", "seed"), lambda: plan_sha256(), "plan v3", RUN_KEYS, RUN_SHAPE,
                label=lambda bos, norm, seed: f"{'bos' if bos else 'nobos'}-{norm}-{seed}", runs="plan v3 probes")


def cached_v3(st: V3Settings | None = None) -> list | None:
    """Every run of the plan from the cache, in job order; None when one is missing."""
    return RUNS.cached(st or V3Settings())


def run_v3(st: V3Settings | None = None, *, use_cache: bool = True, progress: bool | None = None,
           workers: int | None = 2, scheduler: str = "local") -> list:
    """Every run of the plan, probed ``workers`` at a time or read from the cache; plan v2's runs are read (or
    trained) first, and the no-BOS weights it did not keep trained again and checked against its records
    (:func:`lnrecency.experiments.studies.v2_weights.ensure_weights`); ``scheduler``: each of them one task on that
    Dask cluster instead of local workers (lnrecency.experiments.decoders.parallel)."""
    from lnrecency.experiments.studies.thesis_text_v2 import run_v2
    from lnrecency.experiments.studies.v2_weights import ensure_weights

    st = st or V3Settings()
    run_v2(st.v2, use_cache=use_cache, progress=progress, workers=workers, scheduler=scheduler)
    ensure_weights(st.v2, workers=workers or 2, progress=progress, scheduler=scheduler)
    corpus_data(st.v2.base.corpus)
    plain_corpus_data(st.v2.base.corpus)
    return RUNS.run(probe_run, st, use_cache=use_cache, progress=progress, workers=workers, scheduler=scheduler)


def _cell(bos: bool, norm: str) -> str:
    return f"{'bos' if bos else 'no bos'} {norm}"


def _log_interp(trajectory: list, target: float) -> tuple[float, bool]:
    """The layer-2 slope where a run's held-out loss first reaches ``target``, interpolated linearly in log tokens
    between the two evaluations around it; (its final slope, False) when it never does."""
    for (t0, l0, s0), (t1, l1, s1) in zip(trajectory, trajectory[1:]):
        if l0 > target >= l1 and t0 > 0:
            f = (l0 - target) / (l0 - l1)
            x = np.log(t0) + f * (np.log(t1) - np.log(t0))
            return float(s0 + (s1 - s0) * (x - np.log(t0)) / (np.log(t1) - np.log(t0))), True
    return float(trajectory[-1][2]), trajectory[-1][1] <= target


def seed_table(runs: list, v2_runs: list, st: V3Settings) -> dict:
    """The data every verdict of the plan is decided from, one row per model (published in the snapshot): per cell,
    each model's seed, whether it passed v2's learning gate, its intact layer-2 slope with its SE over the plan's
    windows, each intervention's slope and the primary value (intervened - 0.5 x intact), the path decomposition,
    and the slope at the none arm's median final loss (matched by stage, M0)."""
    from lnrecency.experiments.studies.thesis_text_v2 import seed_table as v2_table

    v2 = v2_table(v2_runs, st.v2)
    out = {}
    for bos in st.v2.bos:
        none_final = [r["final_loss"] for r in v2[_cell(bos, "none")] if r["learned"]]
        target = float(np.median(none_final)) if none_final else None
        for norm in NORMS:
            rows = []
            for r in runs:
                if (r["bos"], r["norm"]) != (bos, norm):
                    continue
                old = next(x for x in v2[_cell(bos, norm)] if x["seed"] == r["seed"])
                v2_run = next(x for x in v2_runs if (x["bos"], x["norm"], x["seed"]) == (bos, norm, r["seed"]))
                m_slope, reached = (_log_interp(old["trajectory"], target) if target is not None else (None, False))
                rows.append({"seed": r["seed"], "learned": bool(learned(v2_run, st.v2.base)),
                             "slope": r["intact"]["mean"], "slope_se": r["intact"]["se"],
                             **{k: r["interventions"][k]["mean"] for k in r["interventions"]},
                             **{f"{k}_value": r["interventions"][k]["mean"] - 0.5 * r["intact"]["mean"]
                                for k in r["interventions"]},
                             "paths": r["decomposition"]["paths"], "sum_error": r["decomposition"]["sum_error"],
                             "readout_gain": r["readout_gain"],
                             "matched_slope": m_slope, "matched_reached": reached, "matched_target": target})
            out[_cell(bos, norm)] = rows
    return out


def noise(table: dict) -> dict:
    """Per cell: one run's mean probe SE against the between-seed SD of the intact slope, and their ratio (the plan
    aims below 1/3)."""
    from lnrecency.inference.seed_tests import probe_noise

    return {cell: probe_noise([r["slope"] for r in rows], [r["slope_se"] for r in rows])
            for cell, rows in table.items()}


def decided_tests(table: dict) -> dict:
    """The five tests as the snapshot holds them, decided by the engine from the per-seed table by their declared
    rules: each with the plan's sentence, its BOS arm and intervention, verdict, why-not text, p-values, interval and
    the per-seed values it read."""
    from lnrecency.experiments.plans.engine import decide

    plan, tests = study("thesis-text-v3"), {}
    for tid, (d, why) in decide(plan, table).items():
        sample = plan.test(tid).rule.sample
        tests[tid] = {"statement": plan.test(tid).says, "bos": sample.cell.startswith("bos"),
                      "intervention": sample.value.removesuffix("_value"),
                      "verdict": "inconclusive" if d is None else d.verdict,
                      "why": why, **({} if d is None else {**d.to_json(), "p_pair": d.test.p_pair,
                                                          "values": list(d.test.values)})}
    return tests


def snapshot(runs: list, v2_runs: list, st: V3Settings) -> dict:
    """The plan's results as ``docs/thesis_text_v3.json`` holds them: settings, plan hash, the per-seed table,
    the probe noise per cell and the five tests with their p-values and verdicts."""
    table = seed_table(runs, v2_runs, st)
    return {"experiment": "thesis-text-v3", "plan_sha256": plan_sha256(),
            "settings": {"windows": st.windows, "v2_key": st.v2.key(), **asdict(st.v2.base)},
            "noise": noise(table), "tests": decided_tests(table), "secondary": secondary(table),
            "theory": theory(table, v2_runs, st), "runs": table}


def theory(table: dict, v2_runs: list, st: V3Settings) -> dict:
    """The sink theory in the models' own setting (residual, n, alpha = 0), per cell (issue 67, item 4): the bonus b
    fitted to the cell's layer-1 first-key share (plan v2's rows, :func:`~.thesis_text_v2.theory_shares`), the
    parameter-free layer-2 slope at that b, and with each learned model's read-out gain (measured from the level of its
    logits, :func:`~.v3_paths.readout_gain`): per seed base + gain x slope(c) (:func:`lnrecency.theory.sink.
    readout_slope`), their mean beside the trained slope and its BOS path, and the ratio predicted / trained."""
    from lnrecency.experiments.studies.thesis_text_v2 import summary, theory_shares
    from lnrecency.inference.recency_slope import layer_slope
    from lnrecency.theory.sink import bos_coordinate, sink_limit

    cells = summary(v2_runs, st.v2)
    n = st.v2.base.n
    out = {}
    for cell, rows in table.items():
        shares = (cells.get(cell) or {}).get("first_share_rows")
        rows = [r for r in rows if r["learned"]]
        if not shares or not rows:
            continue
        norm = cell.split()[-1]
        b = theory_shares(shares)["b"]
        base = sink_limit(n, 2, b=b, norm=norm, residual=True).slope(2)
        per_key = layer_slope(np.tile(bos_coordinate(n, b=b, norm=norm, residual=True), (n, 1)), skip=1)
        predicted = [base + r["readout_gain"] * per_key for r in rows]
        trained = float(np.mean([r["slope"] for r in rows]))
        out[cell] = {"b": b, "parameter_free": base, "coordinate_slope": per_key,
                     "gain": float(np.mean([r["readout_gain"] for r in rows])),
                     "predicted": float(np.mean(predicted)), "predicted_per_seed": predicted, "trained": trained,
                     "bos_path": float(np.mean([r["paths"]["bos"]["slope"] for r in rows])),
                     "ratio": float(np.mean(predicted)) / trained if trained else None}
    return out


def shaped_theory(shape: dict, b: float, n: int, norm: str) -> dict:
    """The sink theory with a read-out fitted in shape (issue 76, item 2), for one model: the parameter-free slope at
    bonus ``b`` plus each read-out of :func:`~.v3_paths.readout_shape` (``level``: plan v3's line through the origin,
    ``gain``: a line with an intercept, ``within``: within rows) times the theory's coordinate slope; beside the
    model's BOS path, each prediction's ratio to it. The intercept has no slope, so the line through the origin
    overshoots the line with it by exactly intercept / mean coordinate x the coordinate's slope."""
    from lnrecency.inference.recency_slope import layer_slope
    from lnrecency.theory.sink import bos_coordinate, sink_limit

    base = sink_limit(n, 2, b=b, norm=norm, residual=True).slope(2)
    per_key = layer_slope(np.tile(bos_coordinate(n, b=b, norm=norm, residual=True), (n, 1)), skip=1)
    out = {"parameter_free": base, "coordinate_slope": per_key, "bos_path": shape["bos_path"]}
    for k in ("level", "gain", "within"):
        out[k] = base + shape[k] * per_key
        out[f"{k}_ratio"] = out[k] / shape["bos_path"] if shape["bos_path"] else None
    return out


def secondary(table: dict) -> dict:
    """The plan's secondary M0 (an interval with the side of 0 it lies on, no verdict): without BOS, LayerNorm minus
    none at matched loss by stage, each learned run's layer-2 slope (plan v2's trajectory, 32 windows) interpolated in
    log tokens to the none arm's median final loss; a run that never reaches it enters with its final slope (counted
    in ``final_used``)."""
    from lnrecency.inference.seed_tests import SeedTest

    ln = [r for r in table.get(_cell(False, "layernorm"), []) if r["learned"]]
    none = [r for r in table.get(_cell(False, "none"), []) if r["learned"]]
    if len(ln) < 2 or len(none) < 2 or ln[0]["matched_target"] is None:
        return {}
    test = SeedTest(tuple(r["matched_slope"] for r in ln), other=tuple(r["matched_slope"] for r in none))
    lo, hi = test.interval()
    side = "above" if lo > 0 else "below" if hi < 0 else "across"
    return {"M0": {"what": "without BOS: LayerNorm minus none, layer-2 slope at matched held-out loss (by stage)",
                   "target_loss": ln[0]["matched_target"], "mean": test.mean, "interval": [lo, hi], "side": side,
                   "seeds": [len(ln), len(none)],
                   "final_used": sum(not r["matched_reached"] for r in ln + none)}}


def main(argv: list[str] | None = None) -> int:
    """``python3 -m lnrecency.experiments.studies.thesis_text_v3 OUT.json``: the plan's runs (plan v2's read or
    trained, the missing weights kept, the 48 models probed), then the snapshot written to OUT.json."""
    import sys

    from lnrecency.files.atomic import atomic_write_text

    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or not args[0].endswith(".json"):
        print("usage: python3 -m lnrecency.experiments.studies.thesis_text_v3 OUT.json", file=sys.stderr)
        return 2
    st = V3Settings()
    runs = run_v3(st, progress=True)
    from lnrecency.inference.evidence import strict_json

    atomic_write_text(args[0], json.dumps(strict_json(snapshot(runs, cached_v2(st.v2), st)), indent=1,
                                          sort_keys=True, allow_nan=False) + "\n")
    print(f"wrote {args[0]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
