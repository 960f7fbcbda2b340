"""Wu et al.'s behavioural experiment reproduced and extended with a normalisation inserted (issue 51;
``lnrecency experiments wu-icl``).

Wu, Wang, Jegelka and Jadbabaie (ICML 2025) train a stack of causal attention layers without any normalisation on
an in-context classification task (:mod:`lnrecency.experiments.wu.icl_task`) and report, in their Fig. 2 (NoPE,
mean of 5 runs), accuracy gaps that favour earlier items. Here their task and model
(:mod:`lnrecency.experiments.wu.attention_stack`) are trained on the CPU in their three published arms (depth 2,
depth 6, depth 2 with residual), 5 seeds each, without normalisation (their setting) and with LayerNorm or RMSNorm
at every attention layer's input; everything else is theirs except the number of steps (:class:`WuSettings`).

The design, the learning gate and the primary tests were written down before the run in
``lnrecency/data/wu_icl_plan.md``; its SHA-256 (:func:`plan_sha256`) is part of every cache key and record.
:func:`decide` runs the plan's two families with Holm's procedure at 0.05 each: R1-R6 (their published
directions, as theirs) and P1-P6 (ours: the normalisation's effect and its mechanism).
"""
from __future__ import annotations

import hashlib
import json
import time
from dataclasses import asdict, dataclass, field

import numpy as np

from lnrecency.experiments.plans.declared import study
from lnrecency.experiments.run_cache import PlanRuns
from lnrecency.experiments.wu.icl_task import PAIRS, ICLTask

__all__ = ["ARMS", "NORMS", "PUBLISHED", "WuSettings", "plan_path", "plan_sha256", "train_run", "run_wu", "RUNS",
           "seed_rows", "cached_wu", "table", "decide", "summary", "GATE", "RUN_SHAPE", "gap_name"]

NORMS = ("none", "layernorm", "rmsnorm")
#: the published arms: name -> (attention layers, residual)
ARMS = {"depth 2": (2, False), "depth 6": (6, False), "depth 2 residual": (2, True)}
#: Wu et al.'s Fig. 2 (NoPE, causal mask, mean of 5 runs), first-vs-middle / first-vs-last / middle-vs-last
#: accuracy gaps, as read from the figure by the survey quoted in issue 51 (the paper's text is not at hand here)
PUBLISHED = {"depth 2": (0.059, 0.077, 0.018), "depth 6": (0.091, 0.106, 0.011),
             "depth 2 residual": (0.247, 0.266, -0.004)}
#: the learning gate (the plan): in-context accuracy on novel classes in the training layout at the end
GATE = 0.25
VERSION = 1


def gap_name(pair: tuple) -> str:
    return f"{pair[0]}-{pair[1]}"


#: the plan's declaration: its text (``PLAN.plan_path()``) and SHA-256 (``PLAN.plan_sha256()``), defined once there
PLAN = study("wu-icl")
plan_path, plan_sha256 = PLAN.plan_path, PLAN.plan_sha256


@dataclass(frozen=True)
class WuSettings:
    """The design (the plan's section 2). Wu et al.'s values except ``steps`` (theirs: 50,000; here what 30 min on
    2 cores allows) and the test sets' size (theirs: 10,000 sequences per test)."""

    seeds: tuple = (0, 1, 2, 3, 4)
    arms: tuple = tuple(ARMS)
    norms: tuple = NORMS
    steps: int = 2400
    batch: int = 128
    lr: float = 1e-3
    weight_decay: float = 1e-6
    test_size: int = 2000
    probe_size: int = 1000
    evals: int = 4
    task: ICLTask = field(default_factory=ICLTask)
    threads: int = 1

    @classmethod
    def preset(cls, quick: bool) -> "WuSettings":
        """Default: the plan's 45 models; quick: 2 seeds, 150 steps, 500 sequences per test (a smoke test, never
        decisive; its cost in lnrecency/data/costs.json)."""
        return cls(seeds=(0, 1), steps=150, test_size=500, probe_size=200, evals=2) if quick else cls()

    @property
    def quick(self) -> bool:
        return self == WuSettings.preset(True)

    def jobs(self) -> list[tuple[str, str, int]]:
        return [(a, m, s) for a in self.arms for m in self.norms for s in self.seeds]

    def key(self) -> str:
        text = json.dumps({"v": VERSION, "plan": plan_sha256(), **asdict(self)}, sort_keys=True, default=list)
        return hashlib.sha256(text.encode()).hexdigest()[:16]


def _rng(seed: int, *stream: int) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, *stream])))


def _accuracy(model, x: np.ndarray, y: np.ndarray, batch: int = 1000) -> float:
    import torch

    with torch.no_grad():
        hits = sum(int((model(torch.from_numpy(x[a:a + batch])).argmax(-1).numpy() == y[a:a + batch]).sum())
                   for a in range(0, len(x), batch))
    return hits / len(x)


def _evaluate(model, sets: dict) -> dict:
    """Accuracy on every test set and Wu et al.'s three gaps (> 0: the earlier item wins)."""
    was = model.training
    model.eval()
    acc = {name: _accuracy(model, x, y) for name, (x, y) in sets.items()}
    model.train(was)
    gaps = {gap_name(p): acc[f"{p[0]} {p[1]}"] - acc[f"{p[1]} {p[0]}"] for p in PAIRS}
    return {"plain": acc["plain"], "accuracy": {k: v for k, v in acc.items() if k != "plain"}, "gaps": gaps}


def test_sets(st: WuSettings, world, seed: int) -> dict:
    """The run's test sets (drawn from its own seed: the probe noise enters each run's value): the six conflict
    tests "answer copy" and "plain" (novel classes, the training layout)."""
    task, out = st.task, {}
    for k, (a, b) in enumerate(PAIRS):
        out[f"{a} {b}"] = task.conflict(world, a, b, st.test_size, _rng(seed, 2, 2 * k))
        out[f"{b} {a}"] = task.conflict(world, b, a, st.test_size, _rng(seed, 2, 2 * k + 1))
    out["plain"] = task.plain(world, st.test_size, _rng(seed, 2, 99))
    return out


def train_run(arm: str, norm: str, seed: int, st: WuSettings) -> dict:
    """Train and probe one model (a worker's job): deterministic CPU kernels, ``st.threads`` threads."""
    import torch

    from lnrecency.experiments.decoders.train import deterministic
    from lnrecency.experiments.wu.attention_stack import AttentionStack, fixed_scale, mean_scales, probe

    layers, residual = ARMS[arm]
    task = st.task
    start = time.perf_counter()
    with deterministic(st.threads):
        world = task.world(_rng(seed, 0))
        torch.manual_seed(seed)
        model = AttentionStack(task.dim, layers, task.labels, residual=residual, norm=norm)
        opt = torch.optim.AdamW(model.parameters(), lr=st.lr, weight_decay=st.weight_decay)
        sets, rng = test_sets(st, world, seed), _rng(seed, 1)
        at = {round(st.steps * k / st.evals) for k in range(st.evals + 1)}
        log, trajectory, running = [], [], []
        for step in range(st.steps + 1):
            if step in at:
                trajectory.append({"step": step, **_evaluate(model, sets)})
            if step == st.steps:
                break
            x, y = task.batch(world, st.batch, rng)
            loss = torch.nn.functional.cross_entropy(model(torch.from_numpy(x)), torch.from_numpy(y))
            opt.zero_grad()
            loss.backward()
            opt.step()
            running.append(float(loss.detach()))
            if len(running) == 100 or step == st.steps - 1:
                log.append({"step": step + 1, "loss": float(np.mean(running))})
                running = []
        probe_x, probe_y = task.batch(world, st.probe_size, _rng(seed, 3))  # the training distribution
        model.eval()
        final = {**trajectory[-1], "train_accuracy": _accuracy(model, probe_x, probe_y),
                 "probe": probe(model, probe_x, task.items), "ablated": None}
        if norm != "none":
            scales = mean_scales(model, probe_x)
            with fixed_scale(model, scales):
                final["ablated"] = {**_evaluate(model, sets), "scales": scales}
    return {"arm": arm, "depth": layers, "residual": residual, "norm": norm, "seed": seed,
            "plan_sha256": plan_sha256(), "settings": st.key(), "log": log, "trajectory": trajectory,
            "final": final, "seconds": time.perf_counter() - start}


_GAPS = {gap_name(p): float for p in PAIRS}
_EVAL = {"plain": float, "accuracy": {f"{a} {b}": float for p in PAIRS for a, b in (p, p[::-1])}, "gaps": _GAPS}
_LAYER = {"layer": int, **{f"{k}{s}": float for k in ("slope", "rollout_first", "rollout_last", "first_attention")
                  for s in ("", "_se")}}
RUN_SHAPE = {"arm": str, "depth": int, "residual": bool, "norm": str, "seed": int, "plan_sha256": str,
             "settings": str, "seconds": float, "log": [{"step": int, "loss": float}],
             "trajectory": [{"step": int, **_EVAL}],
             "final": {**_EVAL, "step": int, "train_accuracy": float, "probe": [_LAYER],
                       "ablated": ({**_EVAL, "scales": [float]}, None)}}
RUN_KEYS = tuple(RUN_SHAPE)


def _settings_and_rows(job: tuple, st: WuSettings):
    """Wu's check beyond the job and the plan (:class:`~lnrecency.experiments.run_cache.PlanRuns`): the record was
    trained under these settings, its arm's depth and residual are its arm's, and it has one probe row per layer and
    an ablation record exactly when it has a normalisation."""
    arm, norm, _ = job

    def check(rec: dict) -> None:
        if (rec["depth"], rec["residual"]) != ARMS[arm]:
            raise ValueError(f"it is filed as {arm} but holds depth {rec['depth']!r:.10}, residual "
                             f"{rec['residual']!r:.10}")
        if rec["settings"] != st.key():
            raise ValueError(f"it was trained under other settings ({rec['settings']:.16}), not these ({st.key()})")
        if [r["layer"] for r in rec["final"]["probe"]] != list(range(1, ARMS[arm][0] + 1)):
            raise ValueError(f"its probe rows are not layers 1..{ARMS[arm][0]}")
        if (rec["final"]["ablated"] is None) != (norm == "none"):
            raise ValueError("its ablation record does not match its normalisation")
    return check


#: the plan's runs in the cache: ``{key}-{arm with _ for spaces}-{norm}-{seed}.json`` under wu-icl/
RUNS = PlanRuns("wu-icl", ("arm", "norm", "seed"), lambda: plan_sha256(), "Wu et al.'s plan", RUN_KEYS, RUN_SHAPE,
                label=lambda arm, norm, seed: f"{arm.replace(' ', '_')}-{norm}-{seed}", more=_settings_and_rows,
                runs="Wu et al. ICL runs")
cached_wu = RUNS.cached  # every run of the settings from the cache, in job order; None when one is missing


def run_wu(st: WuSettings, *, use_cache: bool = True, progress: bool | None = False,
           workers: int | None = None, scheduler: str = "local") -> list:
    """Every run of ``st``, trained ``workers`` at a time (or on the Dask cluster at ``scheduler``) or read from the
    cache."""
    return RUNS.run(train_run, st, use_cache=use_cache, progress=progress, workers=workers, scheduler=scheduler)


def learned(run: dict) -> bool:
    """The plan's gate: in-context accuracy on novel classes (training layout) at least :data:`GATE` at the end."""
    return run["final"]["plain"] >= GATE


def _arm(runs: list, arm: str, norm: str) -> list:
    return [r for r in runs if r["arm"] == arm and r["norm"] == norm and learned(r)]


def _gaps(runs, arm, norm, gap) -> tuple:
    return tuple(r["final"]["gaps"][gap] for r in _arm(runs, arm, norm))


#: the plan's tests: id -> words (the claims' statements are declared in lnrecency.claims.catalog)
REPRODUCTION = {f"R{k + 1}": (arm, gap_name(p)) for k, (arm, p) in
                enumerate((a, p) for a in ARMS for p in PAIRS[:2])}


def table(runs: list) -> dict:
    """The runs (records or the published rows) as the engine reads them: per cell "ARM NORM", each run's seed, gate
    (:func:`learned`) and final gaps ("first_middle", "first_last", "middle_last"), with "..._ablated" the same with
    the normalisation's per-token scale fixed (normalised arms), in run order."""
    out: dict = {}
    for r in runs:
        gaps, ablated = r["final"]["gaps"], r["final"].get("ablated")
        out.setdefault(f"{r['arm']} {r['norm']}", []).append(
            {"seed": r["seed"], "learned": learned(r), **{k.replace("-", "_"): v for k, v in gaps.items()},
             **({f"{k.replace('-', '_')}_ablated": v for k, v in ablated["gaps"].items()} if ablated else {})})
    return out


def decide(runs: list, st: WuSettings) -> dict:
    """The plan's two families, each by Holm at 0.05, decided by the engine from the tests' declared rules
    (:func:`lnrecency.experiments.plans.engine.decide` on :func:`table`): id -> (SeedDecision or None, why-not text).

    R1-R6: in the arms without normalisation, Wu et al.'s first-vs-middle and first-vs-last gaps are above 0.
    P1-P3: inserting LayerNorm lowers the first-vs-last gap (LayerNorm - none < 0) at depth 2, depth 6, depth 2
    with residual; P4: so does RMSNorm at depth 2; P5: with LayerNorm at depth 2 the first-vs-last gap is below 0
    (turned over); P6: at depth 2 with LayerNorm, fixing the normalisation's per-token scale raises the
    first-vs-last gap (ablated - intact > 0)."""
    from lnrecency.experiments.plans.declared import study
    from lnrecency.experiments.plans.engine import decide as decide_plan

    return decide_plan(study("wu-icl"), table(runs))


def seed_rows(runs: list) -> list[dict]:
    """The data the plan's verdicts are decided from, one row per run (issue 67: published in the snapshot, so that a
    test recomputes both families from the repository with :func:`decide` itself, which reads only these fields):
    arm, normalisation, seed, whether it passed the gate, its final in-context accuracy and gaps, the same with the
    scale fixed (normalised arms), and its trajectory: [step, in-context accuracy, first-vs-last gap] per evaluation."""
    fl = gap_name(PAIRS[1])

    def ev(e):
        return None if e is None else {"plain": e["plain"], "gaps": dict(e["gaps"])}
    return [{"arm": r["arm"], "norm": r["norm"], "seed": r["seed"], "learned": bool(learned(r)),
             "final": {**ev(r["final"]), "ablated": ev(r["final"]["ablated"])},
             "trajectory": [[e["step"], e["plain"], e["gaps"][fl]] for e in r["trajectory"]]} for r in runs]


def _stat(vals) -> tuple:
    v = np.asarray(vals, dtype=float)
    return (None, None) if v.size < 2 else (float(v.mean()), float(v.std(ddof=1) / np.sqrt(v.size)))


def summary(runs: list, st: WuSettings) -> dict:
    """Per cell (arm, norm): learned seeds and those that failed the gate; plain and training-distribution
    accuracy; the three gaps (final, and with the scale fixed, with the in-context accuracy then); at the last
    layer the query row's score slope over item keys and the rollout's mass on the first and last item; the
    trajectory's first-vs-last gap and in-context accuracy; each as (mean, SE) over the learned seeds."""
    out = {}
    for arm in st.arms:
        for norm in st.norms:
            cell = _arm(runs, arm, norm)
            last = [r["final"]["probe"][-1] for r in cell]
            abl = [r for r in cell if r["final"]["ablated"] is not None]
            out[f"{arm} {norm}"] = {
                "arm": arm, "norm": norm, "seeds": [r["seed"] for r in cell],
                "not_learned": [r["seed"] for r in runs if r["arm"] == arm and r["norm"] == norm and not learned(r)],
                "plain": _stat([r["final"]["plain"] for r in runs if r["arm"] == arm and r["norm"] == norm]),
                "train_accuracy": _stat([r["final"]["train_accuracy"] for r in cell]),
                "gaps": {gap_name(p): _stat(_gaps(runs, arm, norm, gap_name(p))) for p in PAIRS},
                "ablated_gaps": {gap_name(p): _stat([r["final"]["ablated"]["gaps"][gap_name(p)] for r in abl])
                                 for p in PAIRS} if abl else None,
                "ablated_plain": _stat([r["final"]["ablated"]["plain"] for r in abl]) if abl else None,
                "slope": _stat([x["slope"] for x in last]),
                "rollout_first": _stat([x["rollout_first"] for x in last]),
                "rollout_last": _stat([x["rollout_last"] for x in last]),
                "trajectory": [{"step": e["step"], "first-last": _stat([r["trajectory"][k]["gaps"]["first-last"]
                                                                        for r in cell]),
                                "plain": _stat([r["trajectory"][k]["plain"] for r in cell])}
                               for k, e in enumerate(cell[0]["trajectory"])] if cell else []}
    return out


def gap_figure(cells: dict):
    """The first-vs-last gap along training: a panel per arm, a line per normalisation (mean over learned seeds,
    +- one SE), Wu et al.'s published value dashed."""
    from matplotlib.figure import Figure

    arms = list(dict.fromkeys(c["arm"] for c in cells.values()))
    fig = Figure(figsize=(3.2 * len(arms), 3.4))
    axes = fig.subplots(1, len(arms), squeeze=False, sharey=True)[0]
    names = [gap_name(p) for p in PAIRS]
    for ax, arm in zip(axes, arms):
        for k, norm in enumerate(NORMS):
            c = cells.get(f"{arm} {norm}")
            if not c or not c["trajectory"]:
                continue
            pts = [(e["step"], *e["first-last"]) for e in c["trajectory"] if e["first-last"][0] is not None]
            if not pts:
                continue
            s, m, se = (np.array(v, dtype=float) for v in zip(*pts))
            ax.errorbar(s, m, yerr=se, marker="o", ms=3, lw=1, capsize=2, color=f"C{k}", label=norm)
        ax.axhline(PUBLISHED[arm][names.index("first-last")], color="k", ls="--", lw=0.8,
                   label="Wu et al. (none)")
        ax.axhline(0.0, color="0.6", lw=0.6)
        ax.set_title(arm, fontsize=10)
        ax.set_xlabel("training step")
    axes[0].set_ylabel("first-vs-last accuracy gap")
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    return fig
