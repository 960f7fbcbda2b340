"""The numbers behind a report, computed once and cached: exact limits, Monte Carlo runs, verdicts.

Every table and figure of :mod:`lnrecency.report` reads its numbers from a :class:`ReportData`, which
only calls the library: :func:`theory.limit.limit_trajectory` (exact d -> infinity limit),
:func:`theory.closed_forms.evaluate` (sympy closed forms), :func:`numerics.simulate_scores` (finite-d
Monte Carlo, d-independent "gram" sampler) and :func:`lnrecency.claims.registry.evaluate` (verdicts).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from lnrecency.claims.registry import evaluate as evaluate_claims
from lnrecency.claims.trained.s2_s3_seed_experiments import available
from lnrecency.claims.trained.tm1_tm5_trained_decoders import cached_results
from lnrecency.experiments.authors.panels import run_panels
from lnrecency.experiments.profiler import bias_profile
from lnrecency.experiments.sweep import REPORT_GRID, sweep
from lnrecency.inference.verdicts import ClaimResult
from lnrecency.model.config import ModelConfig
from lnrecency.numerics import simulate_scores
from lnrecency.numerics.convergence import convergence_in_d
from lnrecency.report.settings import ReportSettings, derived_seed
from lnrecency.theory.closed_forms import evaluate as evaluate_closed_form
from lnrecency.theory.finite_width import finite_width
from lnrecency.theory.limit import LimitTrajectory, limit_trajectory

__all__ = ["ReportData", "ReportEvidence", "EvidenceMissing", "closed_form"]


def _hashable(x: Any) -> Any:
    return tuple(np.asarray(x).ravel().tolist()) if isinstance(x, np.ndarray) else x


def closed_form(quantity: str, cfg: ModelConfig, i: Any, j: Any = 1) -> Any:
    """The sympy-derived closed form of ``quantity`` ("score", "h", "g", ...) evaluated in float64."""
    return evaluate_closed_form(quantity, i, j, config=cfg)


@dataclass(frozen=True)
class ReportEvidence:
    """Everything a report's tables and figures read, as stored by ``lnrecency verify --out DIR``
    (:mod:`lnrecency.files.store`): the verdicts with their typed evidence and every run, limit, theory and
    closed-form value the tables and figures use."""

    settings: ReportSettings
    verdicts: tuple
    limits: dict
    sims: dict
    closed: dict
    #: the cache entries the verdicts rested on (lnrecency.experiments.run_cache.reads); None: not recorded
    provenance: tuple | None = None
    #: the cache folder the run read (lnrecency.experiments.run_cache.cache_label); None: not recorded
    cache: str | None = None


class EvidenceMissing(ValueError):
    """A report rendered from stored evidence asked for a number the evidence does not hold."""


class ReportData:
    """Cached library results for one :class:`ReportSettings` (limits, simulations, verdicts).

    Frozen (:meth:`from_evidence`): every number comes from the stored evidence; asking for one it does
    not hold raises :class:`EvidenceMissing` instead of computing it."""

    def __init__(self, settings: ReportSettings):
        self.settings = settings
        self._limits: dict[tuple, LimitTrajectory] = {}
        self._sims: dict[tuple, Any] = {}
        self._closed: dict[tuple, Any] = {}
        self._verdicts: dict[str, list[ClaimResult]] = {}
        self._all_verdicts = False
        self.frozen = False
        self.provenance: tuple | None = None  # what the report read from the cache (set when it is built)
        self.cache: str | None = None  # the cache folder it read (set when it is built)

    def _missing(self, what: str):
        raise EvidenceMissing(f"--from: the stored evidence does not hold {what}; write it with the same "
                              f"settings (lnrecency verify{' --quick' if self.settings.quick else ''} --out DIR)")

    def evidence(self) -> ReportEvidence:
        """The evidence of everything computed so far (all verdicts must have been evaluated)."""
        if not self._all_verdicts:
            raise ValueError("evidence() needs every verdict: call verdicts() or set_verdicts() first")
        results = tuple(r for rs in self._verdicts.values() for r in rs)
        return ReportEvidence(self.settings, results, dict(self._limits), dict(self._sims), dict(self._closed),
                              self.provenance, self.cache)

    @classmethod
    def from_evidence(cls, ev: ReportEvidence) -> "ReportData":
        data = cls(ev.settings)
        data._limits, data._sims, data._closed = dict(ev.limits), dict(ev.sims), dict(ev.closed)
        data.set_verdicts(list(ev.verdicts))
        data.provenance, data.cache = ev.provenance, ev.cache
        data.frozen = True
        return data

    def closed_form(self, quantity: str, cfg: ModelConfig, i: Any, j: Any = 1) -> Any:
        """:func:`closed_form`, cached (arrays of positions are keyed by their values)."""
        key = (quantity, cfg, _hashable(i), _hashable(j))
        if key not in self._closed:
            if self.frozen:
                self._missing(f"the closed form {quantity} at {cfg.label()}")
            self._closed[key] = closed_form(quantity, cfg, i, j)
        return self._closed[key]

    def bias_profile(self, layer: int, n: int, cfg: ModelConfig):
        """:func:`lnrecency.experiments.profiler.bias_profile` of the exact limit, cached."""
        key = ("bias", layer, n, cfg)
        if key not in self._limits:
            if self.frozen:
                self._missing(f"the bias profile of layer {layer} at {cfg.label()}")
            self._limits[key] = bias_profile(layer, n, config=cfg, method="limit")
        return self._limits[key]

    # --- exact limit -------------------------------------------------------------------------------
    def limit(self, cfg: ModelConfig, n: int | None = None, layers: int | None = None) -> LimitTrajectory:
        n = self.settings.n if n is None else n
        layers = self.settings.layers if layers is None else layers
        key = (cfg, n, layers)
        if key not in self._limits:
            if self.frozen:
                self._missing(f"the limit at {cfg.label()}, n={n}, layers={layers}")
            self._limits[key] = limit_trajectory(n, layers, config=cfg)
        return self._limits[key]

    def authors(self) -> tuple:
        """The authors' figure of the report's convention (v2: Figure 1; v1: its LayerNorm figure),
        simulated in their convention: (figures, runs) of lnrecency.experiments.authors.reproduce.run_panels, cached."""
        if "authors" not in self._sims:
            if self.frozen:
                self._missing("the authors' figure")

            s = self.settings
            v1 = s.convention == "authors-v1"
            self._sims["authors"] = run_panels("v1-layernorm" if v1 else "1",
                                               samples=s.authors_samples // (10 if v1 else 1),
                                               seed=derived_seed(s.seed, "authors", s.convention),
                                               progress=False, convention=s.convention)
        return self._sims["authors"]

    def phase(self) -> tuple:
        """(rows, grid) of the phase diagram, layers 2..8 (lnrecency.experiments.sweep, in this process), cached."""
        if "phase" not in self._sims:
            if self.frozen:
                self._missing("the phase diagram")

            grid = REPORT_GRID.__class__(**{**REPORT_GRID.__dict__, "n_max": self.settings.phase_n_max})
            self._sims["phase"] = (sweep(grid, scheduler="none", progress=False), grid)
        return self._sims["phase"]

    def limit_scores(self, cfg: ModelConfig) -> np.ndarray:
        return self.limit(cfg).scores

    def finite_width(self, cfg: ModelConfig, n: int | None = None, layers: int | None = None):
        """The first-order finite-width theory (lnrecency.theory.finite_width), cached."""

        n = self.settings.n if n is None else n
        layers = self.settings.layers if layers is None else layers
        key = ("fw", cfg, n, layers)
        if key not in self._limits:
            if self.frozen:
                self._missing(f"the finite-width theory at {cfg.label()}")
            self._limits[key] = finite_width(n, layers, config=cfg)
        return self._limits[key]

    # --- Monte Carlo -------------------------------------------------------------------------------
    def sim(self, cfg: ModelConfig, d: int, *, n: int | None = None, layers: int | None = None,
            samples: int | None = None, paired: bool = True):
        """:func:`numerics.simulate_scores` (method "gram"), seeded by the run's description.

        Defaults: ``settings.n``, ``settings.layers``, ``settings.samples``; paired accumulators on.
        """
        s = self.settings
        n = s.n if n is None else n
        layers = s.layers if layers is None else layers
        samples = s.samples if samples is None else samples
        key = (cfg, d, n, layers, samples, paired)
        if key not in self._sims:
            if self.frozen:
                self._missing(f"the simulation at {cfg.label()}, d={d}")
            seed = derived_seed(s.seed, "sim", cfg.as_dict(), d, n, layers, samples, paired)
            self._sims[key] = simulate_scores(n, layers, d, samples, seed=seed, method="gram",
                                              config=cfg, paired=paired, progress=False)
        return self._sims[key]

    def convergence(self, cfg: ModelConfig):
        """:func:`numerics.convergence.convergence_in_d` over ``settings.conv_ds`` (layers 1-2, cached)."""
        s = self.settings
        key = ("convergence", cfg)
        if key not in self._sims:
            if self.frozen:
                self._missing(f"the convergence runs at {cfg.label()}")
            seed = derived_seed(s.seed, "convergence", cfg.as_dict(), s.conv_n, s.conv_ds, s.conv_samples)
            self._sims[key] = convergence_in_d(s.conv_n, 2, list(s.conv_ds), s.conv_samples, seed=seed,
                                               config=cfg, method="gram", progress=False)
        return self._sims[key]

    # --- verdicts ----------------------------------------------------------------------------------
    def verdicts(self, ids: list[str] | None = None) -> dict[str, list[ClaimResult]]:
        """Claim verdicts of ``lnrecency verify`` (quick settings when the report is quick), by id.

        ``ids=None`` evaluates every claim (once); otherwise only the ids not evaluated yet. Several
        results may share an id (a claim reported per setting); they are kept in order.
        """
        if ids is None:
            if not self._all_verdicts:
                self._verdicts = {}
                for r in evaluate_claims(quick=self.settings.quick, progress=False):
                    self._verdicts.setdefault(r.id, []).append(r)
                self._all_verdicts = True
            return self._verdicts
        missing = [cid for cid in ids if cid not in self._verdicts and not self._all_verdicts]
        if missing:
            for r in evaluate_claims(missing, quick=self.settings.quick, progress=False):
                self._verdicts.setdefault(r.id, []).append(r)
            for cid in missing:
                self._verdicts.setdefault(cid, [])
        return {cid: self._verdicts.get(cid, []) for cid in ids}

    def set_verdicts(self, results: list[ClaimResult]) -> None:
        """Use ``results`` (every claim, e.g. evaluated in another process or read from stored evidence) as this
        report's verdicts, each labelled by whose statement it decides (lnrecency.claims.registry.labelled)."""
        from lnrecency.claims.registry import labelled

        self._verdicts = {}
        for r in labelled(list(results)):
            self._verdicts.setdefault(r.id, []).append(r)
        self._all_verdicts = True

    def seed_runs(self, experiment: str):
        """(settings, runs) of a seed experiment ("seed002" / "seed003") of this report's mode from the cache,
        or None when it has not been run (the report never trains: `lnrecency experiments ...` does)."""
        if experiment not in self._sims:
            if self.frozen:
                return None  # not part of the stored evidence: the section says "not run"
            value = None
            if available(experiment, self.settings.quick):
                from lnrecency.experiments.studies.seeds import run_experiment
                from lnrecency.experiments.studies.seeds_config import EXPERIMENTS
                st = EXPERIMENTS[experiment].preset(self.settings.quick)
                value = (st, run_experiment(experiment, st))
            self._sims[experiment] = value
        return self._sims[experiment]

    def thesis(self):
        """The trained-decoder experiment (lnrecency.experiments.studies.thesis) of this report's mode from the cache,
        or
        None when it has not been run (the report never trains: `lnrecency experiments thesis` does)."""
        if "thesis" not in self._sims:
            if self.frozen:
                return None
            self._sims["thesis"] = cached_results(self.settings.quick)
        return self._sims["thesis"]

    def results(self, claim_id: str) -> list[ClaimResult]:
        return self.verdicts([claim_id])[claim_id]
