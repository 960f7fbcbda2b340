"""The thesis on text: NoPE language models with LayerNorm, RMSNorm and none, trained on the default corpus
at equal tokens, probed on held-out text along training (``lnrecency experiments thesis-text``).

The design and the primary hypotheses are fixed in advance in ``lnrecency/data/thesis_text_plan.md`` (the
pre-registration; its SHA-256, :func:`plan_sha256`, is part of every cache key and result). In short: attn2 (2
attention-only layers) with 8 training seeds per normalisation (primary) and mlp2 (2 layers with an MLP) with
3 (secondary); width 64, 4 heads, BOS + 63 corpus tokens per window, 3 000 320 tokens per model; the layer
slope on 32 held-out windows (BOS first, its key out) at every evaluation; the neutral random control at the
end. The engine decides the plan's four tests by their declared rules, Holm's procedure over them only, from
:func:`table` (lnrecency.claims.trained.tt1_tt4_thesis_text.decide).

Each run is one job (:func:`train_text_run`), trained by :func:`lnrecency.experiments.decoders.train.train`
(deterministic on one thread), run ``--workers`` at a time, and cached as JSON under
``$LNRECENCY_CACHE/thesis-text/``. Seeds of one configuration are not grouped into one batched model: at width
64 the output layer's products dominate and are already compute-bound on a CPU core, so a grouped model of 8
seeds measured 0.91x the throughput of 8 separate runs (29 967 against 33 101 tokens/s on one thread;
benchmarks/bench_train.py --grouped 8 --steps 150, 2026-11-26).
"""
from __future__ import annotations

import functools
import hashlib
import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from lnrecency.experiments.plans.declared import study
from lnrecency.experiments.run_cache import PlanRuns
from lnrecency.experiments.text.corpus import CorpusData

__all__ = ["TextThesisSettings", "plan_path", "plan_sha256", "run_thesis_text", "cached_runs", "RUNS",
           "layer_slope", "model_path", "checked_model_path", "RUN_KEYS", "BosCorpusData",
           "unigram_entropy", "RUN_SHAPE", "MARGIN", "PLANNED", "ARCHS", "corpus_data", "learned",
           "matched"]

#: H4's equivalence margin (logit per key), fixed in the plan (declared with its rule)
MARGIN = study("thesis-text").test("H4").rule.margin
#: the effect each primary test was powered for in the plan (logit per key; H4: the margin, true difference 0)
PLANNED = {"H1": 0.005, "H2": 0.0033, "H3": 0.0033, "H4": MARGIN}
#: the two architectures: attn2 (primary) and mlp2 (secondary)
ARCHS = {"attn2": {"n_layers": 2, "mlp": False}, "mlp2": {"n_layers": 2, "mlp": True}}
NORMS = ("layernorm", "rmsnorm", "none")
VERSION = 1
RUN_KEYS = ("arch", "norm", "seed", "log", "trajectory", "final", "unigram", "plan_sha256")


#: the plan's declaration: its text (``PLAN.plan_path()``) and SHA-256 (``PLAN.plan_sha256()``), defined once there
PLAN = study("thesis-text")
plan_path, plan_sha256 = PLAN.plan_path, PLAN.plan_sha256


@dataclass(frozen=True)
class TextThesisSettings:
    primary_seeds: tuple = tuple(range(8))
    secondary_seeds: tuple = (0, 1, 2)
    archs: tuple = ("attn2", "mlp2")
    steps: int = 1465
    batch: int = 32
    n: int = 64
    lr: float = 3e-3
    warmup: int = 100
    eval_every: int = 183
    eval_sequences: int = 128
    probe_windows: int = 32
    d_model: int = 64
    n_heads: int = 4
    gate_margin: float = 0.5
    corpus: str | None = None  # a folder of text files; None: the default corpus (the plan's)

    @classmethod
    def preset(cls, quick: bool) -> "TextThesisSettings":
        """Default: the plan's 33 models (time: lnrecency/data/costs.json); quick: attn2 with 3 seeds per
        normalisation for 120 steps (a smoke test, never decisive)."""
        if quick:
            return cls(primary_seeds=(0, 1, 2), secondary_seeds=(), archs=("attn2",), steps=120, warmup=20,
                       eval_every=40, eval_sequences=64, probe_windows=16)
        return cls()

    @property
    def quick(self) -> bool:
        return self == TextThesisSettings.preset(True)

    def seeds(self, arch: str) -> tuple:
        return self.primary_seeds if arch == "attn2" else self.secondary_seeds

    def jobs(self) -> list[tuple[str, str, int]]:
        return [(a, m, s) for a in self.archs for m in NORMS for s in self.seeds(a)]

    def tokens_per_step(self) -> int:
        return self.batch * self.n

    def decoder(self, arch: str, norm: str, vocab: int):
        from lnrecency.experiments.decoders.decoder_config import DecoderConfig

        return DecoderConfig(vocab=vocab, d_model=self.d_model, n_heads=self.n_heads, context=self.n, norm=norm,
                             placement="pre", positions="none", residual=True, **ARCHS[arch])

    def training(self, seed: int):
        from lnrecency.experiments.decoders.decoder_config import TrainSettings

        return TrainSettings(task="lm", steps=self.steps, seed=seed, batch=self.batch, n=self.n, lr=self.lr,
                             warmup=self.warmup, eval_every=self.eval_every, eval_sequences=self.eval_sequences)

    def probe_seed(self, arch: str, norm: str, seed: int) -> int:
        key = [0x7E47, sorted(ARCHS).index(arch), NORMS.index(norm), int(seed)]
        return int(np.random.SeedSequence(key).generate_state(1, np.uint64)[0] >> 1)

    def key(self) -> str:
        fields = {k: v for k, v in asdict(self).items() if not (k == "corpus" and v is None)}
        text = json.dumps({"v": VERSION, "plan": plan_sha256(), **fields}, sort_keys=True, default=list)
        return hashlib.sha256(text.encode()).hexdigest()[:16]


@functools.lru_cache(maxsize=2)
def corpus_data(root: str | None = None) -> "BosCorpusData":
    """The corpus with BOS, read once per process (a worker trains many runs on it; it is never modified)."""
    from lnrecency.experiments.text.corpus import load_corpus

    return BosCorpusData(load_corpus(root))


class BosCorpusData(CorpusData):
    """CorpusData with BOS (id = the BPE vocabulary size) first in every window: n - 1 corpus tokens after it;
    the targets are the next tokens (the first is the window's first corpus token)."""

    def __init__(self, c):
        super().__init__(c)
        self.bos = c.vocab
        self.vocab = c.vocab + 1

    def _windows(self, ids, n, size, rng):
        toks, targets = super()._windows(ids, n - 1, size, rng)
        first = np.full((size, 1), self.bos, dtype=toks.dtype)
        return np.concatenate([first, toks], 1), np.concatenate([toks[:, :1], targets], 1)


def unigram_entropy(data) -> float:
    """The entropy (nats) of the training stream's tokens without context: the loss of the best model that
    ignores the context, the learning gate's reference."""
    counts = np.bincount(data.train_ids, minlength=data.vocab).astype(float)
    p = counts[counts > 0] / counts.sum()
    return float(-(p * np.log(p)).sum())


def _probe(model, st: TextThesisSettings, arch: str, norm: str, seed: int, windows: np.ndarray, tokens: str):
    import torch

    from lnrecency.experiments.probes.probe import ProbeSettings
    from lnrecency.experiments.probes.probe_decoder import probe_decoder

    ps = ProbeSettings(n=st.n, sequences=len(windows), seed=st.probe_seed(arch, norm, seed), tokens=tokens)
    res = probe_decoder(model, ps, light=True, inputs=lambda a, b: torch.from_numpy(windows[a:b]))
    return [{"layer": lp.layer, "slope": lp.slope, "slope_se": lp.slope_se, "rp": lp.rp, "sink": lp.sink}
            for lp in res.layers]


def train_text_run(arch: str, norm: str, seed: int, st: TextThesisSettings) -> dict:
    """Train and probe one run (a worker's job)."""
    from lnrecency.experiments.decoders.train import train

    weights = checked_model_path(st, arch, norm, seed) if arch == "attn2" else None  # before any work
    data = corpus_data(st.corpus)
    cfg, ts = st.decoder(arch, norm, data.vocab), st.training(seed)
    pseed = st.probe_seed(arch, norm, seed)
    text, _ = data.heldout(st.n, st.probe_windows, np.random.Generator(np.random.PCG64(pseed)))
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([pseed, 1])))
    control = rng.integers(0, data.bos, size=(st.probe_windows, st.n))  # content tokens only after BOS
    control[:, 0] = data.bos
    trajectory = []

    def on_eval(step, model, entry) -> None:
        trajectory.append({"step": step, "tokens": step * st.tokens_per_step(), "heldout_loss": entry["heldout_loss"],
                           "text": _probe(model, st, arch, norm, seed, text, "task")})

    res = train(cfg, ts, on_eval=on_eval, data=data)
    final = {"text": trajectory[-1]["text"], "random": _probe(res.model, st, arch, norm, seed, control, "random")}
    if weights is not None:  # the final weights beside the record: plan v2 probes them instead of training again
        from lnrecency.experiments.decoders.train import save

        save(res, weights, extra={"plan_sha256": plan_sha256()})
    return {"arch": arch, "norm": norm, "seed": seed, "config": cfg.as_dict(), "training": asdict(ts),
            "log": res.log, "seconds": res.seconds, "trajectory": trajectory, "final": final,
            "unigram": unigram_entropy(data), "plan_sha256": plan_sha256()}


def model_path(st: TextThesisSettings, arch: str, norm: str, seed: int) -> Path:
    """The cache folder of one attn2 run's final weights (a checkpoint folder, lnrecency.experiments.decoders.train
    .save / load), which plan v2 (lnrecency.experiments.studies.thesis_text_v2) probes instead of training the same
    run again."""
    from lnrecency.experiments.run_cache import entry

    return entry("thesis-text", f"{st.key()}-{arch}-{norm}-{seed}-model")


def checked_model_path(st: TextThesisSettings, arch: str, norm: str, seed: int) -> Path:
    """:func:`model_path`, its folders made inside the cache root without following a link; a link or a file
    already there is refused (DamagedCache naming it and the fix): no weights are ever written through a link."""
    from lnrecency.experiments.run_cache import DamagedCache, make_folder

    target = model_path(st, arch, norm, seed)
    make_folder(target.parent)
    if target.is_symlink() or (target.exists() and not target.is_dir()):
        raise DamagedCache(f"cache entry {str(target)!r} is not a folder lnrecency wrote (a link or a file); remove "
                           f"it and run again")
    return target


#: a probed layer, a training log entry, and a whole run as the cache holds them (lnrecency.files.shapes)
LAYER_SHAPE = {"layer": int, "slope": float, "slope_se": float, "rp": (float, None), "sink": (float, None)}
RUN_SHAPE = {"arch": str, "norm": str, "seed": int, "unigram": float, "plan_sha256": str,
             "log": [{"step": int, "heldout_loss": (float, None)}],
             "trajectory": [{"step": int, "tokens": int, "heldout_loss": float, "text": [LAYER_SHAPE]}],
             "final": {"text": [LAYER_SHAPE], "random": [LAYER_SHAPE]}}


#: the plan's runs in the cache: ``{key}-{arch}-{norm}-{seed}.json`` under thesis-text/, each checked against its
#: job and this plan's SHA-256 (records of another plan never decide this plan's claims)
RUNS = PlanRuns("thesis-text", ("arch", "norm", "seed"), lambda: plan_sha256(), "plan v1", RUN_KEYS, RUN_SHAPE,
                runs="thesis-text runs")
cached_runs = RUNS.cached  # every run of the settings from the cache, in job order; None when one is missing


def run_thesis_text(st: TextThesisSettings, *, use_cache: bool = True, progress: bool | None = False,
                    workers: int | None = None, scheduler: str = "local") -> list:
    """Every run of ``st``, trained ``workers`` at a time (or on the Dask cluster at ``scheduler``) or read from the
    cache (the same bytes either way)."""
    corpus_data(st.corpus)  # the tokenizer and the token ids cached once, before the workers start
    return RUNS.run(train_text_run, st, use_cache=use_cache, progress=progress, workers=workers, scheduler=scheduler)


def learned(run: dict, st: TextThesisSettings) -> bool:
    final = run["log"][-1]["heldout_loss"]
    return final is not None and math.isfinite(final) and final <= run["unigram"] - st.gate_margin


def layer_slope(layers: list, layer: int) -> float:
    """The slope of ``layer`` in a run's list of per-layer probe results."""
    return float(next(lay["slope"] for lay in layers if lay["layer"] == layer))


def table(runs: list, st: TextThesisSettings) -> dict:
    """The runs as the engine reads them (its tests' declared rules): per cell "ARCH NORM", each run's seed, gate
    (:func:`learned`), final layer-2 slope, final held-out loss and trajectory as [tokens, held-out loss, layer-2
    slope] per evaluation, in run order."""
    out: dict = {}
    for r in runs:
        out.setdefault(f"{r['arch']} {r['norm']}", []).append(
            {"seed": r["seed"], "learned": learned(r, st), "slope": layer_slope(r["final"]["text"], 2),
             "final_loss": r["log"][-1]["heldout_loss"],
             "trajectory": [[e["tokens"], e["heldout_loss"], layer_slope(e["text"], 2)] for e in r["trajectory"]]})
    return out


def matched(runs: list, st: TextThesisSettings) -> dict:
    """H3's matched-loss points: the none arm's median final held-out loss (attn2, learned runs), and for each
    learned LayerNorm run its first evaluation at or below it (layer-2 slope, tokens); None where it never is."""
    def arm(norm):
        return [r for r in runs if r["arch"] == "attn2" and r["norm"] == norm and learned(r, st)]
    none = arm("none")
    if not none:
        return {"target": None, "layernorm": [], "none": [], "layernorm_final": None, "none_reach_layernorm": []}
    target = float(np.median([r["log"][-1]["heldout_loss"] for r in none]))
    points = []
    for r in arm("layernorm"):
        hit = next((e for e in r["trajectory"] if e["heldout_loss"] <= target), None)
        points.append(None if hit is None else {"seed": r["seed"], "tokens": hit["tokens"],
                                                "slope": layer_slope(hit["text"], 2)})
    ln = arm("layernorm")
    ln_final = float(np.median([r["log"][-1]["heldout_loss"] for r in ln])) if ln else None
    reach = [next((e["tokens"] for e in r["trajectory"] if e["heldout_loss"] <= ln_final), None)
             for r in none] if ln_final is not None else []
    return {"target": target, "layernorm": points,
            "none": [{"seed": r["seed"], "tokens": r["trajectory"][-1]["tokens"],
                      "slope": layer_slope(r["final"]["text"], 2)} for r in none],
            "layernorm_final": ln_final, "none_reach_layernorm": reach}
