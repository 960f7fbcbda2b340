"""What S2.0 shows in the report and the notebooks: tables, figures and notebook cells (the claim:
:mod:`lnrecency.claims.trained.s2_0_premise`)."""
from __future__ import annotations

from lnrecency.claims.trained.s2_0_premise import PremiseEvidence, available
from lnrecency.files.table_record import Table
from lnrecency.report.views.outputs import TableOutput, views


def premise_table(data) -> Table:
    """S2.0: the counts per (d2, d1) bin on the default corpus, with the cluster-robust interval of D."""
    columns = ["d2 = t - p2", "d1 = t - p1", "events", "next = C (later)", "next = B (earlier)",
               "D = f_C - f_B", "95% interval (files)", "files"]
    results = [] if (not data.frozen and not available()) else data.verdicts(["S2.0"])["S2.0"]
    ev = results[0].evidence if results else None
    if not isinstance(ev, PremiseEvidence):
        return Table("seed002_premise", "Seed 002's premise on real text (S2.0): not run",
                     "The corpus counts are not cached: run `lnrecency corpus-stats`, then rebuild the report.",
                     columns, [], ["Verdict S2.0: not evaluated (the counts are not cached)."])
    rows = [[b["d2"], b["d1"], b["events"], b["frac_c"], b["frac_b"], b["d"],
             "n/a" if b["d_interval"] is None else f"[{b['d_interval'][0]:+.4f}, {b['d_interval'][1]:+.4f}]",
             b["files"]] for b in ev.bins]
    caption = (f"{ev.definition}; corpus {ev.corpus} ({ev.files} files, {ev.tokens} tokens, byte-level BPE "
               f"vocabulary {ev.vocab}). Intervals are cluster-robust over files. Verdict S2.0: "
               f"{results[0].verdict}.")
    return Table("seed002_premise", "Seed 002's premise on real text (S2.0)", caption, columns, rows, [])


views("S2.0", module=__name__,
      tables=(TableOutput("seed002_premise", "seed 002's premise on real text: counts of the later and earlier "
                                             "continuation per distance bin", premise_table),))
