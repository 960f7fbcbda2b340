"""The Monte Carlo runs behind the authors' panels, one per (row, d), seeded per run."""
from __future__ import annotations

import itertools
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from tqdm import tqdm

from lnrecency.choices import DEFAULT_SAMPLES
from lnrecency.experiments.authors.catalogue import (
    FIGURES,
    LAYERS,
    HeatmapFigure,
    Row,
    figures_of,
    panel_config,
    run_seed,
)
from lnrecency.experiments.authors.theory_columns import rp_edgeworth, rp_first_order, rp_limit
from lnrecency.model.authors_presets import CONVENTIONS
from lnrecency.numerics import simulate_scores
from lnrecency.runtime.arguments import check_choice, check_int
from lnrecency.theory.finite_width import finite_width
from lnrecency.theory.limit import limit_scores

if TYPE_CHECKING:
    from lnrecency.numerics.simulate import ScoreSimulation
    from lnrecency.theory.finite_width import FiniteWidth


@dataclass(frozen=True)
class Panel:
    """One panel of an authors' figure: its setting, the recency probability RP measured (mean +- SE over
    draws) and predicted (the limit, first order, one-term Edgeworth; NaN where the theory does not apply),
    and z = (MC - first order) / SE."""

    alpha: float
    layernorm: bool
    residual: bool
    d: int
    layer: int
    rp: float
    rp_stderr: float
    rp_limit: float
    rp_first_order: float
    first_order_error_z: float
    rp_edgeworth: float
    rp_edgeworth_z: float
    samples: int
    lam: float
    gamma: float | None


@dataclass
class Run:
    """One simulation of the authors' setting (row, d): all LAYERS layers, with the theory beside it."""

    row: Row
    d: int
    sim: ScoreSimulation
    limit: np.ndarray
    fw: FiniteWidth | None
    _panels: dict = field(default_factory=dict, repr=False)
    _fw_z: FiniteWidth | None = field(default=None, repr=False)

    @property
    def fw_z(self):
        """The theory on Fisher's z scale where a normalisation bounds the scores (else the scores': z = S)."""
        if self._fw_z is None and self.fw is not None:
            bounded = self.fw.config.normalisation.diagonal_score(self.fw.config.lam) is not None
            self._fw_z = finite_width(self.row.n, LAYERS, config=self.fw.config, scale="fisher") if bounded else self.fw
        return self._fw_z

    def panel(self, layer: int) -> Panel:
        if layer not in self._panels:
            self._panels[layer] = self._panel(layer)
        return self._panels[layer]

    def _panel(self, layer: int) -> dict:
        rp = self.sim.recency_probability(layer)
        # the first-order law needs the finite-width theory: authors-v2 only (v1's normalized embeddings
        # with LayerNorm are outside it, lnrecency.theory.finite_width.check_supported)
        first = rp_first_order(self.fw, layer, self.d) if self.fw is not None else float("nan")
        second = rp_edgeworth(self.fw, layer, self.d) if self.fw is not None else float("nan")
        second_z = rp_edgeworth(self.fw_z, layer, self.d) if self.fw is not None else float("nan")
        cfg = self.sim.config
        return Panel(alpha=self.row.alpha, layernorm=self.row.layernorm, residual=self.row.residual, d=self.d,
                     layer=layer, rp=rp.mean, rp_stderr=rp.stderr, rp_limit=rp_limit(self.limit, layer),
                     rp_first_order=first, first_order_error_z=rp.zscore(first), rp_edgeworth=second,
                     rp_edgeworth_z=second_z,
                     samples=rp.samples, lam=cfg.lam, gamma=cfg.gamma if cfg.residual else None)


def select_figures(figure: str, convention: str = "authors-v2") -> list:
    keys = figures_of(convention) if figure == "all" else [check_choice("figure", figure, tuple(FIGURES) + ("all",))]
    return [FIGURES[k] for k in keys]


def _runs_needed(figs: list) -> list[tuple[Row, int]]:
    out: dict = {}
    for f in figs:
        if isinstance(f, HeatmapFigure):
            for row, d in itertools.product(f.rows, f.dims):
                out[(row, d)] = None
    return list(out)


def run_panels(figure: str = "all", *, samples: int | None = None, seed: int = 0,
               progress: bool | None = None, convention: str = "authors-v2") -> tuple[list, dict]:
    """Simulate every (row, d) the selected figures need; return (figures, {(row, d): Run})."""

    check_choice("convention", convention, tuple(CONVENTIONS))
    samples = DEFAULT_SAMPLES[convention] if samples is None else check_int("samples", samples, minimum=2)
    seed = check_int("seed", seed, minimum=0)
    figs = select_figures(figure, convention)
    needed = _runs_needed(figs)
    show = sys.stderr.isatty() if progress is None else bool(progress)
    runs = {}
    for row, d in tqdm(needed, desc="reproduce", unit="run", disable=not show):
        cfg = panel_config(row, d)
        sim = simulate_scores(row.n, LAYERS, d, samples, seed=run_seed(seed, row, d), method="gram",
                              config=cfg, progress=False)
        fw = finite_width(row.n, LAYERS, config=cfg) if row.convention == "authors-v2" else None
        runs[(row, d)] = Run(row, d, sim, limit_scores(row.n, LAYERS, config=cfg), fw)
    return figs, runs
