"""What C6 shows in the report and the notebooks: tables, figures and notebook cells (the claim:
:mod:`lnrecency.claims.parameter_free.c6_deeper_layers`)."""
from __future__ import annotations

from lnrecency.claims.parameter_free.c6_deeper_layers import ID
from lnrecency.experiments.profiler import LABELS
from lnrecency.experiments.sweep import phase_figure, phase_table
from lnrecency.files.figure_record import ReportFigure
from lnrecency.files.table_record import Table
from lnrecency.report.views.outputs import FigureOutput, TableOutput, views
from lnrecency.report.views.shared import LN, model_config, score_table, verdict_note

PROFILE_CONFIGS = [
    ("none, no residual", model_config(norm="none")), ("none, residual", model_config(norm="none", residual=True)),
    ("LayerNorm, no residual", LN), ("LayerNorm, residual", model_config(norm="layernorm", residual=True)),
    ("LayerNorm, residual, alpha=0.5", model_config(norm="layernorm", residual=True, alpha=0.5)),
    ("LayerNorm, lam=8, no residual", model_config(norm="layernorm", lam=8.0)),
]


PROFILE_N = 32


def _ranges(values: list[int]) -> str:
    """[3, 4, 5, 9] -> '3-5, 9'."""
    out: list[str] = []
    for v in values:
        if out and int(out[-1].split("-")[-1]) == v - 1:
            out[-1] = f"{out[-1].split('-')[0]}-{v}"
        else:
            out.append(str(v))
    return ", ".join(out)


def profile_table(data) -> Table:
    """Definition 1, row by row, for layers 1-L and several settings
    (:func:`lnrecency.experiments.profiler.bias_profile`)."""
    rows = []
    for label, c in PROFILE_CONFIGS:
        for layer in range(1, data.settings.layers + 1):
            prof = data.bias_profile(layer, PROFILE_N, c)
            counts = prof.summary()
            other = [r.i for r in prof.rows if r.bias not in ("recency", "trivial")]
            rows.append([label, layer, PROFILE_N, *[counts.get(k, 0) for k in LABELS[:5]], _ranges(other)])
    caption = (f"Definition 1 applied to every row i = 1..{PROFILE_N} of each layer in the exact limit "
               f"(lnrecency bias --method limit): the number of rows with recency, earlier-token bias, flat "
               f"scores, a mixed pattern, or too few keys to tell (trivial), and the rows that are not "
               f"recency. lam = 1 and gamma = 1 unless stated.")
    return Table("bias_profiles", "Bias profile by layer (Definition 1, exact limit)", caption,
                 ["setting", "layer", "n", *LABELS[:5], "rows not recency"], rows,
                 verdict_note(data, "C2", "C6"))


def phase_table_of(data) -> Table:
    """The phase diagram's table (lnrecency.experiments.sweep)."""
    return phase_table(*data.phase())


def phase_figures(data) -> list[ReportFigure]:
    """The phase diagram (lnrecency.experiments.sweep)."""
    return [phase_figure(*data.phase())]


def c6_scores(data) -> Table:
    """The verdict's Monte Carlo means (layer 3, LayerNorm) against limit + c/d at each width."""
    return score_table(data, ID, "Deeper layers with LayerNorm (the verdict's Monte Carlo, layer 3)")


views(ID, module=__name__,
      tables=(TableOutput("c6_scores", "deeper layers with LayerNorm: the verdict's Monte Carlo means (layer 3) "
                                        "against limit + c/d at each width", c6_scores),
               TableOutput("bias_profiles", "Definition 1 row by row, layers 1-4, n = 32, several settings (exact "
                                            "limit)", profile_table),
               TableOutput("phase_diagram", "where recency / earlier / mixed hold per layer 2-8 and sequence length "
                                            "(exact)", phase_table_of)),
      figures=(FigureOutput("phase diagram: where recency / earlier-token bias / mixed rows hold, layers 2-8",
                             phase_figures, ("phase_diagram",)),),
      notebook="04_deeper_layers_and_finite_width",
      cells=(c6_scores,
              "Definition 1 row by row (exact limit, n = 32): which rows of which layers have recency, earlier-token "
              "bias, flat or mixed scores.", profile_table))
