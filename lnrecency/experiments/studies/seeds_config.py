"""Settings and cache of the seeds' own experiments at small scale (no torch import: the CLI, the report and
``verify`` ask whether results are cached without importing torch). The experiments themselves are
:mod:`lnrecency.experiments.studies.seed002` and :mod:`lnrecency.experiments.studies.seed003`.

Seed 002 (an induction head's recency): a 2-layer attention-only decoder with LayerNorm (pre-LN, residual)
and learned positions, trained on the ``repeats`` task (induction at a random period) until an induction head
forms. Seed 003 (vanishing variance): 2-layer attention-only decoders with pre-LN, post-attention LN, or
both (rotary positions), trained on argmax retrieval and dictionary lookup at length L and tested up to
8 L.

Cache: one JSON file per (experiment, training seed, model) under ``$LNRECENCY_CACHE/seeds`` (default
``~/.cache/lnrecency``), keyed by a hash of the experiment's settings, the run and torch's version.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

from lnrecency.experiments import run_cache
from lnrecency.experiments.decoders.decoder_config import DecoderConfig, TrainSettings
from lnrecency.experiments.studies.thesis_config import torch_version
from lnrecency.runtime.arguments import check_int

__all__ = ["Seed002Settings", "Seed003Settings", "EXPERIMENTS", "run_path", "is_cached", "run_cached", "runs_of",
           "select", "LEVEL"]

LEVEL = 0.95  # t-intervals over training seeds
VERSION = {"seed002": "seed002-2", "seed003": "seed003-2"}


def _check_seeds(seeds: tuple) -> None:
    if len(set(seeds)) < 3:
        raise ValueError(f"a trained-model verdict needs at least 3 training seeds; got {seeds!r}")


@dataclass(frozen=True)
class Seed002Settings:
    """Seed 002 at small scale. Sequences of Figure 1 have seed 002's layout (13 tokens: <BOS> R [A][B] ...
    [A][C] ... [A], the second [A] at positions 4..10); Figures 4-6 average the induction head's attention
    over random sequences of ``short`` and ``long`` tokens (BOS at position 0)."""

    vocab: int = 256
    d_model: int = 128
    n_heads: int = 8
    context: int = 64
    n_train: int = 64
    steps: int = 2500
    batch: int = 32
    lr: float = 3e-3
    threads: int = 1  # one thread per training: two trainings run at once (lnrecency.experiments.decoders.parallel)
    seeds: tuple = (0, 1, 2, 3, 4)
    samples: int = 2000  # Figure 1 and 3: random sequences per position of the second [A]
    random_sequences: int = 1000  # Figures 4-6 and the mechanism
    short: int = 7
    long: int = 48
    threshold: float = 0.3  # an induction head: score >= threshold (mean attention to the induction target)

    def __post_init__(self) -> None:
        _check_seeds(self.seeds)
        check_int("vocab", self.vocab, minimum=16)
        check_int("samples", self.samples, minimum=2)
        check_int("random_sequences", self.random_sequences, minimum=2)
        if not self.short < self.long <= self.context:
            raise ValueError(f"need short < long <= context; got {self.short}, {self.long}, {self.context}")

    @classmethod
    def preset(cls, quick: bool) -> "Seed002Settings":
        """Default: vocabulary 256, width 128, 2500 steps per seed; quick: vocabulary 64, width 64, 1000 steps
        at length 48, 400 sequences per position.

        Vocabulary 256, not 1000: at vocabulary 1000 (width 128, 4000 steps) the models solved the task (95%
        accuracy on repeated sequences) without a standard induction head (largest layer-1 score 0.07, no
        previous-token head), so seed 002's figures, which are about an induction head, would not apply."""
        if quick:
            return cls(vocab=64, d_model=64, n_train=48, steps=1000, samples=400, random_sequences=300,
                       seeds=(0, 1, 2))
        return cls()

    def decoder(self) -> DecoderConfig:
        return DecoderConfig(vocab=self.vocab, d_model=self.d_model, n_layers=2, n_heads=self.n_heads,
                             context=self.context, mlp=False, norm="layernorm", placement="pre",
                             positions="learned", residual=True)

    def training(self, seed: int) -> TrainSettings:
        return TrainSettings(task="repeats", steps=self.steps, seed=seed, batch=self.batch, n=self.n_train,
                             lr=self.lr, eval_every=max(self.steps // 20, 1), threads=self.threads)

    def scale(self) -> str:
        return (f"2 layers, attention-only, {self.n_heads} heads, width {self.d_model}, vocabulary {self.vocab}, "
                f"learned positions, pre-LN, trained {self.steps} steps on 'repeats' (length {self.n_train}), "
                f"{len(self.seeds)} training seeds")


#: seed 003's architectures: where the LayerNorm sits
ARCHS3 = ("pre", "post", "both")
TASKS3 = ("argmax", "lookup")


@dataclass(frozen=True)
class Seed003Settings:
    """Seed 003 at small scale: 2-layer attention-only decoders (rotary positions: relative, so a longer
    test sequence meets no untrained position embedding) with pre-LN, post-attention LN or both; trained at lengths <=
    ``train_length``, tested at
    ``test_lengths`` (up to 8x)."""

    vocab: int = 130  # lookup at 8 x 16 tokens needs 62 distinct keys: vocab >= 2 * 62 + 2
    d_model: int = 64
    n_heads: int = 4
    n_layers: int = 2
    train_length: int = 16
    test_factors: tuple = (1, 2, 4, 8)
    steps: int = 2000
    batch: int = 32
    lr: float = 3e-3
    threads: int = 1
    seeds: tuple = (0, 1, 2, 3, 4)
    archs: tuple = ARCHS3
    tasks: tuple = TASKS3
    test_sequences: int = 512

    def __post_init__(self) -> None:
        _check_seeds(self.seeds)
        for a in self.archs:
            if a not in ARCHS3:
                raise ValueError(f"archs must be among {ARCHS3}; got {a!r}")
        for t in self.tasks:
            if t not in TASKS3:
                raise ValueError(f"tasks must be among {TASKS3}; got {t!r}")
        check_int("train_length", self.train_length, minimum=5)
        if max(self.test_factors) < 8:
            raise ValueError("seed 003 is tested up to at least 8 times the training length")

    @classmethod
    def preset(cls, quick: bool) -> "Seed003Settings":
        """Default: width 64, 2000 steps; quick: width 32, 500 steps, 256 test sequences per length."""
        if quick:
            return cls(d_model=32, steps=500, test_sequences=256, seeds=(0, 1, 2))
        return cls()

    def length(self, task: str, factor: int) -> int:
        """The task's sequence length at ``factor`` times the training length (lookup: odd lengths)."""
        n = self.train_length * factor
        return n - ((n - 3) % 2) if task == "lookup" else n

    def decoder(self, arch: str) -> DecoderConfig:
        ctx = max(self.length(t, max(self.test_factors)) for t in self.tasks)
        return DecoderConfig(vocab=self.vocab, d_model=self.d_model, n_layers=self.n_layers,
                             n_heads=self.n_heads, context=ctx, mlp=False, norm="layernorm", placement=arch,
                             positions="rotary", residual=True)

    def training(self, task: str, seed: int) -> TrainSettings:
        return TrainSettings(task=task, steps=self.steps, seed=seed, batch=self.batch,
                             n=self.length(task, 1), lr=self.lr, eval_every=max(self.steps // 20, 1),
                             threads=self.threads)

    def scale(self) -> str:
        return (f"{self.n_layers} layers, attention-only, {self.n_heads} heads, width {self.d_model}, vocabulary "
                f"{self.vocab}, rotary positions, trained {self.steps} steps at length {self.train_length}, "
                f"tested at {', '.join(str(self.train_length * f) for f in self.test_factors)}; "
                f"{len(self.seeds)} training seeds")


EXPERIMENTS = {"seed002": Seed002Settings, "seed003": Seed003Settings}


def run_path(experiment: str, settings, *parts) -> Path:
    """The cache file of one run of ``experiment`` (parts: the seed, and for seed 003 the task and arch)."""
    key = run_cache.key(VERSION[experiment], asdict(settings), list(parts), torch_version())
    return run_cache.entry("seeds", f"{experiment}-{key}.json")


def runs_of(experiment: str, settings) -> list[tuple]:
    if experiment == "seed002":
        return [(s,) for s in settings.seeds]
    return [(t, a, s) for t in settings.tasks for a in settings.archs for s in settings.seeds]


def select(runs: list, task: str, arch: str) -> list:
    """Seed 003's records of one (task, architecture), in seed order."""
    return [r for r in runs if r["task"] == task and r["arch"] == arch]


def run_check(job: tuple):
    """The check of a cached seed run filed under ``job`` ((seed,) or (task, arch, seed)): the record says the
    same seed (and task and architecture where it names them)."""
    def check(rec: dict) -> None:
        names = ("seed",) if len(job) == 1 else ("task", "arch", "seed")
        said = tuple(rec.get(k) for k in names)
        if any(rec.get(k) is not None and rec.get(k) != v for k, v in zip(names, job)) or rec.get("seed") != job[-1]:
            raise ValueError(f"it is filed as {dict(zip(names, job))} but holds {dict(zip(names, said))}")
    return check


def run_cached(experiment: str, settings, jobs: list, fn, *, use_cache: bool = True, progress: bool | None = False,
               workers: int | None = None, scheduler: str = "local") -> list[dict]:
    """[fn(settings, *job)] for every job, each read from its cache file when there, else trained in parallel
    workers (lnrecency.experiments.run_cache.cached_jobs: the same bytes as serially) and cached as it finishes."""
    return run_cache.cached_jobs(fn, jobs, lambda job: run_path(experiment, settings, *job),
                                 args_of=lambda job: (settings, *job), use_cache=use_cache, required=("seed", "log"),
                                 what=f"{experiment} runs", progress=progress, workers=workers,
                                 shape={"seed": int, "log": list}, check_of=run_check, scheduler=scheduler)


def is_cached(experiment: str, settings) -> bool:
    """Whether every run of ``settings`` is in the cache (the experiment then trains nothing)."""
    for parts in runs_of(experiment, settings):
        if run_cache.read(run_path(experiment, settings, *parts), ("seed", "log"), shape={"seed": int, "log": list},
                          check=run_check(tuple(parts))) is None:
            return False
    return True
