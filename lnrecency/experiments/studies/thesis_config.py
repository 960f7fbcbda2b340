"""The thesis experiment's settings and its cache, without torch: whether results are cached can be asked
(by the report, by ``lnrecency verify``) without importing torch. The experiment itself is
:mod:`lnrecency.experiments.studies.thesis`.

Cache: one JSON file per run under ``$LNRECENCY_CACHE`` (default ``~/.cache/lnrecency``), keyed by a hash of the
whole experiment's settings (the matched-loss stage depends on the other runs of the architecture), the run,
its decoder and training configuration, and the installed torch version (read from the package metadata).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import numpy as np

from lnrecency.experiments import run_cache
from lnrecency.experiments.decoders.decoder_config import DecoderConfig, TrainSettings
from lnrecency.runtime.arguments import check_int

__all__ = ["ThesisSettings", "ThesisResults", "ARCHS", "NORMS", "STAGES", "VARIANTS", "VERSION", "LEVEL",
           "LEARN_MARGIN", "cache_path", "is_cached", "matched_stage"]

VERSION = "thesis-4"  # 3: the random variant is the neutral control; the BOS response beside it; 4: slopes by
#                        row region (the two copies) and without BOS
#: the keys every cached thesis run has
RUN_KEYS = ("arch", "norm", "seed", "log", "init", "final", "trajectory", "induction_score",
            "stopped")  # bump when the experiment's definition changes (invalidates the cache)
ARCHS = {"attn2": dict(n_layers=2, mlp=False), "attn4": dict(n_layers=4, mlp=False),
         "mlp2": dict(n_layers=2, mlp=True)}
NORMS = ("layernorm", "rmsnorm", "none")
#: stages of a run: initialisation, 1/4 and 1/2 of its training length, the end, and matched held-out loss
STAGES = ("init", "quarter", "half", "final", "matched")
#: the probe's input variants, BOS first in each (its key out of slopes and RP): the training distribution, the
#: neutral random control (content tokens only; the stability check compares these two), and the BOS-response
#: diagnostic (BOS scattered in mid-sequence: reported on its own, never a control or a stability check)
VARIANTS = ("task", "random", "bos-response")
LEVEL = 0.95  # t-intervals over training seeds
PROBE_SEED = 12345  # the root of the per-run probe seeds
#: the learning gate: a run has learned when its final held-out loss is at least this many nats below the
#: entropy of the targets without context (ln(V - 2) for the induction task): the model puts, on average,
#: e times the unigram probability on the right token, so it uses the context
LEARN_MARGIN = 1.0


@dataclass(frozen=True)
class ThesisSettings:
    """The thesis experiment's design. ``steps`` is the cap of the convergence rule: training stops at the
    first evaluation t >= ``min_steps`` where the held-out loss improved by less than ``converge`` (relative)
    over the last 20% of steps (lnrecency.experiments.decoders.train.converged)."""

    archs: tuple = ("attn2", "attn4", "mlp2")
    norms: tuple = NORMS
    seeds: tuple = (0, 1, 2, 3, 4)
    steps: int = 5000
    min_steps: int = 1000
    converge: float = 0.01
    d_model: int = 64
    n_heads: int = 4
    vocab: int = 64
    n: int = 32
    probe_sequences: int = 256
    trajectory_sequences: int = 128
    eval_every: int = 100

    def __post_init__(self) -> None:
        for a in self.archs:
            if a not in ARCHS:
                raise ValueError(f"archs must be among {sorted(ARCHS)}; got {a!r}")
        for m in self.norms:
            if m not in NORMS:
                raise ValueError(f"norms must be among {NORMS}; got {m!r}")
        if len(set(self.seeds)) < 3:
            raise ValueError(f"a trained-model verdict needs at least 3 training seeds; got {self.seeds!r}")
        check_int("steps", self.steps, minimum=1, maximum=10**6)
        check_int("min_steps", self.min_steps, minimum=0, maximum=self.steps)

    @classmethod
    def preset(cls, quick: bool) -> "ThesisSettings":
        """Default: 45 models (3 architectures x 3 normalisations x 5 seeds), the convergence rule with a cap
        of 5000 steps (about 15 min on 2 cores); quick: the 2-layer attention-only models, 3 seeds, at most
        400 steps (a smoke test: its verdicts are never decisive)."""
        if quick:
            return cls(archs=("attn2",), seeds=(0, 1, 2), steps=400, min_steps=200, eval_every=50,
                       probe_sequences=128, trajectory_sequences=64)
        return cls()

    @property
    def quick(self) -> bool:
        return self == ThesisSettings.preset(True)

    def decoder(self, arch: str, norm: str) -> DecoderConfig:
        return DecoderConfig(vocab=self.vocab, d_model=self.d_model, n_heads=self.n_heads, context=self.n,
                             norm=norm, placement="pre", positions="none", residual=True, **ARCHS[arch])

    def training(self, seed: int) -> TrainSettings:
        return TrainSettings(task="induction", steps=self.steps, seed=seed, n=self.n, eval_every=self.eval_every,
                             converge=self.converge, min_steps=self.min_steps)

    def probe_seed(self, arch: str, norm: str, seed: int) -> int:
        """The seed of one run's probe sequences: independent across runs, so every interval over training
        seeds carries probe noise."""
        key = [PROBE_SEED, sorted(ARCHS).index(arch), NORMS.index(norm), int(seed)]
        return int(np.random.SeedSequence(key).generate_state(1, np.uint64)[0] >> 1)

    def probing(self, arch: str, norm: str, seed: int, tokens: str = "task", light: bool = False):
        """The probe's settings of one run (lnrecency.experiments.probes.probe.ProbeSettings; imported here: it needs
        torch)."""
        from lnrecency.experiments.probes.probe import ProbeSettings

        return ProbeSettings(n=self.n, sequences=self.trajectory_sequences if light else self.probe_sequences,
                             seed=self.probe_seed(arch, norm, seed), tokens=tokens)

    def entropy(self) -> float:
        """The targets' entropy without context (nats)."""
        from lnrecency.experiments.decoders.tasks import target_entropy

        return target_entropy("induction", self.n, self.vocab)

    def gate(self) -> float:
        """The held-out loss a run must reach to count as learned."""
        return self.entropy() - LEARN_MARGIN




def torch_version() -> str | None:
    """The installed torch version from the package metadata (no import); None without torch."""
    try:
        return version("torch")
    except PackageNotFoundError:
        return None


def probe_fields(st: ThesisSettings, arch: str, norm: str, seed: int) -> dict:
    """The fields of ``st.probing(arch, norm, seed)`` written out without importing torch
    (tests/experiments/test_thesis.py
    checks that they equal ``dataclasses.asdict(st.probing(...))``): part of the cache key."""
    return {"n": st.n, "sequences": st.probe_sequences, "seed": st.probe_seed(arch, norm, seed), "tokens": "task",
            "rate": 1e-3, "chunk": 64}


def cache_path(st: ThesisSettings, arch: str, norm: str, seed: int) -> Path:
    """A run's cache file: keyed by the whole experiment's settings (the matched-loss stage depends on the
    other runs of the architecture), the run, the decoder and training configuration and torch's version."""
    key = run_cache.key(VERSION, asdict(st), arch, norm, seed, st.decoder(arch, norm), asdict(st.training(seed)),
                      probe_fields(st, arch, norm, seed), torch_version())
    return run_cache.entry("runs", f"{key}.json")


#: a probed layer and a run, as the cache holds them (lnrecency.files.shapes)
LAYER_SHAPE = {"layer": int, "slope": float}
RUN_SHAPE = {"arch": str, "norm": str, "seed": int, "log": list, "trajectory": list,
             "init": {"layers": [LAYER_SHAPE]}, "final": {"layers": [LAYER_SHAPE]}}


def run_check(arch: str, norm: str, seed: int):
    """The check of a cached run filed under (arch, norm, seed): the record says the same."""
    def check(rec: dict) -> None:
        said = (rec["arch"], rec["norm"], rec["seed"])
        if said != (arch, norm, seed):
            raise ValueError(f"it is filed as arch {arch}, norm {norm}, seed {seed} but holds {said[0]!r:.20}, "
                             f"{said[1]!r:.20}, seed {said[2]!r:.20}")
    return check


def read_run(settings: ThesisSettings, arch: str, norm: str, seed: int) -> dict | None:
    """A cached run, validated (run_cache.read with :data:`RUN_SHAPE` and :func:`run_check`); None when absent."""
    return run_cache.read(cache_path(settings, arch, norm, seed), RUN_KEYS, shape=RUN_SHAPE,
                          check=run_check(arch, norm, seed))


def is_cached(settings: ThesisSettings) -> bool:
    """Whether every run of ``settings`` is in the cache, complete (then :func:`run_thesis` trains nothing)."""
    for arch in settings.archs:
        for norm in settings.norms:
            for seed in settings.seeds:
                if read_run(settings, arch, norm, seed) is None:
                    return False
    return True


def _at(traj: list, step: float) -> dict:
    """The trajectory entry nearest to ``step``."""
    return min(traj, key=lambda e: (abs(e["step"] - step), e["step"]))


def matched_stage(runs: list, gate: float | None = None) -> dict:
    """Per run (keyed by (norm, seed)), the light probe at the held-out loss every learned run of the
    architecture reached: the largest final held-out loss among the runs whose final loss passes ``gate``
    (all runs when none does or ``gate`` is None), linearly interpolated between the two evaluations that
    bracket it: weight w = (L_a - target) / (L_a - L_b) on the later one. Returns the interpolated records
    with the step (fractional), the loss reached, the bracket and ``reached`` (False for a run that never
    got down to the target: its record is its last evaluation)."""
    finals = [r["log"][-1]["heldout_loss"] for r in runs]
    good = [f for f in finals if gate is None or f <= gate]
    target = max(good or finals)
    out = {}
    for r in runs:
        traj = r["trajectory"]
        b = next((q for q, e in enumerate(traj) if e["heldout_loss"] <= target + 1e-12), None)
        reached = b is not None
        b = len(traj) - 1 if b is None else b
        a = max(b - 1, 0)
        la, lb = traj[a]["heldout_loss"], traj[b]["heldout_loss"]
        w = 1.0 if a == b or la == lb or not reached else (la - target) / (la - lb)
        rec = {"step": (1 - w) * traj[a]["step"] + w * traj[b]["step"], "target_loss": target,
               "heldout_loss": (1 - w) * la + w * lb, "reached": reached,
               "bracket": [[traj[a]["step"], la], [traj[b]["step"], lb]]}
        for v in (v for v in VARIANTS if v in traj[a] and v in traj[b]):  # the variants the run recorded
            rec[v] = {"layers": [{key: (1 - w) * x[key] + w * y[key] for key in ("slope", "slope_se", "rp")}
                                 for x, y in zip(traj[a][v], traj[b][v])]}
        out[(r["norm"], r["seed"])] = rec
    return out


@dataclass
class ThesisResults:
    """Every run of a thesis experiment (one dict per (arch, norm, seed)), read by the claims and the report
    without torch. Stages: ``init`` and ``final`` (full probes, both variants), ``quarter`` and ``half`` (the
    light probe at the evaluation nearest to 1/4 and 1/2 of the run's own length), ``matched``
    (:func:`matched_stage`)."""

    settings: ThesisSettings
    runs: list = field(default_factory=list)  # one dict per (arch, norm, seed)

    def __post_init__(self) -> None:
        self._matched = {}

    def select(self, arch: str, norm: str) -> list:
        return [r for r in self.runs if r["arch"] == arch and r["norm"] == norm]

    def stage(self, run: dict, stage: str, tokens: str = "task") -> dict:
        """A run's record at ``stage`` for probe variant ``tokens``: {"layers": [{"slope", "slope_se", ...}]}."""
        if stage in ("init", "final"):
            return run[stage] if tokens == "task" else run[stage][tokens]
        if stage == "matched":
            arch = run["arch"]
            if arch not in self._matched:
                self._matched[arch] = matched_stage([r for r in self.runs if r["arch"] == arch],
                                                    self.settings.gate())
            return self._matched[arch][(run["norm"], run["seed"])][tokens]
        frac = {"quarter": 0.25, "half": 0.5}[stage]
        return {"layers": _at(run["trajectory"], frac * run["log"][-1]["step"])[tokens]}

    def matched(self, run: dict) -> dict:
        self.stage(run, "matched")
        return self._matched[run["arch"]][(run["norm"], run["seed"])]

    def stage_step(self, run: dict, stage: str) -> float:
        if stage == "init":
            return 0
        if stage == "final":
            return run["log"][-1]["step"]
        if stage == "matched":
            return self.matched(run)["step"]
        return _at(run["trajectory"], {"quarter": 0.25, "half": 0.5}[stage] * run["log"][-1]["step"])["step"]

    def slopes(self, arch: str, norm: str, stage: str, layer: int, tokens: str = "task") -> list:
        return [self.stage(r, stage, tokens)["layers"][layer - 1]["slope"] for r in self.select(arch, norm)]

    def values(self, arch: str, norm: str, stage: str, layer: int, key: str, tokens: str = "task") -> list:
        return [self.stage(r, stage, tokens)["layers"][layer - 1][key] for r in self.select(arch, norm)]

    def phases(self, arch: str, norm: str, stage: str, layer: int) -> dict:
        out: dict = {}
        for r in self.select(arch, norm):
            ph = self.stage(r, stage)["layers"][layer - 1].get("phase", "n/a")
            out[ph] = out.get(ph, 0) + 1
        return out

    def learned(self, run: dict) -> bool:
        """The learning gate: final held-out loss <= the targets' entropy - LEARN_MARGIN."""
        return run["log"][-1]["heldout_loss"] <= self.settings.gate()

    def n_layers(self, arch: str) -> int:
        return ARCHS[arch]["n_layers"]

    def to_json(self) -> dict:
        return {"version": VERSION, "settings": asdict(self.settings), "runs": self.runs}
