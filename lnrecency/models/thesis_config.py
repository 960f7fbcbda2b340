"""The thesis experiment's settings and its cache, without torch: whether results are cached can be asked
(by the report, by ``lnrecency verify``) without importing torch. The experiment itself is
:mod:`lnrecency.models.thesis`.

Cache: one JSON file per run under ``$LNRECENCY_CACHE`` (default ``~/.cache/lnrecency``), keyed by a hash of the
whole experiment's settings (the matched-loss stage depends on the other runs of the architecture), the run,
its decoder and training configuration, and the installed torch version (read from the package metadata).
"""
from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from lnrecency.config import check_int
from lnrecency.models.config import DecoderConfig, TrainSettings, config_hash

__all__ = ["ThesisSettings", "ThesisResults", "ARCHS", "NORMS", "STAGES", "VERSION", "LEVEL", "cache_dir", "cache_path", "is_cached"]

VERSION = "thesis-1"  # bump when the experiment's definition changes (invalidates the cache)
ARCHS = {"attn2": dict(n_layers=2, mlp=False), "attn4": dict(n_layers=4, mlp=False),
         "mlp2": dict(n_layers=2, mlp=True)}
NORMS = ("layernorm", "rmsnorm", "none")
STAGES = ("init", "matched", "final")
LEVEL = 0.95  # t-intervals over training seeds
PROBE_SEED = 12345  # the probe sequences every run is probed on


@dataclass(frozen=True)
class ThesisSettings:
    archs: tuple = ("attn2", "attn4", "mlp2")
    norms: tuple = NORMS
    seeds: tuple = (0, 1, 2)
    steps: int = 1200
    d_model: int = 64
    n_heads: int = 4
    vocab: int = 64
    n: int = 32
    probe_sequences: int = 256
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

    @classmethod
    def preset(cls, quick: bool) -> "ThesisSettings":
        """Default: 27 models (about 11 min on 2 cores); quick: the 2-layer attention-only models, 300 steps."""
        return cls(archs=("attn2",), steps=300, eval_every=50, probe_sequences=128) if quick else cls()

    def decoder(self, arch: str, norm: str) -> DecoderConfig:
        return DecoderConfig(vocab=self.vocab, d_model=self.d_model, n_heads=self.n_heads, context=self.n,
                             norm=norm, placement="pre", positions="none", residual=True, **ARCHS[arch])

    def training(self, seed: int) -> TrainSettings:
        return TrainSettings(task="induction", steps=self.steps, seed=seed, n=self.n, eval_every=self.eval_every)

    def probing(self):
        """The probe's settings (lnrecency.models.probe.ProbeSettings; imported here: it needs torch)."""
        from lnrecency.models.probe import ProbeSettings

        return ProbeSettings(n=self.n, sequences=self.probe_sequences, seed=PROBE_SEED)


def cache_dir() -> Path:
    return Path(os.environ.get("LNRECENCY_CACHE") or Path.home() / ".cache" / "lnrecency")


def torch_version() -> str | None:
    """The installed torch version from the package metadata (no import); None without torch."""
    try:
        return version("torch")
    except PackageNotFoundError:
        return None


def probe_fields(st: ThesisSettings) -> dict:
    """The fields of ``st.probing()`` written out without importing torch (tests/test_thesis.py checks that they
    equal ``dataclasses.asdict(st.probing())``)."""
    return {"n": st.n, "sequences": st.probe_sequences, "seed": PROBE_SEED, "tokens": "random", "rate": 1e-3,
            "chunk": 64}


def cache_path(st: ThesisSettings, arch: str, norm: str, seed: int) -> Path:
    """A run's cache file: keyed by the whole experiment's settings (the matched-loss stage depends on the
    other runs of the architecture), the run, the decoder and training configuration and torch's version."""
    key = config_hash(VERSION, asdict(st), arch, norm, seed, st.decoder(arch, norm), asdict(st.training(seed)),
                      torch_version())
    return cache_dir() / "runs" / f"{key}.json"


def is_cached(settings: ThesisSettings) -> bool:
    """Whether every run of ``settings`` is in the cache, complete (then :func:`run_thesis` trains nothing)."""
    for arch in settings.archs:
        for norm in settings.norms:
            for seed in settings.seeds:
                path = cache_path(settings, arch, norm, seed)
                try:
                    if "matched" not in json.loads(path.read_text()):
                        return False
                except (OSError, ValueError):
                    return False
    return True


@dataclass
class ThesisResults:
    """Every run of a thesis experiment (one dict per (arch, norm, seed)), read by the claims and the report
    without torch."""

    settings: ThesisSettings
    runs: list = field(default_factory=list)  # one dict per (arch, norm, seed)

    def select(self, arch: str, norm: str) -> list:
        return [r for r in self.runs if r["arch"] == arch and r["norm"] == norm]

    def slopes(self, arch: str, norm: str, stage: str, layer: int) -> list:
        return [r[stage]["layers"][layer - 1]["slope"] for r in self.select(arch, norm)]

    def phases(self, arch: str, norm: str, stage: str, layer: int) -> dict:
        out: dict = {}
        for r in self.select(arch, norm):
            ph = r[stage]["layers"][layer - 1]["phase"]
            out[ph] = out.get(ph, 0) + 1
        return out

    def n_layers(self, arch: str) -> int:
        return ARCHS[arch]["n_layers"]

    def to_json(self) -> dict:
        return {"version": VERSION, "settings": asdict(self.settings), "runs": self.runs}
