"""What C2 shows in the report and the notebooks: tables, figures and notebook cells (the claim:
:mod:`lnrecency.claims.parameter_free.c2_no_normalisation`)."""
from __future__ import annotations

from lnrecency.claims.parameter_free.c2_no_normalisation import ID
from lnrecency.files.table_record import Table
from lnrecency.model.config import ModelConfig
from lnrecency.report.views.outputs import TableOutput, views
from lnrecency.report.views.parameter_free.t1_theorem1 import heatmap_figure, last_row_table
from lnrecency.report.views.shared import score_table, show_figures
from lnrecency.theory.closed_forms import closed_forms


def c2_scores(data) -> Table:
    """The verdict's Monte Carlo means (S_61, S_65 of layers 2 and 3) against limit + c/d at each width."""
    return score_table(data, ID, "No normalisation: layer 2 flat, layer 3 earlier-token bias (the verdict's Monte "
                                 "Carlo, S_61 and S_65)")


def _closed_form_cell(data, display):
    cf = closed_forms(ModelConfig(norm="none"))
    display(cf.score)  # no j: flat


def _last_row_cell(data, display):
    display(last_row_table(data))


def _heatmap_cell(data, display):
    show_figures(display, heatmap_figure(data, "no normalisation", dict(norm="none"), residual=False))


views(ID, module=__name__,
      tables=(TableOutput("c2_scores", "no normalisation: the verdict's Monte Carlo means (S_61, S_65, layers 2 and "
                                        "3) against limit + c/d at each width", c2_scores),),
      notebook="02_no_normalisation_baseline",
      cells=(_closed_form_cell, c2_scores, _last_row_cell, _heatmap_cell))
