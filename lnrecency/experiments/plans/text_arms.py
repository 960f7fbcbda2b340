"""A plan on text decoders declared as arms, trained and probed by the engine (issue 82): the plan's declaration
(:class:`~lnrecency.experiments.plans.declaration.Arms`) holds its arms, their seeds, windows and evaluation
intervals, the held-out losses and token steps its probes along training read, and its settings at both presets;
this module turns it into settings, runs and cached runs, with no study module of the plan's own.

Each run trains the 2-layer NoPE decoder of plan v2's training settings (BOS first or plain text, the arm's
normalisation), with layer 1's first-key share imposed as the arm says
(:data:`lnrecency.experiments.plans.arms.IMPOSED`), until the base's steps or, for an arm with a stop rule, the first
evaluation at or below the target loss (capped at ``cap_factor`` times the steps); then the layer-2 slope on the run's
own held-out windows (the first key left out, float64: :func:`lnrecency.experiments.studies.v3_paths.layer2_slopes`),
with the path decomposition where the arm records it; an arm probed along training records its slope at each loss
level's first crossing and at each token step instead, its slope the last step's. A plan's hooks name the plan by its
attribute here::

    settings="lnrecency.experiments.plans.text_arms:thesis_text_v5.preset"
    run="lnrecency.experiments.plans.text_arms:thesis_text_v5.run"
"""
from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np

from lnrecency.experiments.plans.declaration import Arm, Study
from lnrecency.experiments.plans.declared import STUDIES

__all__ = ["ArmsSettings", "ArmsPlan", "shares", "share_of", "run_one", "seed_table", "snapshot", "lines",
           "RUN_KEYS", "RUN_SHAPE"]


@functools.lru_cache(maxsize=1)
def shares() -> dict:
    """The imposed layer-1 profiles ({"layernorm", "none"}: each query row's first-key share), as shipped in
    ``lnrecency/data/thesis_text_v4_shares.json`` (plan v2's published cells; tests check them against
    ``docs/thesis_text_v2.json``)."""
    data = json.loads((Path(__file__).resolve().parents[2] / "data" / "thesis_text_v4_shares.json").read_text())
    return {k: tuple(float(x) for x in data[k]) for k in ("layernorm", "none")}


def share_of(imposed: str | None) -> tuple | None:
    """Layer 1's imposed first-key share per query row for an arm's ``imposed`` name
    (:data:`~lnrecency.experiments.plans.declaration.IMPOSED`; None: nothing imposed): a profile row by row (the
    LayerNorm models' or, "profile none", the none models', as plan v2 published them and plan v4 shipped them), or
    flat in every row at 0 ("zero"), at the LayerNorm profile's mean level ("layernorm") or at the none profile's
    ("none"), over rows 2..n."""
    if imposed is None:
        return None
    prof = shares()["layernorm"]
    if imposed.startswith("profile"):
        return tuple(shares()["none"] if imposed == "profile none" else prof)
    level = {"zero": 0.0, "layernorm": float(np.mean(prof[1:])), "none": float(np.mean(shares()["none"][1:]))}[imposed]
    return (1.0,) + (level,) * (len(prof) - 1)  # row 1 sees only the first key (not used)


@dataclass(frozen=True)
class ArmsSettings:
    """A text plan's settings: its declared fields (``values``: (name, value) pairs, in declared order, read as
    attributes) over plan v2's training settings (``base``), for the plan ``study``."""

    study: str
    values: tuple
    base: object

    def __getattr__(self, name: str):
        for key, value in object.__getattribute__(self, "values"):
            if key == name:
                return value
        raise AttributeError(f"plan {self.study}'s settings have no field {name!r}")

    @property
    def arms(self):
        return STUDIES[self.study].arms

    @property
    def quick(self) -> bool:
        return self == ArmsPlan(self.study).preset(True)

    def replace(self, base=None, **fields) -> "ArmsSettings":
        """The settings with some declared fields (and the base) changed; an undeclared field is refused."""
        values = dict(self.values)
        unknown = [k for k in fields if k not in values]
        if unknown:
            raise ValueError(f"plan {self.study}'s settings have no field {', '.join(unknown)}; its fields: "
                             f"{', '.join(values)}")
        return ArmsSettings(self.study, tuple({**values, **fields}.items()), self.base if base is None else base)

    def as_dict(self) -> dict:
        """The settings as a snapshot publishes them: the fields in order, then the base's."""
        return {**dict(self.values), "base": asdict(self.base)}

    def arm(self, name: str) -> Arm:
        return next(a for a in self.arms.arms if a.name == name)

    def jobs(self) -> list[tuple]:
        """Each run's name in the cache (the declared job fields: the arm's group, its normalisation, the seed), in
        the declared job order."""
        values = {"arm": lambda a, s: a.recorded, "norm": lambda a, s: a.norm, "seed": lambda a, s: s}
        return [tuple(values[f](self.arm(name), s) for f in self.arms.jobs) for name in self.arms.order
                for s in getattr(self, self.arm(name).seeds)]

    def arm_of(self, job: tuple) -> Arm:
        """The arm a job (:meth:`jobs`) runs."""
        named = dict(zip(self.arms.jobs, job))
        return next(a for a in self.arms.arms if a.recorded == named["arm"] and named.get("norm", a.norm) == a.norm)

    def key(self) -> str:
        base = {k: v for k, v in asdict(self.base).items() if not (k == "corpus" and v is None)}
        text = json.dumps({"v": self.arms.version, "plan": STUDIES[self.study].plan_sha256(), **dict(self.values),
                           "base": base}, sort_keys=True, default=list)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def data(self, arm: str):
        from lnrecency.experiments.studies.thesis_text import corpus_data
        from lnrecency.experiments.studies.thesis_text_v2 import plain_corpus_data

        return corpus_data(self.base.corpus) if self.arm(arm).bos else plain_corpus_data(self.base.corpus)

    def training(self, arm: str, seed: int):
        a, ts = self.arm(arm), self.base.training(seed)
        if a.stop:
            ts = replace(ts, steps=self.cap_factor * self.base.steps)
        return replace(ts, eval_every=getattr(self, a.eval_every)) if a.eval_every else ts

    def windows_of(self, arm: str, seed: int) -> np.ndarray:
        """The run's own held-out windows (BOS first where the arm has it), from the plan's declared stream."""
        a, stream = self.arm(arm), self.arms.stream
        if isinstance(stream, int):
            seq = np.random.SeedSequence([stream, [b.name for b in self.arms.arms].index(arm), int(seed)])
        else:  # plan v4's: the base's probe seed, the stream's number, the group's index
            groups = list(dict.fromkeys(b.recorded for b in self.arms.arms))
            seq = np.random.SeedSequence([self.base.probe_seed("attn2", a.norm, seed), stream[1],
                                          groups.index(a.recorded)])
        text, _ = self.data(arm).heldout(self.base.n, getattr(self, a.windows),
                                         np.random.Generator(np.random.PCG64(seq)))
        return text


def _point(slopes: np.ndarray, entry: dict, st: ArmsSettings, what: str) -> dict:
    return {"at": what, "step": int(entry["step"]), "tokens": int(entry["step"] * st.base.tokens_per_step()),
            "loss": entry["heldout_loss"], "slope": float(slopes.mean()),
            "se": float(slopes.std(ddof=1) / np.sqrt(slopes.size))}


def run_one(*job_and_settings) -> dict:
    """Train and probe one run of the plan (a worker's job): its job's values (:meth:`ArmsSettings.jobs`), then the
    settings."""
    from lnrecency.experiments.decoders.train import train
    from lnrecency.experiments.studies.thesis_text import learned, unigram_entropy
    from lnrecency.experiments.studies.v3_paths import layer2_slopes

    *job, st = job_and_settings
    arm = st.arm_of(tuple(job))
    arm_name, seed = arm.name, dict(zip(st.arms.jobs, job))["seed"]
    data = st.data(arm_name)
    cfg, ts = st.base.decoder("attn2", arm.norm, data.vocab), st.training(arm_name, seed)
    prof = share_of(arm.imposed)
    windows = st.windows_of(arm_name, seed)
    points: list = []
    fields = dict(st.values)
    left, steps_left = list(fields.get("levels", ())), list(fields.get("token_steps", ()))

    def on_eval(step, model, entry):  # probed at each loss level's first crossing and at the token steps
        loss = entry["heldout_loss"]
        names = [f"loss {lv:g}" for lv in left if loss is not None and loss <= lv]
        left[:] = [lv for lv in left if not (loss is not None and loss <= lv)]
        # the first evaluation at or after each token step (a step between evaluations is probed at the next one)
        names += [f"step {s}" for s in steps_left if step >= s]
        steps_left[:] = [s for s in steps_left if step < s]
        if names:
            slopes, _, _ = layer2_slopes(model, windows, decompose=False)
            points.extend(_point(slopes, entry, st, name) for name in names)

    stop = ((lambda e: e["heldout_loss"] is not None and e["heldout_loss"] <= st.target_loss) if arm.stop else None)
    res = train(cfg, ts, data=data, first_share={0: prof} if prof else None, on_eval=on_eval if arm.along else None,
                stop=stop)
    final, last = res.final_heldout, res.log[-1]["step"]
    paths, gap = None, 0.0
    if arm.along:
        end = next(p for p in points if p["at"] == f"step {st.token_steps[-1]}")
        slope = {"mean": end["slope"], "se": end["se"]}
    else:
        slopes, paths, gap = layer2_slopes(res.model, windows, decompose=arm.paths)
        slope = {"mean": float(slopes.mean()), "se": float(slopes.std(ddof=1) / np.sqrt(slopes.size))}
    unigram = unigram_entropy(data)
    every = max(1, 50 // ts.eval_every)
    reached = arm.stop or "reached" in st.arms.row or "stopped" in st.arms.row
    return {"arm": arm.recorded, "bos": arm.bos, "norm": arm.norm, "seed": int(seed),
            "plan_sha256": STUDIES[st.study].plan_sha256(), "imposed": arm.imposed, "imposed_gap": gap,
            "windows": int(len(windows)), "slope": slope, "final_loss": final, "steps": int(last),
            "tokens": int(last * st.base.tokens_per_step()), "unigram": unigram,
            "learned": bool(learned({"log": [{"heldout_loss": final}], "unigram": unigram}, st.base)),
            "paths": paths, "points": points,
            "losses": [[int(e["step"]), e["heldout_loss"]] for e in res.log[::every] if e["heldout_loss"] is not None],
            **({"stopped": res.stopped, "reached": bool(final is not None and final <= st.target_loss)}
               if reached else {}),
            "seconds": res.seconds}


#: what every run's record holds (those of plan v4's runs, filed before the engine, hold no points or losses)
RUN_KEYS = ("arm", "bos", "norm", "seed", "plan_sha256", "imposed", "imposed_gap", "windows", "slope", "final_loss",
            "steps", "tokens", "unigram", "learned", "paths")
RUN_SHAPE = {"arm": str, "bos": bool, "norm": str, "seed": int, "plan_sha256": str, "imposed": (str, None),
             "imposed_gap": float, "windows": int, "slope": {"mean": float, "se": float}, "final_loss": (float, None),
             "steps": int, "tokens": int, "unigram": float, "learned": bool}


_COLUMN = {"seed": lambda r: r["seed"], "learned": lambda r: r["learned"], "reached": lambda r: r["reached"],
           "slope": lambda r: r["slope"]["mean"], "slope_se": lambda r: r["slope"]["se"],
           "final_loss": lambda r: r["final_loss"], "tokens": lambda r: r["tokens"], "stopped": lambda r: r["stopped"],
           "imposed_gap": lambda r: r["imposed_gap"], "paths": lambda r: r["paths"],
           "points": lambda r: {p["at"]: {k: p[k] for k in ("step", "tokens", "loss", "slope", "se")}
                                for p in r.get("points", [])}}


def seed_table(runs: list, arms=None) -> dict:
    """One row per model, per cell (``arms``: the plan's :class:`~lnrecency.experiments.plans.arms.Arms`, its cells and
    row; None: each arm its own cell, plan v5's row): seed, gate, slope and its probe SE, final held-out loss, tokens,
    the imposed share's largest gap, the path decomposition, the points probed along training and whether it reached
    the target (and why it stopped): an arm with a stop rule always, any arm whose plan's row says so: the table a
    plan's tests are decided from and its snapshot publishes."""
    from lnrecency.experiments.plans.arms import ROW

    row = ROW if arms is None else arms.row
    cell = {} if arms is None else {(a.recorded, a.norm): a.published for a in arms.arms}
    out: dict = {}
    for r in runs:
        extra = ("reached", "stopped") if "reached" in r and "reached" not in row else ()
        out.setdefault(cell.get((r["arm"], r.get("norm")), r["arm"]), []).append(
            {c: _COLUMN[c](r) for c in row + extra})
    return out


def snapshot(runs: list, st: ArmsSettings, words: dict, extra: tuple = ("mean",)) -> dict:
    """A plan's snapshot with no code of its own (its ``snapshot`` hook): settings, plan hash, the per-seed table,
    each cell's probe noise (one run's probe SE against the between-seed SD) and its tests decided by their declared
    rules (:func:`lnrecency.experiments.plans.engine.decided_tests`, each with ``extra``)."""
    from lnrecency.experiments.plans.engine import decided_tests
    from lnrecency.inference.seed_tests import probe_noise

    table = seed_table(runs, st.arms)
    study = STUDIES[st.study]
    return {"experiment": st.study, "plan_sha256": study.plan_sha256(), "settings": st.as_dict(),
            "noise": {arm: probe_noise([r["slope"] for r in rows], [r["slope_se"] for r in rows])
                      for arm, rows in table.items()},
            "tests": decided_tests(study, table, extra), "runs": table}


def lines(snap: dict) -> list[str]:
    """A plan's printed lines with no code of its own (its ``lines`` hook): each arm's mean slope, seeds and probe
    noise, and each test's verdict."""
    out = []
    for arm, rows in snap["runs"].items():
        ratio = (snap["noise"].get(arm) or {}).get("ratio")
        out.append(f"  {arm}: layer-2 slope {sum(r['slope'] for r in rows) / len(rows):+.4f}, {len(rows)} seeds, probe "
                   f"SE / seed SD " + ("n/a" if ratio is None else f"{ratio:.2f}"))
    return out + [f"  {tid}: {t['verdict']}" for tid, t in snap["tests"].items()]


@dataclass(frozen=True)
class ArmsPlan:
    """A declared text plan's settings, cached runs and runs (its hooks: ``preset``, ``cached``, ``run``)."""

    name: str

    @property
    def study(self) -> Study:
        return STUDIES[self.name]

    def preset(self, quick: bool) -> ArmsSettings:
        """The declared settings; quick: the declared quick values over plan v2's quick training (a smoke test,
        never decisive)."""
        from lnrecency.experiments.studies.thesis_text import TextThesisSettings

        arms = self.study.arms
        values = dict(arms.fields)
        base = TextThesisSettings()
        if quick:
            values.update(arms.quick)
            base = replace(TextThesisSettings.preset(True), **dict(arms.quick_base))
        return ArmsSettings(self.name, tuple(values.items()), base)

    def _runs(self):
        from lnrecency.experiments.run_cache import PlanRuns

        return PlanRuns(self.name, self.study.arms.jobs, self.study.plan_sha256, self.study.title, RUN_KEYS, RUN_SHAPE)

    def cached(self, st: ArmsSettings | None = None) -> list | None:
        """Every run of the plan from the cache, in job order; None when one is missing."""
        return self._runs().cached(st or self.preset(False))

    def run(self, st: ArmsSettings | None = None, *, use_cache: bool = True, progress: bool | None = None,
            workers: int | None = 2, scheduler: str = "local") -> list:
        """Every run of the plan, trained ``workers`` at a time (or each one task on the Dask cluster at
        ``scheduler``) or read from the cache. Refused when the plan file is not the one committed before the runs."""
        from lnrecency.experiments.plans.engine import check_pinned

        st = st or self.preset(False)
        check_pinned(self.study)
        for bos in (True, False):  # the tokenizer and the token ids cached once, before the workers start
            first = next((a.name for a in st.arms.arms if a.bos == bos), None)
            if first is not None:
                st.data(first)
        return self._runs().run(run_one, st, use_cache=use_cache, progress=progress,
                                workers=workers, scheduler=scheduler)


def __getattr__(name: str) -> ArmsPlan:
    """A declared text plan by its name with '_' for '-' (``thesis_text_v5``), as its hooks name it."""
    for study in STUDIES.values():
        if study.arms is not None and study.name.replace("-", "_") == name:
            return ArmsPlan(study.name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r} (a declared plan with arms by its name "
                         f"with '_' for '-')")
