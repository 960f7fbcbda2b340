"""Where each claim holds, in one notebook section (no verdict of its own): the authors' setting mapped onto our
model, the boundary of recency in the sequence length, the decision in alpha a grid cannot make, and the phase
diagram. The verdicts that rest on these decisions are C2, C4, C5 and C6."""
from __future__ import annotations

from lnrecency.model.authors_presets import convention_record
from lnrecency.model.config import ModelConfig
from lnrecency.report.views.outputs import section
from lnrecency.report.views.parameter_free.c4_anisotropy import authors_table
from lnrecency.report.views.parameter_free.c6_deeper_layers import phase_figures
from lnrecency.report.views.shared import show_figures
from lnrecency.theory.anisotropy import decide_alpha
from lnrecency.theory.boundary import boundary


def _convention_cell(data, display):
    display(convention_record("authors-v2", norm="layernorm", residual=True, alpha=0.5, d=16))


def _authors_cell(data, display):
    display(authors_table(data))


def _boundary_cell(data, display):
    display([b.to_json() for b in boundary(4, 400, norm="layernorm", residual=True, gamma=8.0, first_layer=3)])


def _alpha_cell(data, display):
    display(decide_alpha(64, ModelConfig(lam=1.0), "absolute").to_json())


def _phase_cell(data, display):
    show_figures(display, phase_figures(data)[0])


section("boundaries", "where each claim holds: the authors' setting, boundaries in n and alpha, phases",
        module=__name__, notebook="07_authors_simulations_and_boundaries",
        cells=(_convention_cell,
               "Figure 1 of the paper, panel by panel (the report's quick sample size; `lnrecency reproduce` runs "
               "every figure at 400 000 draws per setting):", _authors_cell,
               "Where recency holds in the sequence length (exact limit, first failing length = first failing row), "
               "for LayerNorm with a residual of weight 8 (the authors' simulation weight at d = 64):",
               _boundary_cell,
               "'Anisotropy can amplify it', absolute gap, no residual, lam = 1, n = 64: the sign of the derivative "
               "at alpha = 0 and the interval of alpha where the gap exceeds its alpha = 0 value (root finding):",
               _alpha_cell, _phase_cell))
