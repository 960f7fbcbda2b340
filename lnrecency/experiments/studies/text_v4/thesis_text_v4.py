"""The thesis on text, plan version 4 (issue 76): does LayerNorm act upstream (layer 1's sink forms) or in layer 2's
read-out, and without BOS, which way does the effect go at matched loss
(``python3 -m lnrecency.experiments.studies.text_v4.thesis_text_v4 [--quick]``).

The design and the three primary tests are fixed in advance in ``lnrecency/data/thesis_text_plan_v4.md`` (its
SHA-256 is part of every cache key and record; the numbers it states: :mod:`.v4_plan`). In short:

* **U1**: BOS, no normalisation, layer 1's first-key share set row by row to the LayerNorm cell's published profile
  (:func:`lnrecency.experiments.decoders.decoder.impose_first_share`, kept through training and the probe);
* **U2**: BOS, LayerNorm, the share clamped to the none cell's profile;
* **N1**: no BOS, LayerNorm and none, each run trained until its held-out loss reaches the target;

each model's layer-2 slope (the first key left out) from its weights in float64 (plan v3's
:mod:`lnrecency.experiments.studies.v3_paths`) on the plan's windows. The engine decides U1, U2, N1 by their declared
rules (:func:`lnrecency.experiments.plans.engine.decide`), Holm's procedure over them only, from the per-seed table the
snapshot publishes.
"""
from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import numpy as np

from lnrecency.experiments.studies.text_v4.v4_plan import plan_sha256
from lnrecency.experiments.studies.thesis_text import TextThesisSettings

__all__ = ["V4Settings", "ARMS", "shares", "layer2_slopes", "run_one", "run_v4", "cached_v4", "seed_table", "noise",
           "secondary", "snapshot", "RUN_KEYS"]

VERSION = 1
#: arm -> (BOS first, the normalisations trained, the profile imposed on layer 1 or None)
ARMS = {"U1": (True, ("none",), "layernorm"), "U2": (True, ("layernorm",), "none"),
        "N1": (False, ("layernorm", "none"), None)}
CHUNK = 400  # windows per float64 pass (memory: about 100 MB at n = 64)


@functools.lru_cache(maxsize=1)
def shares() -> dict:
    """The imposed layer-1 profiles ({"layernorm", "none"}: each query row's first-key share), as shipped in
    ``lnrecency/data/thesis_text_v4_shares.json`` (plan v2's published cells; tests check them against
    ``docs/thesis_text_v2.json``)."""
    data = json.loads((Path(__file__).resolve().parents[3] / "data" / "thesis_text_v4_shares.json").read_text())
    return {k: tuple(float(x) for x in data[k]) for k in ("layernorm", "none")}


@dataclass(frozen=True)
class V4Settings:
    """Plan v4 over plan v2's training settings (``base``)."""

    u_seeds: tuple = tuple(range(8))
    n1_seeds: tuple = tuple(range(8, 29))
    windows: int = 1600
    target_loss: float = 4.25
    n1_eval_every: int = 5
    cap_factor: int = 2
    base: TextThesisSettings = field(default_factory=TextThesisSettings)

    @classmethod
    def preset(cls, quick: bool) -> "V4Settings":
        """Default: the plan's 58 models; quick: 2 seeds per cell of plan v2's quick training (60 steps), N1 to a
        loss a quick run reaches, 16 windows (a smoke test, never decisive)."""
        if quick:
            base = replace(TextThesisSettings.preset(True), steps=60, warmup=10, eval_every=30)
            return cls(u_seeds=(0, 1), n1_seeds=(8, 9), windows=16, target_loss=7.0, n1_eval_every=10, base=base)
        return cls()

    @property
    def quick(self) -> bool:
        return self == V4Settings.preset(True)

    def jobs(self) -> list[tuple[str, str, int]]:
        return [(arm, norm, s) for arm, (_, norms, _) in ARMS.items() for norm in norms
                for s in (self.n1_seeds if arm == "N1" else self.u_seeds)]

    def key(self) -> str:
        fields = {k: v for k, v in asdict(self).items() if k != "base"}
        base = {k: v for k, v in asdict(self.base).items() if not (k == "corpus" and v is None)}
        text = json.dumps({"v": VERSION, "plan": plan_sha256(), **fields, "base": base}, sort_keys=True, default=list)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def data(self, arm: str):
        from lnrecency.experiments.studies.thesis_text import corpus_data
        from lnrecency.experiments.studies.thesis_text_v2 import plain_corpus_data

        return corpus_data(self.base.corpus) if ARMS[arm][0] else plain_corpus_data(self.base.corpus)

    def training(self, arm: str, seed: int):
        ts = self.base.training(seed)
        if arm == "N1":
            return replace(ts, steps=self.cap_factor * self.base.steps, eval_every=self.n1_eval_every)
        return ts

    def windows_of(self, arm: str, norm: str, seed: int) -> np.ndarray:
        """The run's own held-out windows (BOS first in U1 and U2), from a stream of this plan's own."""
        seq = np.random.SeedSequence([self.base.probe_seed("attn2", norm, seed), 4, list(ARMS).index(arm)])
        text, _ = self.data(arm).heldout(self.base.n, self.windows, np.random.Generator(np.random.PCG64(seq)))
        return text


def layer2_slopes(model, windows: np.ndarray, decompose: bool) -> tuple[np.ndarray, dict | None, float]:
    """Per-window layer-2 slopes (the first key left out), the path decomposition's slopes averaged over the windows
    (``decompose``), and the largest gap between layer 1's first-key share and its imposed profile (0 when none is
    imposed), in float64 chunks of :data:`CHUNK` windows."""
    import torch

    from lnrecency.experiments.studies import v3_paths as vp

    out, paths, gap = [], {}, 0.0
    profile = model.blocks[0].attn.imposed
    for a in range(0, len(windows), CHUNK):
        chunk = windows[a:a + CHUNK]
        l2 = vp.layer2(model, chunk)
        y = l2.normed()
        out.append(vp.slopes(l2.logits(y, y)))
        if decompose:
            for name, p in vp.decompose(l2)["paths"].items():
                paths[name] = paths.get(name, 0.0) + p["slope"] * len(chunk)
        if profile is not None:
            with torch.no_grad():
                _, traces = model(torch.from_numpy(np.asarray(chunk, dtype=np.int64)), trace=True)
            first = traces[0].weights[..., 1:, 0].double()
            gap = max(gap, float((first - profile[1:chunk.shape[1]]).abs().max()))
    return np.concatenate(out), ({k: v / len(windows) for k, v in paths.items()} if decompose else None), gap


def run_one(arm: str, norm: str, seed: int, st: V4Settings) -> dict:
    """Train and probe one run of the plan (a worker's job)."""
    from lnrecency.experiments.decoders.train import train
    from lnrecency.experiments.studies.thesis_text import learned, unigram_entropy

    bos, _, profile = ARMS[arm]
    data = st.data(arm)
    cfg, ts = st.base.decoder("attn2", norm, data.vocab), st.training(arm, seed)
    imposed = {0: shares()[profile]} if profile else None
    stop = (lambda e: e["heldout_loss"] is not None and e["heldout_loss"] <= st.target_loss) if arm == "N1" else None
    res = train(cfg, ts, data=data, first_share=imposed, stop=stop)
    final = res.final_heldout
    last = res.log[-1]["step"]
    slopes, paths, gap = layer2_slopes(res.model, st.windows_of(arm, norm, seed), decompose=arm != "N1")
    unigram = unigram_entropy(data)
    return {"arm": arm, "bos": bos, "norm": norm, "seed": int(seed), "plan_sha256": plan_sha256(),
            "imposed": profile, "imposed_gap": gap, "windows": int(len(slopes)),
            "slope": {"mean": float(slopes.mean()), "se": float(slopes.std(ddof=1) / np.sqrt(slopes.size))},
            "final_loss": final, "steps": int(last), "tokens": int(last * st.base.tokens_per_step()),
            "stopped": res.stopped, "reached": bool(final is not None and final <= st.target_loss),
            "unigram": unigram, "learned": bool(learned({"log": [{"heldout_loss": final}], "unigram": unigram},
                                                        st.base)),
            "paths": paths, "seconds": res.seconds}


RUN_KEYS = ("arm", "bos", "norm", "seed", "plan_sha256", "imposed", "imposed_gap", "windows", "slope", "final_loss",
            "steps", "tokens", "stopped", "reached", "unigram", "learned", "paths")
RUN_SHAPE = {"arm": str, "bos": bool, "norm": str, "seed": int, "plan_sha256": str, "imposed": (str, None),
             "imposed_gap": float, "windows": int, "slope": {"mean": float, "se": float}, "final_loss": (float, None),
             "steps": int, "tokens": int, "stopped": str, "reached": bool, "unigram": float, "learned": bool}


def _runs():
    from lnrecency.experiments.run_cache import PlanRuns

    return PlanRuns("thesis-text-v4", ("arm", "norm", "seed"), plan_sha256, "plan v4", RUN_KEYS, RUN_SHAPE)


def cached_v4(st: V4Settings | None = None) -> list | None:
    """Every run of the plan from the cache, in job order; None when one is missing."""
    return _runs().cached(st or V4Settings())


def run_v4(st: V4Settings | None = None, *, use_cache: bool = True, progress: bool | None = None,
           workers: int | None = 2, scheduler: str = "local") -> list:
    """Every run of the plan, trained ``workers`` at a time (or each one task on the Dask cluster at ``scheduler``)
    or read from the cache. Refused when the plan file is not the one committed before the runs."""
    from lnrecency.experiments.plans.declared import study
    from lnrecency.experiments.plans.engine import check_pinned

    st = st or V4Settings()
    check_pinned(study("thesis-text-v4"))
    st.data("U1"), st.data("N1")  # the tokenizer and the token ids cached once, before the workers start
    return _runs().run(run_one, st, use_cache=use_cache, progress=progress, workers=workers, scheduler=scheduler)


def seed_table(runs: list) -> dict:
    """The data every verdict of the plan is decided from, one row per model (published in the snapshot): per cell
    ("U1 none", "U2 layernorm", "N1 layernorm", "N1 none"), each model's seed, gate, slope and its probe SE, final
    held-out loss, tokens, whether it reached N1's target, the largest gap of layer 1's share from its imposed
    profile, and (U1, U2) the path decomposition's slopes."""
    out: dict = {}
    for r in runs:
        out.setdefault(f"{r['arm']} {r['norm']}", []).append(
            {"seed": r["seed"], "learned": r["learned"], "reached": r["reached"], "slope": r["slope"]["mean"],
             "slope_se": r["slope"]["se"], "final_loss": r["final_loss"], "tokens": r["tokens"],
             "stopped": r["stopped"], "imposed_gap": r["imposed_gap"], "paths": r["paths"]})
    return out


def noise(table: dict) -> dict:
    """Per cell: one run's mean probe SE against the between-seed SD of the slope, and their ratio (the plan aims
    below 1/3)."""
    from lnrecency.inference.seed_tests import probe_noise

    return {cell: probe_noise([r["slope"] for r in rows], [r["slope_se"] for r in rows])
            for cell, rows in table.items()}


def secondary(table: dict, v2: dict | None) -> dict:
    """The plan's secondary intervals (no verdicts): U1 minus plan v2's BOS none slopes and U2 minus its BOS LayerNorm
    slopes (Welch; ``v2``: the published snapshot, docs/thesis_text_v2.json), with the side of 0 each lies on."""
    from lnrecency.experiments.plans.declared import study
    from lnrecency.experiments.plans.engine import sample_values
    from lnrecency.inference.seed_tests import SeedTest

    out: dict = {}
    plan = study("thesis-text-v4")
    for tid, old in (("U1", "bos none"), ("U2", "bos layernorm")):
        new = sample_values(plan, plan.test(tid).rule.sample, table)
        before = [r["slope"] for r in (v2 or {}).get("runs", {}).get(old, []) if r.get("learned", True)]
        if len(new) < 2 or len(before) < 2:
            continue
        test = SeedTest(new, other=before)
        lo, hi = test.interval()
        out[f"{tid} - v2 {old}"] = {"mean": test.mean, "interval": [lo, hi], "seeds": [len(new), len(before)],
                                    "side": "above" if lo > 0 else "below" if hi < 0 else "across"}
    return out


def snapshot(runs: list, st: V4Settings, v2: dict | None = None) -> dict:
    """The plan's results as ``docs/thesis_text_v4.json`` will hold them: settings, plan hash, the per-seed table,
    the probe noise per cell, the three tests with their p-values and verdicts (and the per-seed values each was
    decided on) and the secondary intervals against plan v2's published cells (``v2``, when given)."""
    from lnrecency.experiments.plans.declared import study
    from lnrecency.experiments.plans.engine import decided_tests

    table = seed_table(runs)
    tests = decided_tests(study("thesis-text-v4"), table, extra=())
    missed = [f"N1 {r['norm']} seed {r['seed']}" for r in runs if r["arm"] == "N1" and not r["reached"]]
    return {"experiment": "thesis-text-v4", "plan_sha256": plan_sha256(),
            "settings": {k: v for k, v in asdict(st).items() if k != "base"} | {"base": asdict(st.base)},
            "noise": noise(table), "tests": tests, "secondary": secondary(table, v2), "missed_target": missed,
            "runs": table}


if __name__ == "__main__":
    import sys

    settings = V4Settings.preset("--quick" in sys.argv)
    print(json.dumps(snapshot(run_v4(settings, progress=True), settings), indent=1, allow_nan=False))
