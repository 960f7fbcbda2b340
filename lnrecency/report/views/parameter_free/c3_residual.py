"""What C3 shows in the report and the notebooks: tables, figures and notebook cells (the claim:
:mod:`lnrecency.claims.parameter_free.c3_residual`)."""
from __future__ import annotations

from lnrecency.claims.parameter_free.c3_residual import ID
from lnrecency.files.table_record import Table
from lnrecency.report.views.outputs import TableOutput, views
from lnrecency.report.views.shared import score_table


def c3_scores(data) -> Table:
    """The verdict's Monte Carlo means, residual against no residual at layer 2, against limit + c/d."""
    return score_table(data, ID, "Residual connections weaken but keep the layer-2 recency (the verdict's Monte "
                                 "Carlo, row 8)")


views(ID, module=__name__,
      tables=(TableOutput(f"{ID.lower()}_scores", "residual vs no residual at layer 2: the verdict's Monte Carlo "
                                                   "means against limit + c/d at each width", c3_scores),),
      notebook="03_residual_and_anisotropy",
      cells=(c3_scores,))
