"""The thesis on text, plan version 5 (issue 83): does the slope need layer 1's share to fall with position (F), which
part of LayerNorm the read-out needs (P), and is "the effect reverses at matched loss" the training stage (T)
(``python3 -m lnrecency.experiments.studies.text_v5.thesis_text_v5 [--quick]``).

The design, the ten primary tests, their readings and the predictions are fixed in advance in
``lnrecency/data/thesis_text_plan_v5.md`` (its SHA-256 is part of every cache key and record; the numbers it states:
:mod:`.v5_plan`). In short:

* **F**: BOS, LayerNorm, layer 1's first-key share held flat (the same in every query row) at 0, at the LayerNorm
  profile's mean and at the none profile's mean (:func:`lnrecency.experiments.decoders.decoder.impose_first_share`);
* **P**: BOS, layer 1's share set to the LayerNorm profile (as plan v4's U1), one part of LayerNorm at a time:
  centring only, RMSNorm, LayerNorm with its scale out of the gradient, LayerNorm with its gain fixed;
* **T**: no BOS, LayerNorm and none, every run to 3M tokens, probed at the first evaluation at or below each held-out
  loss of :data:`~.v5_plan.LEVELS` and at the steps of :data:`~.v5_plan.TOKEN_STEPS`;

each model's layer-2 slope (the first key left out) from its weights in float64, as plan v4 reads it.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field, replace

import numpy as np

from lnrecency.experiments.studies.text_v4.thesis_text_v4 import layer2_slopes, shares
from lnrecency.experiments.studies.text_v5 import v5_plan
from lnrecency.experiments.studies.thesis_text import TextThesisSettings

__all__ = ["V5Settings", "ARMS", "run_one", "run_v5", "cached_v5", "profile_of", "RUN_KEYS"]

VERSION = 1
#: arm -> (BOS first, normalisation, layer 1's imposed share: a flat level name, "layernorm" (plan v4's U1 profile)
#: or None)
ARMS = {"F0": (True, "layernorm", "zero"), "Fln": (True, "layernorm", "layernorm"),
        "Fnone": (True, "layernorm", "none"),
        "Pcentre": (True, "centre", "profile"), "Prms": (True, "rmsnorm", "profile"),
        "Pstop": (True, "layernorm-stopscale", "profile"), "Pgain": (True, "layernorm-fixgain", "profile"),
        "Tln": (False, "layernorm", None), "Tnone": (False, "none", None)}


@dataclass(frozen=True)
class V5Settings:
    """Plan v5 over plan v2's training settings (``base``)."""

    fp_seeds: tuple = tuple(range(v5_plan.FP_SEEDS))
    t_seeds: tuple = tuple(range(30, 30 + v5_plan.T_SEEDS))
    windows: int = v5_plan.WINDOWS_FP
    t_windows: int = v5_plan.WINDOWS_T
    levels: tuple = v5_plan.LEVELS
    token_steps: tuple = v5_plan.TOKEN_STEPS
    t_eval_every: int = v5_plan.T_EVAL_EVERY
    base: TextThesisSettings = field(default_factory=TextThesisSettings)

    @classmethod
    def preset(cls, quick: bool) -> "V5Settings":
        """Default: the plan's 51 models; quick: 2 seeds per arm of plan v2's quick training (60 steps), T probed at
        losses a quick run reaches, 16 windows (a smoke test, never decisive)."""
        if quick:
            base = replace(TextThesisSettings.preset(True), steps=60, warmup=10, eval_every=30)
            return cls(fp_seeds=(0, 1), t_seeds=(30, 31), windows=16, t_windows=16, levels=(7.5, 7.0),
                       token_steps=(30, 60), base=base)
        return cls()

    @property
    def quick(self) -> bool:
        return self == V5Settings.preset(True)

    def jobs(self) -> list[tuple[str, int]]:
        """T's runs first (the longest: probed along training), then F and P."""
        order = ("Tln", "Tnone", "F0", "Fln", "Fnone", "Pcentre", "Prms", "Pstop", "Pgain")
        return [(arm, s) for arm in order for s in (self.t_seeds if arm.startswith("T") else self.fp_seeds)]

    def key(self) -> str:
        fields = {k: v for k, v in asdict(self).items() if k != "base"}
        base = {k: v for k, v in asdict(self.base).items() if not (k == "corpus" and v is None)}
        text = json.dumps({"v": VERSION, "plan": v5_plan.plan_sha256(), **fields, "base": base}, sort_keys=True,
                          default=list)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def data(self, arm: str):
        from lnrecency.experiments.studies.thesis_text import corpus_data
        from lnrecency.experiments.studies.thesis_text_v2 import plain_corpus_data

        return corpus_data(self.base.corpus) if ARMS[arm][0] else plain_corpus_data(self.base.corpus)

    def training(self, arm: str, seed: int):
        ts = self.base.training(seed)
        return replace(ts, eval_every=self.t_eval_every) if arm.startswith("T") else ts

    def windows_of(self, arm: str, seed: int) -> np.ndarray:
        """The run's own held-out windows (BOS first in F and P), from a stream of this plan's own."""
        seq = np.random.SeedSequence([0x5EED5, list(ARMS).index(arm), int(seed)])
        size = self.t_windows if arm.startswith("T") else self.windows
        text, _ = self.data(arm).heldout(self.base.n, size, np.random.Generator(np.random.PCG64(seq)))
        return text


def profile_of(arm: str, n: int) -> tuple | None:
    """Layer 1's imposed first-key share per query row (``n`` rows), or None (T): F's flat levels
    (:func:`.v5_plan.flat_levels` of the shipped profiles), P's the LayerNorm profile plan v4's U1 imposed."""
    kind = ARMS[arm][2]
    if kind is None:
        return None
    prof = shares()["layernorm"]
    if kind == "profile":
        return tuple(prof)
    level = {"zero": 0.0, "layernorm": float(np.mean(prof[1:])),
             "none": float(np.mean(shares()["none"][1:]))}[kind]
    return (1.0,) + (level,) * (len(prof) - 1)  # row 1 sees only the first key (not used)


def _point(slopes: np.ndarray, entry: dict, st: V5Settings, what: str) -> dict:
    return {"at": what, "step": int(entry["step"]), "tokens": int(entry["step"] * st.base.tokens_per_step()),
            "loss": entry["heldout_loss"], "slope": float(slopes.mean()),
            "se": float(slopes.std(ddof=1) / np.sqrt(slopes.size))}


def run_one(arm: str, seed: int, st: V5Settings) -> dict:
    """Train and probe one run of the plan (a worker's job)."""
    from lnrecency.experiments.decoders.train import train
    from lnrecency.experiments.studies.thesis_text import learned, unigram_entropy

    bos, norm, _ = ARMS[arm]
    data = st.data(arm)
    cfg, ts = st.base.decoder("attn2", norm, data.vocab), st.training(arm, seed)
    prof = profile_of(arm, cfg.context)
    windows = st.windows_of(arm, seed)
    points: list = []
    left, steps_left = list(st.levels), list(st.token_steps)

    def on_eval(step, model, entry):  # T: probe at each loss level's first crossing and at the token steps
        loss = entry["heldout_loss"]
        names = [f"loss {lv:g}" for lv in left if loss is not None and loss <= lv]
        left[:] = [lv for lv in left if not (loss is not None and loss <= lv)]
        # the first evaluation at or after each token step (245 is not a multiple of the evaluation interval, 10:
        # it is probed at step 250, a deviation of 10k tokens stated on the page)
        names += [f"step {s}" for s in steps_left if step >= s]
        steps_left[:] = [s for s in steps_left if step < s]
        if names:
            slopes, _, _ = layer2_slopes(model, windows, decompose=False)
            points.extend(_point(slopes, entry, st, name) for name in names)

    res = train(cfg, ts, data=data, first_share={0: prof} if prof else None,
                on_eval=on_eval if arm.startswith("T") else None)
    final = res.final_heldout
    last = res.log[-1]["step"]
    paths, gap = None, 0.0
    if arm.startswith("T"):
        end = next(p for p in points if p["at"] == f"step {st.token_steps[-1]}")
        slope = {"mean": end["slope"], "se": end["se"]}
    else:
        slopes, paths, gap = layer2_slopes(res.model, windows, decompose=True)
        slope = {"mean": float(slopes.mean()), "se": float(slopes.std(ddof=1) / np.sqrt(slopes.size))}
    unigram = unigram_entropy(data)
    every = max(1, 50 // ts.eval_every)
    return {"arm": arm, "bos": bos, "norm": norm, "seed": int(seed), "plan_sha256": v5_plan.plan_sha256(),
            "imposed": ARMS[arm][2], "imposed_gap": gap, "windows": int(len(windows)), "slope": slope,
            "final_loss": final, "steps": int(last), "tokens": int(last * st.base.tokens_per_step()),
            "unigram": unigram, "learned": bool(learned({"log": [{"heldout_loss": final}], "unigram": unigram},
                                                        st.base)),
            "paths": paths, "points": points,
            "losses": [[int(e["step"]), e["heldout_loss"]] for e in res.log[::every] if e["heldout_loss"] is not None],
            "seconds": res.seconds}


RUN_KEYS = ("arm", "bos", "norm", "seed", "plan_sha256", "imposed", "imposed_gap", "windows", "slope", "final_loss",
            "steps", "tokens", "unigram", "learned", "paths", "points", "losses")
RUN_SHAPE = {"arm": str, "bos": bool, "norm": str, "seed": int, "plan_sha256": str, "imposed": (str, None),
             "imposed_gap": float, "windows": int, "slope": {"mean": float, "se": float}, "final_loss": (float, None),
             "steps": int, "tokens": int, "unigram": float, "learned": bool}


def _runs():
    from lnrecency.experiments.run_cache import PlanRuns

    return PlanRuns("thesis-text-v5", ("arm", "seed"), v5_plan.plan_sha256, "plan v5", RUN_KEYS, RUN_SHAPE)


def cached_v5(st: V5Settings | None = None) -> list | None:
    """Every run of the plan from the cache, in job order; None when one is missing."""
    return _runs().cached(st or V5Settings())


def run_v5(st: V5Settings | None = None, *, use_cache: bool = True, progress: bool | None = None,
           workers: int | None = 2, scheduler: str = "local") -> list:
    """Every run of the plan, trained ``workers`` at a time (or each one task on the Dask cluster at ``scheduler``)
    or read from the cache. Refused when the plan file is not the one committed before the runs."""
    from lnrecency.experiments.plans.declared import study
    from lnrecency.experiments.plans.engine import check_pinned

    st = st or V5Settings()
    check_pinned(study("thesis-text-v5"))
    st.data("F0"), st.data("Tln")  # the tokenizer and the token ids cached once, before the workers start
    return _runs().run(run_one, st, use_cache=use_cache, progress=progress, workers=workers, scheduler=scheduler)


if __name__ == "__main__":
    import sys

    settings = V5Settings.preset("--quick" in sys.argv)
    runs = run_v5(settings, progress=True)
    print(json.dumps([{k: r[k] for k in ("arm", "seed", "slope", "final_loss", "learned")} for r in runs], indent=1))
