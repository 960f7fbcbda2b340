"""Sizes of one report run: ``quick`` (<= 30 s) and ``default`` (<= 3 min) on a 2-core machine."""
from __future__ import annotations

import zlib
from dataclasses import dataclass, replace

import numpy as np

from lnrecency.model.authors_presets import CONVENTIONS
from lnrecency.runtime.arguments import check_choice, check_int

__all__ = ["ReportSettings", "derived_seed"]

ALPHAS = (0.0, 0.2, 0.4, 0.6, 0.8)


@dataclass(frozen=True)
class ReportSettings:
    """Everything that sizes a report; every Monte Carlo run draws from :func:`derived_seed`.

    n:            sequence length of every score table and heatmap (row i = n is "the last row")
    layers:       layers simulated and drawn (1..4)
    ds:           widths d of the Monte Carlo columns (the first is the heatmaps' width)
    samples:      Monte Carlo samples per (setting, d)
    alphas:       anisotropy values of the heatmaps, the h(j) curves and the gap against alpha
    h_n:          length of the h(j) curves
    conv_n, conv_ds, conv_samples: sequence length, widths and samples per d of the convergence fit
    lengths:      sequence lengths of seed 003's variance curve
    convention:   the authors' convention of the "authors' simulation" section (lnrecency.model.authors_presets)
    authors_samples: draws per (row, d) of that section (authors-v1: a tenth, its S = 50 costs ~25x)
    phase_n_max:  longest sequence length of the phase diagram (layers 2..8, lnrecency.experiments.sweep)
    """

    quick: bool
    seed: int
    n: int
    layers: int
    ds: tuple[int, ...]
    samples: int
    alphas: tuple[float, ...]
    h_n: int
    conv_n: int
    conv_ds: tuple[int, ...]
    conv_samples: int
    lengths: tuple[int, ...]
    convention: str = "authors-v2"
    authors_samples: int = 100000
    phase_n_max: int = 200

    @classmethod
    def make(cls, *, quick: bool = False, seed: int = 0, convention: str = "authors-v2") -> "ReportSettings":

        seed = check_int("seed", seed, minimum=0)
        check_choice("convention", convention, tuple(CONVENTIONS))
        if quick:
            return cls(True, seed, n=6, layers=4, ds=(64, 1024), samples=1000, alphas=ALPHAS, h_n=16,
                       conv_n=6, conv_ds=(16, 32, 64, 128), conv_samples=20000, lengths=(1, 2, 4, 8, 16),
                       convention=convention, authors_samples=20000, phase_n_max=100)
        return cls(False, seed, n=12, layers=4, ds=(64, 256, 4096), samples=10000, alphas=ALPHAS,
                   h_n=50, conv_n=8, conv_ds=(16, 32, 64, 128, 256, 512), conv_samples=50000,
                   lengths=(1, 2, 4, 8, 16, 32, 64), convention=convention)

    def replace(self, **changes) -> "ReportSettings":
        return replace(self, **changes)

    @property
    def heat_d(self) -> int:
        return self.ds[0]

    @property
    def figure_formats(self) -> tuple[str, ...]:
        """The figures' file formats: PNG and PDF (for print); a quick report's small-settings figures, a preview
        never meant for print, PNG only (drawing the PDFs was about a ninth of a cold quick report's CPU time)."""
        return ("png",) if self.quick else ("png", "pdf")


def derived_seed(seed: int, *key: object) -> int:
    """A stable 63-bit seed for one Monte Carlo run, from the report seed and a description of the run."""
    tag = zlib.crc32(repr(key).encode("utf-8"))
    return int(np.random.SeedSequence([seed, tag]).generate_state(2, np.uint64)[0] >> np.uint64(1))
