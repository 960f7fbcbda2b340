"""The authors' figures as a catalogue: each figure's rows (settings), widths, layers and convention, and the
values they printed."""
from __future__ import annotations

import json as _json
from dataclasses import dataclass
from importlib.resources import files

from lnrecency.model.authors_presets import CONVENTIONS, preset

N = CONVENTIONS["authors-v2"].n  # the authors' S = 10 (the h(j) curves)


LAYERS = 4


@dataclass(frozen=True)
class Row:
    alpha: float
    layernorm: bool
    residual: bool
    convention: str = "authors-v2"
    ln_scaling: bool = False

    @property
    def n(self) -> int:
        return CONVENTIONS[self.convention].n

    @property
    def label(self) -> str:
        if self.convention == "authors-v1":
            norm = ("LN" + (", /E" if self.ln_scaling else ", /sqrt(E)")) if self.layernorm else "l2"
            return f"α={self.alpha:g}, {norm}, Res"
        return (f"α={self.alpha:g}, {'LN' if self.layernorm else 'noLN'}, "
                f"{'Res' if self.residual else 'noRes'}")


V2_ROWS = (Row(0.0, False, False), Row(0.0, True, False), Row(0.5, True, False), Row(0.5, True, True))


@dataclass(frozen=True)
class HeatmapFigure:
    key: str
    file: str
    rows: tuple
    dims: tuple
    layers: tuple


@dataclass(frozen=True)
class CurveFigure:
    key: str
    file: str
    residual: int
    d: int = 64


FIGURES = {f.key: f for f in (
    HeatmapFigure("1", "fig1_d16_d64_L1L2", V2_ROWS, (16, 64), (1, 2)),
    CurveFigure("2", "alpha", 0),
    HeatmapFigure("3", "simul_alpha", tuple(Row(a, True, False) for a in (0.2, 0.4, 0.6, 0.8)), (16,),
                  (1, 2, 3, 4)),
    HeatmapFigure("4", "simul_alpha_residual", tuple(Row(a, True, True) for a in (0.0, 0.2, 0.4, 0.6, 0.8)),
                  (16,), (1, 2, 3, 4)),
    CurveFigure("5", "alpha_resid", 1),
    HeatmapFigure("A1", "fig2_d256_d1024_L1L2", V2_ROWS, (256, 1024), (1, 2)),
    HeatmapFigure("A2", "fig3_d16_d64_L3L4", V2_ROWS, (16, 64), (3, 4)),
    HeatmapFigure("v1-l2norm", "l2norm", tuple(Row(a, False, True, "authors-v1") for a in (0.0, 0.2)), (64,),
                  (1, 2, 3, 4)),
    HeatmapFigure("v1-l2norm_alpha", "l2norm_alpha", tuple(Row(a, False, True, "authors-v1")
                                                           for a in (0.4, 0.6, 0.8)), (64,), (1, 2, 3, 4)),
    HeatmapFigure("v1-layernorm", "layernorm", tuple(Row(a, True, True, "authors-v1", sc) for sc in (False, True)
                                                     for a in (0.0, 0.2)), (64,), (1, 2, 3, 4)),
)}


def convention_of(figure: str) -> str:
    return "authors-v1" if figure.startswith("v1") else "authors-v2"


def figures_of(convention: str) -> tuple:
    """The figure keys of one convention ("all" selects these)."""
    return tuple(k for k in FIGURES if convention_of(k) == convention)


def panel_config(row: Row, d: int):
    return preset(row.convention, norm="layernorm" if row.layernorm else "none", residual=row.residual,
                  alpha=row.alpha, d=d, ln_scaling=row.ln_scaling)


PRINTED_DRAWS = 10 ** 7  # the authors' B in concept/simulation.ipynb


PRINTED_ROUNDING = 5e-5  # they print RP to 4 decimals


def printed_rp() -> dict:
    """{authors' file: [RP printed on each panel]} (lnrecency/data/authors_rp.json: the text "RP=..." of each
    panel of figures/*.pdf in starmpcc/layernorm_recency_bias, in the order the PDF draws them: row by row,
    columns d x layer, which is :func:`panel_table`'s order)."""

    return _json.loads(files("lnrecency").joinpath("data/authors_rp.json").read_text())["figures"]


def row_triples(n: int):
    return [(i, j, k) for i in range(3, n + 1) for k in range(2, i) for j in range(1, k)]


def run_seed(seed: int, row: Row, d: int) -> tuple[int, ...]:
    """A run's seed depends on the setting only, so a panel has the same numbers in every selection."""
    tag = () if row.convention == "authors-v2" else (1, int(row.ln_scaling))
    return (seed, int(round(100 * row.alpha)), int(row.layernorm), int(row.residual), d, *tag)
