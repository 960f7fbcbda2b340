"""The report's own tables: every verdict, and the Monte Carlo checks the verdicts used (means, orderings,
practical widths, implementation consistency). Each claim's own tables are declared in its module
(lnrecency.report.views); :data:`TABLES` lists them all, in report order.

Each builder takes a :class:`~lnrecency.report.data.ReportData` and returns a
:class:`~lnrecency.files.table_record.Table`;
every number is one the verdicts' evidence holds.
"""
from __future__ import annotations

from lnrecency.claims.mc_checks import D_BIG
from lnrecency.files.table_record import Table
from lnrecency.inference.records import MCMeans, MeanChecks, OrderingTests, PairedMean
from lnrecency.report.data import ReportData
from lnrecency.report.views.outputs import TableOutput
from lnrecency.report.views.registry import VIEW_LIST
from lnrecency.report.views.shared import records_in, setting_summary

__all__ = ["REPORT_TABLES", "TABLES", "build_tables", "claims_of_table", "verdict_table"]


def verdict_table(data: ReportData) -> Table:
    """Every claim's verdict (``lnrecency verify``), one row per (claim, setting)."""
    rows = []
    for cid, results in data.verdicts().items():
        for r in results:
            rows.append([r.id, r.source, r.verdict, r.statement, r.finding,
                         setting_summary(r.to_json()["setting"], None)])
    caption = ("Verdicts of lnrecency verify " + ("(quick settings)" if data.settings.quick else "")
               + ": confirmed, refuted or inconclusive under the stated setting; the finding says what holds "
                 "and what fails, with its boundary.")
    return Table("verdicts", "Claims and verdicts", caption.replace("  ", " "),
                 ["id", "source", "verdict", "statement", "finding", "setting"], rows, md_once=("statement",))


def _checks_of(data: ReportData, kind: type):
    """(result, setting summary, record) for every record of ``kind`` in the verdicts' evidence: the table shows
    the very checks the verdicts used (lnrecency.inference.evidence.records_of)."""
    for results in data.verdicts().values():
        yield from records_in(results, kind)


def _ratio(check) -> float:
    """|estimate - prediction| / tolerance of one mean check (<= 1: it passes)."""
    return abs(check.estimate - check.prediction) / check.tolerance


def _worst(checks) -> float:
    """The largest :func:`_ratio` over a MeanChecks' entries."""
    return max(_ratio(c.check) for c in checks.checks)


def practical_widths_table(data: ReportData) -> Table:
    """Monte Carlo means at the authors' widths against limit + c/d (lnrecency.claims.mc_checks.mc_means)."""
    rows = []
    for r, where, m in _checks_of(data, MCMeans):
        w = m.authors_widths
        d_ref = w.remainder_constant.d_ref
        for mc in w.widths:
            fitted = mc.d <= 2 * d_ref  # R was measured at d_ref and 2 d_ref: there the check can hardly fail
            rows.append([r.id, where, mc.kind, mc.layer, mc.d,
                         mc.samples, len(mc.checks), w.remainder_constant.R, mc.remainder_bound, _worst(mc),
                         ("consistent" if mc.passed else "FAIL") if fitted else ("pass" if mc.passed else "FAIL"),
                         "consistency (R fitted at this width)" if fitted else "support"])
    caption = ("Monte Carlo means at the widths people use: each mean against limit + c/d at d = 16, 64, 256 "
               "within k SE + R/d^2 ('worst' is the largest |MC - prediction| / tolerance over the entries). R is "
               "measured at d_ref and 2 d_ref (d = 16 and 32, independent seeds), so at those widths the check is "
               "consistency, not support (role column); support is the widths above 2 d_ref. The numbers are "
               "those of the verdicts.")
    return Table("practical_widths", "Monte Carlo means at the authors' widths: support and consistency", caption,
                 ["id", "setting", "check", "layer", "d", "samples", "entries", "R", "R/d^2", "worst", "result",
                  "role"], rows)


def consistency_table(data: ReportData) -> Table:
    """The d = 10^12 Monte Carlo checks (means and orderings): implementation consistency only."""
    rows = []
    for r, where, m in _checks_of(data, MeanChecks):
        if m.d == D_BIG:
            rows.append([r.id, where, "means vs limit", m.layer,
                         m.samples, len(m.checks), _worst(m), "pass" if m.passed else "FAIL"])
    for r, where, p in _checks_of(data, PairedMean):
        if p.d == D_BIG:
            rows.append([r.id, where, "paired mean vs limit", p.layer, p.samples, 1, _ratio(p.check),
                         "pass" if p.check.passed else "FAIL"])
    for r, where, o in _checks_of(data, OrderingTests):
        if o.d == D_BIG:
            rows.append([r.id, where, "orderings (sign of the limit)",
                         o.layer, o.samples, len(o.tests), None, o.verdict])
    caption = ("Implementation consistency: at d = 10^12 the d-independent sampler reproduces the limit by "
               "construction, so these checks compare the sampler with the limit code and support no claim "
               "at any width (the support at the authors' widths is the practical_widths table).")
    return Table("implementation_consistency", "Implementation consistency (d = 10^12)", caption,
                 ["id", "setting", "check", "layer", "samples", "entries", "worst", "result"], rows)


def _role(d: int) -> str:
    return "implementation consistency" if d == D_BIG else "authors' width"


def verdict_means_table(data: ReportData) -> Table:
    """Every entry of every Monte Carlo mean check the verdicts used, number for number (the runs behind the
    practical_widths and implementation_consistency rows)."""
    rows = []
    for r, where, m in _checks_of(data, MeanChecks):
        for e in m.checks:
            ch = e.check
            rows.append([r.id, where, m.kind, _role(m.d), m.layer, m.d, m.samples, m.seed, e.i, e.j, e.limit,
                         e.c, ch.prediction, ch.estimate, ch.stderr, ch.z, ch.tolerance,
                         "pass" if ch.passed else "FAIL"])
    caption = ("Each Monte Carlo mean of the verdicts (scores, |o_i|^2 or output variances, per entry (i, j)) "
               "beside the exact limit, the first-order coefficient c and the prediction limit + c/d (the limit "
               "alone at d = 10^12), with its SE, z = (MC - prediction)/SE and the tolerance k SE + R/d^2; "
               "'seed' is the run's seed. These are the very runs the verdicts cite (lnrecency verify --out).")
    return Table("verdict_means", "The verdicts' Monte Carlo means, entry by entry", caption,
                 ["id", "setting", "check", "role", "layer", "d", "samples", "seed", "i", "j", "limit", "c",
                  "prediction", "MC", "SE", "z", "tolerance", "result"], rows)


def verdict_orderings_table(data: ReportData) -> Table:
    """Every paired Monte Carlo ordering test the verdicts used, number for number."""
    rows = []
    for r, where, o in _checks_of(data, OrderingTests):
        for t in o.tests:
            ch = t.check
            rows.append([r.id, where, _role(o.d), o.layer, o.d, o.samples, o.seed, t.i, t.j, t.k_key,
                         ch.mean, ch.stderr, ch.z, ch.threshold, t.verdict])
    caption = ("Each paired Monte Carlo test of E S_ij > E S_ik the verdicts used: the mean difference "
               "S_ij - S_ik over the run's draws, its SE, z = mean/SE and the one-sided threshold (k SE from the "
               "false-alarm budget): confirmed above it, refuted below minus it. At d = 10^12 these test the "
               "sampler against the sign of the limit (implementation consistency).")
    return Table("verdict_orderings", "The verdicts' Monte Carlo orderings, test by test", caption,
                 ["id", "setting", "role", "layer", "d", "samples", "seed", "i", "j", "k", "mean S_ij - S_ik",
                  "SE", "z", "threshold", "verdict"], rows)


#: the report's own tables, first in the report
REPORT_TABLES: tuple[TableOutput, ...] = (
    TableOutput("verdicts", "every claim with its verdict from `lnrecency verify`", verdict_table),
    TableOutput("practical_widths", "every Monte Carlo mean check that supports a verdict, at the authors' widths "
                                    "d = 16, 64, 256", practical_widths_table),
    TableOutput("implementation_consistency", "the d = 10^12 checks: sampler against limit code (no support at any "
                                              "width)", consistency_table),
    TableOutput("verdict_means", "every Monte Carlo mean the verdicts used, entry by entry (the runs they cite)",
                verdict_means_table),
    TableOutput("verdict_orderings", "every paired Monte Carlo ordering the verdicts used, test by test",
                verdict_orderings_table))

#: every table of the report, in order: its own, then each claim's (declared in the claim's module)
TABLES: list[TableOutput] = [*REPORT_TABLES, *(t for v in VIEW_LIST for t in v.tables)]


def claims_of_table(stem: str) -> tuple[str, ...]:
    """The claims whose view shows the table ``stem``: every claim of that view's claim module (a module decides its
    IDs together, lnrecency.claims.catalog), none for the report's own tables."""
    from lnrecency.claims.catalog import CATALOG

    for v in VIEW_LIST:
        if not v.section and any(t.stem == stem for t in v.tables):
            module = v.module.removeprefix("lnrecency.report.views.")
            return tuple(c.id for c in CATALOG if c.module == module)
    return ()


def build_tables(data: ReportData) -> list[Table]:
    return [t.build(data) for t in TABLES]


