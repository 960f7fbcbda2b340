"""The thesis on text, plan version 2 (issue 50): BOS as a factor, and the mechanism put to a causal test
(``lnrecency experiments thesis-text-v2``).

The design and the six primary tests are fixed in advance in ``lnrecency/data/thesis_text_plan_v2.md`` (its
SHA-256, :func:`plan_sha256`, is part of every cache key and record). In short: the version-1 attn2 models
(:mod:`lnrecency.experiments.studies.thesis_text`, same corpus, tokenizer, training and probe settings) trained with
BOS first in every window and without any BOS, x LayerNorm / RMSNorm / none, 8 seeds each; every probe leaves the
first key out (it is the attention sink either way) and reports beside the layer slope the slope over keys >= 8 and
each row's layer-1 share of attention to the first key; at the end the sink ablation (layer 1's first-key share
fixed at its own mean, :func:`lnrecency.experiments.decoders.decoder.fix_first_share`) and the layer-2 slope
measured again. :func:`decide` runs Q1-Q6 with Holm's procedure over them only, by the engine from their declared
rules (``lnrecency.experiments.plans.declared``).
"""
from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from lnrecency.experiments.plans.declared import study
from lnrecency.experiments.run_cache import PlanRuns
from lnrecency.experiments.studies.thesis_text import (
    NORMS,
    TextThesisSettings,
    corpus_data,
    layer_slope,
    learned,
    unigram_entropy,
)

__all__ = ["V2Settings", "plan_path", "plan_sha256", "run_v2", "cached_v2", "RUNS", "decide", "RUN_SHAPE", "summary",
           "gu_sink", "seed_table", "weights_path"]

#: the ablation of the plan: layer 1's first-key share fixed at its own mean
ABLATION = {1: "mean"}
VERSION = 2  # 2: the final probes keep the attention rollout and each head's first-key share (issue 51)


#: the plan's declaration: its text (``PLAN.plan_path()``) and SHA-256 (``PLAN.plan_sha256()``), defined once there
PLAN = study("thesis-text-v2")
plan_path, plan_sha256 = PLAN.plan_path, PLAN.plan_sha256


@dataclass(frozen=True)
class V2Settings:
    """Seeds and BOS arms of plan v2 over version 1's training and probe settings (``base``)."""

    seeds: tuple = tuple(range(8))
    bos: tuple = (True, False)
    base: TextThesisSettings = field(default_factory=TextThesisSettings)

    @classmethod
    def preset(cls, quick: bool) -> "V2Settings":
        """Default: the plan's 48 models; quick: 3 seeds per cell for 60 steps (a smoke test, never decisive; within
        2 min on 2 cores, lnrecency/data/costs.json)."""
        if quick:
            from dataclasses import replace

            return cls(seeds=(0, 1, 2), base=replace(TextThesisSettings.preset(True), steps=60, warmup=10,
                                                     eval_every=30))
        return cls()

    @property
    def quick(self) -> bool:
        return self == V2Settings.preset(True)

    def jobs(self) -> list[tuple[bool, str, int]]:
        return [(b, m, s) for b in self.bos for m in NORMS for s in self.seeds]

    def key(self) -> str:
        base = {k: v for k, v in asdict(self.base).items() if not (k == "corpus" and v is None)}
        text = json.dumps({"v": VERSION, "plan": plan_sha256(), "seeds": list(self.seeds), "bos": list(self.bos),
                           **base}, sort_keys=True, default=list)
        return hashlib.sha256(text.encode()).hexdigest()[:16]


@functools.lru_cache(maxsize=2)
def plain_corpus_data(root: str | None = None):
    """The corpus without BOS (windows of n corpus tokens), read once per process."""
    from lnrecency.experiments.text.corpus import CorpusData, load_corpus

    return CorpusData(load_corpus(root))


def _probe(model, st: V2Settings, norm: str, seed: int, windows: np.ndarray, tokens: str,
           first_share: dict | None = None, rows: bool = False) -> list:
    import torch

    from lnrecency.experiments.probes.probe import ProbeSettings
    from lnrecency.experiments.probes.probe_decoder import probe_decoder

    # tokens "text" / "random": the first key is left out of the slopes with or without BOS (the plan)
    ps = ProbeSettings(n=st.base.n, sequences=len(windows), seed=st.base.probe_seed("attn2", norm, seed),
                       tokens=tokens)
    res = probe_decoder(model, ps, light=True, inputs=lambda a, b: torch.from_numpy(windows[a:b]),
                        first_share=first_share)
    out = []
    for lp in res.layers:
        rec = {"layer": lp.layer, "slope": lp.slope, "slope_se": lp.slope_se, "rp": lp.rp, "sink": lp.sink,
               "late": None if lp.late_slope is None else lp.late_slope[0],
               # issue 51: Wu et al.'s quantity (the last query's attention rollout at the first and the last key,
               # plain and residual-aware) and each head's mean share to the first key (Gu et al.'s Sink^eps_1)
               "rollout_first": float(lp.rollout_last[0]), "rollout_last": float(lp.rollout_last[-1]),
               "rollout_residual_first": float(lp.rollout_residual_last[0]),
               "head_sinks": [h.sink for h in lp.heads]}
        if rows and lp.layer == 1:
            rec["first_share_rows"] = [float(x) for x in lp.first_share_rows]
        out.append(rec)
    return out


def version1_run(norm: str, seed: int, st: V2Settings):
    """Plan version 1's attn2 run of (norm, seed), the same training as this plan's BOS run, when its record and
    its final weights are cached (lnrecency.experiments.studies.thesis_text.model_path): (record, model), else
    None. The weights go through the checkpoint reader (lnrecency.experiments.decoders.train.load) and must be of
    this run's configuration and training."""
    from lnrecency.experiments.decoders.train import load
    from lnrecency.experiments.studies.thesis_text import RUNS, model_path

    base = st.base
    if seed not in base.seeds("attn2"):
        return None
    rec, folder = RUNS.read(base, ("attn2", norm, seed)), model_path(base, "attn2", norm, seed)
    if rec is None or not folder.is_dir() or folder.is_symlink():
        return None
    model, meta = load(folder)
    cfg, ts = base.decoder("attn2", norm, corpus_data(base.corpus).vocab), base.training(seed)
    if meta.get("decoder") != cfg.as_dict() or meta.get("training") != asdict(ts):
        raise ValueError(f"the cached weights {str(folder)!r} are not of the run they are filed under (their "
                         f"configuration or training differs); remove the folder to train the run again")
    return rec, model


def train_v2_run(bos: bool, norm: str, seed: int, st: V2Settings, reuse: bool = True) -> dict:
    """Train and probe one run of plan v2 (a worker's job). A BOS run that plan version 1 already trained (its
    record and final weights cached, :func:`version1_run`) is not trained again (``reuse``): its log and
    trajectory are version 1's (the trajectory's layers without the keys >= 8 slope, ``late`` None, and without
    the rollout and the heads' first-key shares) and the final probes are run on its weights, as a fresh run's
    would be."""
    from lnrecency.experiments.decoders.train import train

    base = st.base
    data = corpus_data(base.corpus) if bos else plain_corpus_data(base.corpus)
    cfg, ts = base.decoder("attn2", norm, data.vocab), base.training(seed)
    pseed = base.probe_seed("attn2", norm, seed)
    text, _ = data.heldout(base.n, base.probe_windows, np.random.Generator(np.random.PCG64(pseed)))
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([pseed, 1])))
    content = data.bos if bos else data.vocab  # content token ids: below BOS (which is the last id)
    control = rng.integers(0, content, size=(base.probe_windows, base.n))
    if bos:
        control[:, 0] = data.bos
    old = version1_run(norm, seed, st) if (bos and reuse) else None
    if old is not None:
        rec, model = old
        trajectory = [{**e, "text": [{**lay, "late": None} for lay in e["text"]]} for e in rec["trajectory"]]
        log, seconds, reused = rec["log"], rec["seconds"], True
    else:
        trajectory = []

        def on_eval(step, model, entry) -> None:
            trajectory.append({"step": step, "tokens": step * base.tokens_per_step(),
                               "heldout_loss": entry["heldout_loss"],
                               "text": _probe(model, st, norm, seed, text, "text")})

        res = train(cfg, ts, on_eval=on_eval, data=data)
        model, log, seconds, reused = res.model, res.log, res.seconds, False
        _keep_weights(res, bos, norm, seed, st)
    final = {"text": _probe(model, st, norm, seed, text, "text", rows=True),
             "random": _probe(model, st, norm, seed, control, "random"),
             "ablated": _probe(model, st, norm, seed, text, "text", first_share=ABLATION)}
    return {"arch": "attn2", "bos": bool(bos), "norm": norm, "seed": seed, "config": cfg.as_dict(),
            "training": asdict(ts), "log": log, "seconds": seconds, "trajectory": trajectory,
            "final": final, "unigram": unigram_entropy(data), "plan_sha256": plan_sha256(),
            "reused_version1": reused}


def weights_path(st: V2Settings, bos: bool, norm: str, seed: int) -> Path:
    """The checkpoint folder of one plan-v2 run's final weights (version 1's for a BOS run it trained)."""
    from lnrecency.experiments.run_cache import entry
    from lnrecency.experiments.studies.thesis_text import model_path

    if bos:
        v1 = model_path(st.base, "attn2", norm, seed)
        if v1.is_dir() and not v1.is_symlink():
            return v1
    return entry("thesis-text-v2", f"{st.key()}-{'bos' if bos else 'nobos'}-{norm}-{seed}-model")


def _keep_weights(res, bos: bool, norm: str, seed: int, st: V2Settings) -> None:
    """A run's final weights kept beside its record (plan v3 reads them, :mod:`~.v2_weights`)."""
    from lnrecency.experiments.decoders.train import save
    from lnrecency.experiments.run_cache import DamagedCache, make_folder

    target = weights_path(st, bos, norm, seed)
    make_folder(target.parent)
    if target.is_symlink() or (target.exists() and not target.is_dir()):
        raise DamagedCache(f"cache entry {str(target)!r} is not a folder lnrecency wrote; remove it and run again")
    save(res, target, extra={"plan_sha256": plan_sha256(), "record_heldout_loss": res.final_heldout})


LAYER_SHAPE = {"layer": int, "slope": float, "slope_se": float, "rp": (float, None), "sink": (float, None),
               "late": (float, None)}
#: a final probe's layer: the rollout and the per-head first-key shares beside (version 2 of the records; a reused
#: version-1 trajectory has neither)
FINAL_SHAPE = {**LAYER_SHAPE, "rollout_first": float, "rollout_last": float, "rollout_residual_first": float,
               "head_sinks": [(float, None)]}
RUN_SHAPE = {"arch": str, "bos": bool, "norm": str, "seed": int, "unigram": float, "plan_sha256": str,
             "log": [{"step": int, "heldout_loss": (float, None)}],
             "trajectory": [{"step": int, "tokens": int, "heldout_loss": float, "text": [LAYER_SHAPE]}],
             "final": {"text": [FINAL_SHAPE], "random": [FINAL_SHAPE], "ablated": [FINAL_SHAPE]}}
RUN_KEYS = ("arch", "bos", "norm", "seed", "log", "trajectory", "final", "unigram", "plan_sha256")


#: the plan's runs in the cache: ``{key}-{bos|nobos}-{norm}-{seed}.json`` under thesis-text-v2/, each checked against
#: its job and this plan's SHA-256
RUNS = PlanRuns("thesis-text-v2", ("bos", "norm", "seed"), lambda: plan_sha256(), "plan v2", RUN_KEYS, RUN_SHAPE,
                label=lambda bos, norm, seed: f"{'bos' if bos else 'nobos'}-{norm}-{seed}",
                runs="thesis-text v2 runs")
cached_v2 = RUNS.cached  # every run of the settings from the cache, in job order; None when one is missing


def run_v2(st: V2Settings, *, use_cache: bool = True, progress: bool | None = False,
           workers: int | None = None, scheduler: str = "local") -> list:
    """Every run of ``st``, trained ``workers`` at a time (or on the Dask cluster at ``scheduler``) or read from the
    cache."""
    corpus_data(st.base.corpus)  # the tokenizer and the token ids cached once, before the workers start
    plain_corpus_data(st.base.corpus)
    return RUNS.run(train_v2_run, st, use_cache=use_cache, progress=progress, workers=workers, scheduler=scheduler)


def _cell(bos: bool, norm: str) -> str:
    return f"{'bos' if bos else 'no bos'} {norm}"


def seed_table(runs: list, st: V2Settings) -> dict:
    """The data every verdict of the plan is decided from, one row per run (issue 67: published in the snapshot,
    so that a test recomputes Q1-Q6 from the repository): per cell, each run's seed, whether it passed the learning
    gate, its final held-out loss, its layer-2 slope on held-out text with the slope's SE over the probe windows, the
    slope over keys >= 8, the slope with layer 1's first-key share fixed (the ablation) with its SE, the slope on
    the random control, and its trajectory (tokens, held-out loss, layer-2 slope at each evaluation)."""
    def layer2(layers):
        return next(x for x in layers if x["layer"] == 2)

    out = {}
    for bos in st.bos:
        for norm in NORMS:
            rows = []
            for r in runs:
                if r["bos"] != bos or r["norm"] != norm:
                    continue
                text, abl = layer2(r["final"]["text"]), layer2(r["final"]["ablated"])
                rows.append({"seed": r["seed"], "learned": bool(learned(r, st.base)),
                             "final_loss": r["log"][-1]["heldout_loss"], "slope": text["slope"],
                             "slope_se": text["slope_se"], "late": text["late"], "ablated": abl["slope"],
                             "ablated_se": abl["slope_se"], "random": layer2(r["final"]["random"])["slope"],
                             "trajectory": [[e["tokens"], e["heldout_loss"], layer_slope(e["text"], 2)]
                                            for e in r["trajectory"]]})
            out[_cell(bos, norm)] = rows
    return out


def _arm(runs: list, st: V2Settings, bos: bool, norm: str) -> list:
    return [r for r in runs if r["bos"] == bos and r["norm"] == norm and learned(r, st.base)]


def decide(runs: list, st: V2Settings) -> dict:
    """Q1-Q6 of plan v2, decided together by Holm at 0.05 by the engine from the runs' :func:`seed_table` and the
    tests' declared rules (:func:`lnrecency.experiments.plans.engine.decide`): id -> (SeedDecision or None, why-not
    text)."""
    from lnrecency.experiments.plans.engine import decide as decide_plan

    return decide_plan(study("thesis-text-v2"), seed_table(runs, st))


def summary(runs: list, st: V2Settings) -> dict:
    """Per cell (BOS, norm): learned seeds; layer-2 slope, late slope (keys >= 8), ablated slope and its change,
    mean and SE over seeds; the layer-1 first-key share by row (mean over seeds)."""
    out = {}
    for bos in st.bos:
        for norm in NORMS:
            arm = _arm(runs, st, bos, norm)

            def stat(vals):
                v = np.asarray([x for x in vals if x is not None], dtype=float)  # a value not measured is left out
                return (None, None) if v.size < 2 else (float(v.mean()), float(v.std(ddof=1) / np.sqrt(v.size)))
            two = [next(x for x in r["final"]["text"] if x["layer"] == 2) for r in arm]
            abl = [next(x for x in r["final"]["ablated"] if x["layer"] == 2) for r in arm]
            rows = [next(x for x in r["final"]["text"] if x["layer"] == 1)["first_share_rows"] for r in arm]
            out[f"{'bos' if bos else 'no bos'} {norm}"] = {
                "seeds": [r["seed"] for r in arm], "not_learned": [r["seed"] for r in runs if r["bos"] == bos and
                                                                   r["norm"] == norm and r not in arm],
                "slope": stat([x["slope"] for x in two]), "late": stat([x["late"] for x in two]),
                "ablated": stat([x["slope"] for x in abl]),
                "change": stat([(a["slope"] - t["slope"]) / t["slope"] for a, t in zip(abl, two) if t["slope"]]),
                "first_share_rows": np.mean(rows, axis=0).tolist() if rows else None,
                "final_loss": stat([r["log"][-1]["heldout_loss"] for r in arm]),
                **{f"{which} {k}": stat([_rollout(r, which, layer, key) for r in arm])
                   for which in ("text", "random") for layer, k, key in _ROLLOUT_CELLS},
                **{f"{which} gu_sink": stat([gu_sink(r["final"][which]) for r in arm]) for which in ("text", "random")},
                **{f"{which} sink": stat([next(x for x in r["final"][which] if x["layer"] == 1)["sink"] for r in arm])
                   for which in ("text", "random")}}
    return out


#: the rollout's cells in :func:`summary`: (layer, name, record field)
_ROLLOUT_CELLS = ((1, "rollout 1 first", "rollout_first"), (2, "rollout 2 first", "rollout_first"),
                  (2, "rollout 2 last", "rollout_last"), (2, "rollout 2 residual first", "rollout_residual_first"))


def _rollout(run: dict, which: str, layer: int, key: str) -> float:
    return next(x for x in run["final"][which] if x["layer"] == layer)[key]


def gu_sink(layers: list, eps: float | None = None) -> float | None:
    """Gu et al.'s Sink^eps_1 of one final probe's layers (their records, :data:`FINAL_SHAPE`): the share of (layer,
    head) pairs whose mean attention to the first key, over rows i >= 2, exceeds ``eps`` (default their 0.3,
    lnrecency.experiments.probes.probe_settings.GU_EPS); None when no head has a share."""
    from lnrecency.experiments.probes.probe_settings import GU_EPS

    eps = GU_EPS if eps is None else eps
    shares = [s for lay in layers for s in lay["head_sinks"] if s is not None]
    return sum(s > eps for s in shares) / len(shares) if shares else None


def theory_shares(measured: list, lam: float = 1.0) -> dict:
    """The parameter-free sink theory's layer-1 share beside a measured one (:mod:`lnrecency.theory.sink`): the bonus
    b fitted to the measured rows i >= 2 by least squares on the log-odds (P_i1 = e^b / (e^b + (i - 2) + e^lam) at
    alpha = 0), its predicted shares, the largest gap, and the theory's layer-2 slopes at that b with LayerNorm and
    without normalisation, and both with the residual (the trained models' setting)."""
    from scipy.optimize import minimize_scalar

    from lnrecency.theory.sink import sink_limit

    p = np.clip(np.asarray(measured, dtype=float)[1:], 1e-9, 1 - 1e-9)
    rest = np.arange(2, p.size + 2) - 2 + np.exp(lam)  # (i - 2) + e^lam for rows i = 2..n

    def loss(b):
        return float(np.sum((np.log(p / (1 - p)) - (b - np.log(rest))) ** 2))
    b = float(minimize_scalar(loss, bounds=(-20, 20), method="bounded").x)
    predicted = np.exp(b) / (np.exp(b) + rest)
    n = p.size + 1
    return {"b": b, "predicted": [1.0] + predicted.tolist(), "largest_gap": float(np.max(np.abs(predicted - p))),
            "theory_slope_layernorm": sink_limit(n, 2, b=b, norm="layernorm", lam=lam).slope(2),
            "theory_slope_none": sink_limit(n, 2, b=b, norm="none", lam=lam).slope(2),
            # issue 67: the trained models' own setting has the residual stream
            "theory_slope_layernorm_residual": sink_limit(n, 2, b=b, norm="layernorm", lam=lam,
                                                          residual=True).slope(2),
            "theory_slope_none_residual": sink_limit(n, 2, b=b, norm="none", lam=lam, residual=True).slope(2)}

