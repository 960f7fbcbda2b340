"""What P1 shows in the report and the notebooks: tables, figures and notebook cells (the claim:
:mod:`lnrecency.claims.parameter_free.p1_p7_printed_formulas`)."""
from __future__ import annotations

from typing import Any

from lnrecency.files.table_record import Table
from lnrecency.inference.evidence import jsonable
from lnrecency.report.views.outputs import TableOutput, views

_KEY_EVIDENCE = ("summary", "equal", "first_difference.i", "first_difference.j", "first_difference.user",
                 "first_difference.derived", "corrected_expression", "corrected_equal", "printed", "exact_6_digits",
                 "agrees_at_3_decimals", "conclusion", "reason")


def _leaves(x: Any, prefix: str = ""):
    if isinstance(x, dict):
        for k, v in x.items():
            yield from _leaves(v, f"{prefix}.{k}" if prefix else str(k))
    elif isinstance(x, list) and x and all(isinstance(v, (dict, list)) for v in x):
        for q, v in enumerate(x):
            yield from _leaves(v, f"{prefix}[{q}]")
    else:
        yield prefix, x


def _evidence_text(evidence) -> str:
    """The decisive scalar entries of a verdict's evidence record, read from its JSON form, whole (``lnrecency verify
    --json`` has all of it)."""
    leaves = [(path, v) for path, v in _leaves(jsonable(evidence)) if not isinstance(v, (dict, list))]
    key = [(p, v) for p, v in leaves
           if any(p == k or p.endswith("." + k) or p.split("]")[-1].lstrip(".") == k for k in _KEY_EVIDENCE)]
    parts = [f"{p}={v:.6g}" if isinstance(v, float) else f"{p}={v}" for p, v in (key or leaves)]
    return "; ".join(parts)


def printed_table(data) -> Table:
    """P1-P9: the authors' printed derivation, line by line, with verdicts."""
    rows = []
    ids = [f"P{k}" for k in range(1, 10)]
    for pid, results in data.verdicts(ids).items():
        for r in results:
            rows.append([r.id, r.verdict, r.statement, _evidence_text(r.evidence)])
    caption = ("The first version's printed derivation (arXiv 2509.21042v1, Sec. 3.2 and App. A), each line "
               "checked against the project's own sympy derivation and exact limit (lnrecency verify). "
               "Evidence: the decisive entries; `lnrecency verify --claim P4 --json` gives all of it.")
    return Table("printed_derivation", "P1-P9. The authors' printed derivation, line by line", caption,
                 ["id", "verdict", "printed line", "evidence"], rows)


views("P1", module=__name__,
      tables=(TableOutput("printed_derivation", "the authors' printed lines P1-P9 with verdicts", printed_table),),
      notebook="06_printed_derivation",
      cells=(printed_table,))
