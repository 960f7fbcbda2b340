"""The reviewer report: every listed file, atomic writes, parseable formats, numbers equal the library's."""
from __future__ import annotations

import csv
import io
import json
import math
import os
import re
from pathlib import Path

import numpy as np
import pytest

from lnrecency.cli.app import main
from lnrecency.files.atomic import atomic_save, atomic_write_text
from lnrecency.files.table_record import Table, parse_formats
from lnrecency.report import figure_list as figures
from lnrecency.report import table_list as claim_tables
from lnrecency.report.build import build_report, expected_files
from lnrecency.report.data import ReportData
from lnrecency.report.settings import ReportSettings
from lnrecency.report.views.outputs import TableOutput
from lnrecency.report.views.parameter_free.c5_amplification import gap_figure
from lnrecency.report.views.shared import LN


@pytest.fixture
def quick_report(quick_report_session):
    """The session's quick report (conftest.py: built once, with an empty experiment cache)."""
    return quick_report_session


def _csv(path: Path) -> tuple[list[str], list[list[str]]]:
    rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"))))
    return rows[0], rows[1:]


@pytest.mark.slow
def test_quick_report_writes_every_listed_file(quick_report):
    out, result = quick_report
    names = {p.name for p in out.iterdir()}
    not_drawn = {f"{stem}.{ext}" for stem in result.not_run for ext in ("png", "pdf")}
    missing = sorted(set(expected_files(result.settings)) - names - not_drawn)
    assert not names & not_drawn, "a figure not run wrote a picture"
    assert not missing, f"missing files: {missing}"
    assert not [n for n in names if n.endswith(".part")], "temporary files left behind"
    assert len([n for n in names if n.startswith("heatmap_") and n.endswith(".png")]) == 8
    assert [name for name, _, _ in result.figures] == figures.figure_names(result.settings)
    assert [t.name for t in result.tables] == [t.stem for t in claim_tables.TABLES]
    index = (out / "index.md").read_text(encoding="utf-8")
    for name in expected_files(result.settings):
        if name not in ("index.md", "report.json") and name not in not_drawn:
            assert name in index, f"index.md does not list {name}"
    meta = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert set(meta["files"]) <= names
    # a table not run here whose claims' rows were re-derived from the published runs says so beside "not run"
    from lnrecency.report.table_list import claims_of_table

    assert claims_of_table("thesis_text") == ("TT1", "TT2", "TT3", "TT4") and claims_of_table("verdicts") == ()
    line = next(x for x in index.splitlines() if x.startswith("- **The thesis on text (TT1-TT4)"))
    assert "not run**" not in line or "verdicts above are re-derived from the runs published in docs/" in line


def test_formats_parse(quick_report):
    out, result = quick_report
    for table in result.tables:
        header, rows = _csv(out / f"{table.name}.csv")
        assert header == list(table.columns)
        assert len(rows) == len(table.rows)
        obj = json.loads((out / f"{table.name}.json").read_text(encoding="utf-8"))
        assert set(obj) == {"name", "title", "caption", "columns", "rows", "notes"}
        assert obj["columns"] == list(table.columns) and len(obj["rows"]) == len(table.rows)
        tex = (out / f"{table.name}.tex").read_text(encoding="utf-8")
        for rule in (r"\toprule", r"\midrule", r"\bottomrule"):
            assert rule in tex
        assert tex.count(r"\\") >= len(table.rows) + 1
        md = (out / f"{table.name}.md").read_text(encoding="utf-8")
        cited = table.cited_settings()  # each view: header + rows; then the settings cited by id
        expected = len(table.markdown_views()) * (len(table.rows) + 1) + (len(cited) + 1 if cited else 0)
        assert md.count("\n| ") == expected  # (separator lines start with "|-")
    for name, _, _ in result.figures:
        if name not in result.not_run:  # a figure not run writes no file (its caption says so in words)
            assert (out / f"{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
            # a quick report's figures are PNG only (ReportSettings.figure_formats); the PDFs' bytes are checked on
            # a figure written in both formats by test_same_seed_same_bytes
            assert not (out / f"{name}.pdf").exists()


def test_table_numbers_equal_library_values(quick_report):
    """Cells of t1_scores.csv (the T1 verdict's own Monte Carlo) equal the exact limit, limit + c/d from the
    finite-width theory, and an independent simulation with the run's recorded seed."""
    from lnrecency.model.config import ModelConfig
    from lnrecency.numerics import simulate_scores
    from lnrecency.theory.finite_width import finite_width
    from lnrecency.theory.limit import limit_scores
    out, result = quick_report
    header, rows = _csv(out / "t1_scores.csv")
    col = {c: k for k, c in enumerate(header)}
    first = [r for r in rows if "norm=layernorm" in r[col["setting"]] and "lam=1;" in r[col["setting"]]]
    n = 8  # T1's Monte Carlo row (lnrecency.claims.parameter_free.t1_theorem1.N_MC)
    assert [int(r[col["j"]]) for r in first] == list(range(1, n + 1))
    cfg = ModelConfig(norm="layernorm")
    lim = limit_scores(n, 2, config=cfg)[1, n - 1]
    c = finite_width(n, 2, config=cfg).c[1, n - 1]
    means = json.loads((out / "verdict_means.json").read_text(encoding="utf-8"))
    seeds = {(r[0], r[1], r[5], r[8], r[9]): r[7] for r in means["rows"]}  # (id, setting, d, i, j) -> run's seed
    sim = simulate_scores(n, 2, 16, 4000, seed=seeds[("T1", first[0][col["setting"]], 16, n, 1)], method="gram",
                          config=cfg, progress=False, control_variate="quadratic")
    for row in first:
        j = int(row[col["j"]])
        # the evidence's limit is the finite-width theory's recursion: equal to limit_scores up to rounding
        assert math.isclose(float(row[col["limit"]]), lim[j - 1], rel_tol=1e-13)
        assert math.isclose(float(row[col["prediction d=16"]]), lim[j - 1] + c[j - 1] / 16, rel_tol=1e-13)
        assert float(row[col["MC d=16"]]) == sim.mean[1, n - 1, j - 1]
        assert float(row[col["SE d=16"]]) == sim.stderr[1, n - 1, j - 1]
    # the h(j) table against the limit's Gram matrix
    from lnrecency.theory.limit import limit_trajectory
    header, rows = _csv(out / "h_of_j.csv")
    traj = limit_trajectory(result.settings.h_n, 1, norm="layernorm", residual=True, alpha=0.4)
    row = next(r for r in rows if r[0] == "yes" and float(r[1]) == 0.4)
    assert float(row[header.index("h(2)")]) == math.sqrt(traj.layers[0].next_gram[1, 1])


def test_same_seed_same_bytes(tmp_path):
    a = ReportData(ReportSettings.make(quick=True, seed=3))
    b = ReportData(ReportSettings.make(quick=True, seed=3))
    c = ReportData(ReportSettings.make(quick=True, seed=4))
    assert a.sim(LN, 64).mean.tobytes() == b.sim(LN, 64).mean.tobytes()
    assert a.sim(LN, 64).mean.tobytes() != c.sim(LN, 64).mean.tobytes()
    paths = []
    for k, data in enumerate((a, b)):
        paths += gap_figure(data).write(tmp_path / str(k))
    assert (tmp_path / "0" / "gap_vs_alpha.png").read_bytes() == (tmp_path / "1" / "gap_vs_alpha.png").read_bytes()
    assert (tmp_path / "0" / "gap_vs_alpha.pdf").read_bytes() == (tmp_path / "1" / "gap_vs_alpha.pdf").read_bytes()
    assert (tmp_path / "0" / "gap_vs_alpha.pdf").read_bytes()[:5] == b"%PDF-"
    assert ReportSettings.make().figure_formats == ("png", "pdf") and data.settings.figure_formats == ("png",)


def test_interrupted_write_leaves_no_partial_file(tmp_path):
    target = tmp_path / "table.csv"
    target.write_text("old complete content\n")

    def writer(tmp: Path) -> None:
        tmp.write_text("half of the new")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        atomic_save(target, writer)
    assert target.read_text() == "old complete content\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["table.csv"]
    def failing(tmp: Path) -> None:
        tmp.write_bytes(b"\x89PNG")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        atomic_save(tmp_path / "new.png", failing)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["table.csv"]
    atomic_write_text(tmp_path / "ok.md", "done\n")
    assert (tmp_path / "ok.md").read_text() == "done\n"


def _one_line(data) -> Table:
    return Table("one_line", "One line", "a one-line table", ("a",), [(1,)])


def _small_report(monkeypatch, fail: bool):
    """A report of one one-line table, no figure and no verdict (the claims are not evaluated): what the atomic
    publication tests need, in about a second (lnrecency.files.atomic.publish has its own tests)."""
    def boom(data):
        raise KeyboardInterrupt
    tables = [TableOutput("one_line", "a one-line table", _one_line)] + ([TableOutput("boom", "", boom)] if fail
                                                                         else [])
    monkeypatch.setattr(claim_tables, "TABLES", tables)
    monkeypatch.setattr(figures, "FIGURES", [])
    monkeypatch.setattr("lnrecency.report.build.evaluate", lambda ids, **kw: [])
    monkeypatch.setattr(ReportData, "verdicts", lambda self, ids=None: {} if ids is None else
                        {cid: [] for cid in ids})


def _snapshot(folder):
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_interrupted_report_leaves_the_folder_as_it_was(tmp_path, monkeypatch):
    """Ctrl-C in the middle of a report into a folder that holds an earlier report (and a file of the
    user's): the folder is byte for byte what it was, and nothing is left beside it."""
    out = tmp_path / "report"
    _small_report(monkeypatch, fail=False)
    build_report(out, quick=True, formats="csv,json", progress=False, jobs=1)
    (out / "my_notes.txt").write_text("mine")
    before = _snapshot(out)
    assert "index.md" in before and "one_line.csv" in before
    _small_report(monkeypatch, fail=True)
    with pytest.raises(KeyboardInterrupt):
        build_report(out, quick=True, formats="csv,json", progress=False, jobs=1)
    assert _snapshot(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report"]  # no staging folder left
    # an interrupted first run creates no folder at all
    with pytest.raises(KeyboardInterrupt):
        build_report(tmp_path / "fresh", quick=True, formats="csv,json", progress=False, jobs=1)
    assert not (tmp_path / "fresh").exists()


def test_a_new_report_replaces_the_old_one_whole_and_keeps_user_files(tmp_path, monkeypatch):
    out = tmp_path / "report"
    _small_report(monkeypatch, fail=False)
    build_report(out, quick=True, formats="csv,json", progress=False, jobs=1)
    (out / "my_notes.txt").write_text("mine")
    (out / "one_line.md").write_text("stale file of an earlier format")  # not in report.json's list
    build_report(out, quick=True, formats="json", progress=False, jobs=1)
    names = sorted(p.name for p in out.iterdir())
    assert "my_notes.txt" in names and "one_line.json" in names
    assert "one_line.csv" not in names  # the earlier report's files do not linger
    assert (out / "one_line.md").read_text() == "stale file of an earlier format"  # not ours: kept
    assert oct(out.stat().st_mode & 0o777) != oct(0o700)


def test_table_writers():
    t = Table("demo", "Demo | title", "alpha_1 & 50% of $x$", ("a|b", "x", "s"),
              [(1, 0.1234567891234, "±"), (2, float("nan"), None), (3, np.float64(2.5), True)], ("note",))
    header, rows = _csv_text(t.to_csv())
    assert header == ["a|b", "x", "s"] and rows[0][1] == "0.1234567891234" and rows[1][1] == ""
    obj = json.loads(t.to_json())
    assert obj["rows"][1] == [2, None, None] and obj["rows"][2] == [3, 2.5, True]
    tex = t.to_latex()
    assert r"\&" in tex and r"\%" in tex and r"\$" in tex and r"alpha\_1" in tex
    assert "a\\|b" in t.to_markdown() and "0.123457" in t.to_markdown()
    with pytest.raises(ValueError, match="rows\\[0\\]"):
        Table("bad", "t", "c", ("a", "b"), [(1,)])
    with pytest.raises(ValueError, match="distinct"):
        Table("bad", "t", "c", ("a", "a"), [(1, 2)])


def _csv_text(text: str):
    rows = list(csv.reader(io.StringIO(text)))
    return rows[0], rows[1:]


def test_bad_input():
    with pytest.raises(ValueError, match="format must be .*xls"):
        parse_formats("md,xls")
    with pytest.raises(ValueError, match="seed"):
        ReportSettings.make(seed=-1)
    with pytest.raises(ValueError, match="seed"):
        ReportSettings.make(seed=1.5)
    assert main(["report", "--format", "md,docx", "--out", os.devnull]) == 2


def test_out_must_be_a_directory(tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(ValueError, match="out must be a directory"):
        build_report(f, quick=True)


def test_readme_verdict_block(tmp_path):
    from lnrecency.claims.catalog import declared
    from lnrecency.inference.evidence import SettingGroup
    from lnrecency.inference.verdicts import ClaimResult
    from lnrecency.report.readme import BEGIN, END, update_readme
    readme = tmp_path / "README.md"
    readme.write_text(f"# x\n\n{BEGIN}\nOLDBLOCK\n{END}\n\ntail\n")
    said = declared("C5").statements[0].text  # the paper's 'can amplify' (absolute gap)
    r = ClaimResult("C5", "seed text", said, {"settings": [{"lam": 1.0}, {"lam": 8.0}]}, "refuted",
                    SettingGroup(per_setting=(), settings_total=2, settings_here=2), finding="holds for n < 9")
    update_readme(readme, [r], quick=True)
    text = readme.read_text()
    assert text.startswith("# x\n\n") and text.endswith(f"{END}\n\ntail\n") and "OLDBLOCK" not in text
    assert "**1 verdicts on 1 claims** (quick settings): 0 confirmed, 1 refuted, 0 inconclusive." in text
    # the cell from the row's typed fields (its settings' scope: issue 75), never from its finding's prose
    assert "| [C5](docs/claims/C5.md) | paper | refuted | lam 1/8: fails in 2 settings |" in text
    assert "holds for n < 9" not in text
    assert "[Sources](docs/sources.md#verdicts-by-source)" in text  # the counts by source live there (issue 84)
    (tmp_path / "plain.md").write_text("no markers\n")
    with pytest.raises(ValueError, match="markers"):
        update_readme(tmp_path / "plain.md", [r], quick=True)


def test_readme_quick_start_is_exact():
    text = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    assert "python3 -m pip install -e . && lnrecency report --out report\n" in text
    assert "python3 -m pip install -e '.[test]' && python3 -m pytest\n" in text


_CHILD = r"""
import sys, time
from lnrecency.report.views.outputs import FigureOutput
from lnrecency.report import figure_list as figures
def slow(data):  # figures are drawn while the verdict worker evaluates the claims
    print("building", flush=True)
    # a long figure in short sleeps: CPython handles a signal at a bytecode boundary or when a blocking call
    # returns EINTR, so a SIGINT that lands between the print and one 60 s sleep would wait for the sleep's end
    # (a race of the test's own making, 1 run in 10 here; figure drawing is bytecode, handled at once)
    for _ in range(600):
        time.sleep(0.1)
figures.FIGURES = [FigureOutput("slow", slow, ("slow",))]
from lnrecency.cli.app import main
sys.exit(main(["report", "--quick", "--format", "json", "--out", sys.argv[1]]))
"""


def test_ctrl_c_ends_the_report_quickly_and_cleanly(tmp_path):
    """A real SIGINT to the main process while the verdict worker runs: exit 130 within seconds,
    the earlier folder unchanged, no staging folder, no 'Exception ignored' noise."""
    import signal
    import subprocess
    import sys
    import time

    out = tmp_path / "rep"
    out.mkdir()
    (out / "keep.txt").write_text("earlier content")
    proc = subprocess.Popen([sys.executable, "-c", _CHILD, str(out)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        assert proc.stdout.readline().strip() == "building"
        t0 = time.perf_counter()
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:  # a failed run leaves no process behind
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130 and time.perf_counter() - t0 < 10, err
    assert "Exception ignored" not in err and "Traceback" not in err
    assert sorted(p.name for p in out.iterdir()) == ["keep.txt"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rep"]


def test_width_and_consistency_tables_are_the_verdicts_evidence(quick_verdicts):
    """practical_widths and implementation_consistency show the checks the verdicts used, number for number
    (lnrecency.inference.evidence.records_of), and a failing check shows as FAIL."""
    from dataclasses import replace

    from lnrecency.inference.evidence import records_of
    from lnrecency.inference.records import MCMeans, OrderingTests
    from lnrecency.report import table_list as ct
    from lnrecency.report.data import ReportData, ReportSettings
    from lnrecency.report.views.parameter_free.t1_theorem1 import t1_scores

    data = ReportData(ReportSettings.make(quick=True))
    results = [r for r in quick_verdicts[1] if r.id == "T1"]  # the session's quick verdicts (conftest.py)
    data._verdicts, data._all_verdicts = {"T1": results}, True
    table = ct.practical_widths_table(data)
    means = [m for r in results for m in records_of(r.evidence, MCMeans)]
    assert len(table.rows) == 3 * len(means) == 12
    assert table.column("d") == [16, 64, 256] * 4
    assert table.column("R") == [m.authors_widths.remainder_constant.R for m in means for _ in range(3)]
    assert table.column("R/d^2") == [w.remainder_bound for m in means for w in m.authors_widths.widths]
    # R is fitted at d_ref = 16 and 32: d = 16 is consistency there, d = 64 and 256 support
    assert table.column("role") == (["consistency (R fitted at this width)"] + ["support"] * 2) * 4
    assert table.column("result") == ["consistent", "pass", "pass"] * 4
    cons = ct.consistency_table(data)
    assert cons.column("worst")[:4] == [ct._worst(m.implementation_consistency) for m in means]
    # the entry-level tables: every number is the evidence's own
    vm = ct.verdict_means_table(data)
    entries = [(mc, e) for m in means for mc in (m.implementation_consistency, *m.authors_widths.widths)
               for e in mc.checks]
    assert len(vm.rows) == len(entries)
    assert vm.column("d") == [mc.d for mc, _ in entries]
    assert vm.column("seed") == [mc.seed for mc, _ in entries]
    assert vm.column("MC") == [e.check.estimate for _, e in entries]
    assert vm.column("SE") == [e.check.stderr for _, e in entries]
    assert vm.column("prediction") == [e.check.prediction for _, e in entries]
    assert vm.column("tolerance") == [e.check.tolerance for _, e in entries]
    assert set(vm.column("role")) == {"implementation consistency", "authors' width"}
    orders = [t for r in results for o in records_of(r.evidence, OrderingTests) for t in o.tests]
    vo = ct.verdict_orderings_table(data)
    assert len(vo.rows) == len(orders) > 0
    assert vo.column("mean S_ij - S_ik") == [t.check.mean for t in orders]
    assert vo.column("verdict") == [t.verdict for t in orders]
    # the claim's score table: the same runs, entry by entry, per width
    st = t1_scores(data)
    runs = [(*m.authors_widths.widths, m.implementation_consistency) for m in means]
    assert len(st.rows) == sum(len(m.implementation_consistency.checks) for m in means) == 32
    for q, w in enumerate(("16", "64", "256", "10^12")):
        assert st.column(f"MC d={w}") == [e.check.estimate for rs in runs for e in rs[q].checks]
        assert st.column(f"prediction d={w}") == [e.check.prediction for rs in runs for e in rs[q].checks]
    # a failing check is shown so
    first = means[0].authors_widths.widths[0]
    bad = replace(first.checks[0], check=replace(first.checks[0].check, estimate=first.checks[0].check.prediction + 1))
    assert ct._ratio(bad.check) > 1 and not bad.passed


def test_claim_tables_render_the_verdicts_own_runs(quick_verdicts):
    """The C5, C7, C8 and C9 tables show the numbers of the verdicts' evidence (the session's quick verdicts,
    conftest.py; no run of the report's own), and the limit identity of seed 002 holds between two independent limit
    computations."""
    from lnrecency.claims.parameter_free import c5_amplification as amplification
    from lnrecency.claims.parameter_free import c8_output_variance as variance
    from lnrecency.claims.parameter_free import c9_finite_width as finite_width
    from lnrecency.inference.evidence import records_of
    from lnrecency.inference.records import MCMeans
    from lnrecency.report.views.parameter_free import c5_amplification as amplification_views
    from lnrecency.report.views.parameter_free import c7_output_norm as output_norm_views
    from lnrecency.report.views.parameter_free import c8_output_variance as variance_views
    from lnrecency.report.views.parameter_free import c9_finite_width as finite_width_views

    data = ReportData(ReportSettings.make(quick=True))
    results = quick_verdicts[1]
    data._verdicts = {cid: [r for r in results if r.id == cid] for cid in ("C5", "C7", "C8", "C9")}
    data._all_verdicts = True

    def evidence(cid, kind):
        return [m for r in data._verdicts[cid] for m in records_of(r.evidence, kind)]

    for cid, table in (("C7", output_norm_views.output_norm_table(data)), ("C8", variance_views.variance_table(data))):
        means = evidence(cid, MCMeans)
        assert len(table.rows) == sum(len(m.implementation_consistency.checks) for m in means) > 0
        for q, w in enumerate(("16", "64", "256")):
            assert table.column(f"MC d={w}") == [e.check.estimate for m in means
                                                  for e in m.authors_widths.widths[q].checks]
        assert table.column("MC d=10^12") == [e.check.estimate for m in means
                                              for e in m.implementation_consistency.checks]
    c7 = output_norm_views.output_norm_table(data)
    at0 = [k for k, st in enumerate(c7.column("setting")) if "alpha=0," in st or st.endswith("alpha=0")]
    assert at0 and all(abs(c7.rows[k][c7.columns.index("sum_k P_ik^2 limit")] - c7.rows[k][c7.columns.index("limit")])
                       < 1e-12 for k in at0)
    post = variance_views.post_norm_table(data)
    diag = [ch.estimate for ev in evidence("C8", variance.PostNormEvidence) for c in ev.normalised.values()
            for ch in c.S_ii]
    assert [x for x, d in zip(post.column("MC"), post.column("samples")) if d is not None] == diag
    conv = finite_width_views.convergence_table(data)
    checks = [e.check for ev in evidence("C9", finite_width.RateEvidence) for m in ev.mean_checks for e in m.checks]
    assert conv.column("MC") == [c.estimate for c in checks] and len(checks) > 0
    inst = finite_width_views.instance_table(data)
    freq = evidence("C9", finite_width.Frequency)
    assert [p for p, lo in zip(inst.column("P(S_ij > S_ik) per draw"), inst.column("CP low")) if lo is not None] == [
        f.frequency for f in freq]
    rp = amplification_views.rp_table(data)
    assert rp.column("RP") == [x for ev in evidence("C5", amplification.RPByAlpha) for x in ev.rp]


def _md_rows(text: str) -> list[list[str]]:
    """The cells of every Markdown table line of ``text`` (escaped pipes are not separators)."""
    out = []
    for line in text.splitlines():
        if line.startswith("|") and not line.startswith("|-"):
            out.append([c for c in line.strip().strip("|").replace("\\|", "\x00").split("|")])
    return out


def test_markdown_views_are_at_most_twelve_columns(quick_report):
    """Issue 32: a person reads at most about 12 columns; every Markdown table of the report, index.md
    included, obeys it (the CSV and JSON keep every column)."""
    from lnrecency.files.table_record import MD_MAX_COLUMNS

    out, result = quick_report
    widest = {}
    for path in out.glob("*.md"):
        widths = [len(r) for r in _md_rows(path.read_text(encoding="utf-8"))]
        widest[path.name] = max(widths, default=0)
    assert widest and max(widest.values()) <= MD_MAX_COLUMNS, {k: v for k, v in widest.items() if v > MD_MAX_COLUMNS}
    assert max(len(t.columns) for t in result.tables) > MD_MAX_COLUMNS  # the rule had something to split


def test_markdown_view_rule_says_no():
    """The same counter rejects a table written the old way (29 columns on one line)."""
    from lnrecency.files.table_record import MD_MAX_COLUMNS

    wide = Table("w", "W", "c", [f"c{k}" for k in range(29)], [list(range(29))])
    old = "| " + " | ".join(wide.columns) + " |"
    assert max(len(r) for r in _md_rows(old)) == 29 > MD_MAX_COLUMNS
    assert max(len(r) for r in _md_rows(wide.to_markdown())) <= MD_MAX_COLUMNS
    # a cell of the CSV view is never lost: every column appears in some Markdown view
    assert sorted({k for v in wide.markdown_views() for k in v}) == list(range(29))


def test_index_opens_with_the_headline(quick_report):
    """index.md: the title, the verdict counts, the findings (what fails first), then the verdict table;
    the counts equal the verdicts table's rows."""
    out, result = quick_report
    index = (out / "index.md").read_text(encoding="utf-8")
    verdicts = json.loads((out / "verdicts.json").read_text(encoding="utf-8"))
    words = [r[verdicts["columns"].index("verdict")] for r in verdicts["rows"]]
    counts = index.index(f"**{len(words)} verdicts on ")
    for word in set(words):
        assert f"{words.count(word)} {word}" in index[counts:index.index("\n", counts)]
    order = [index.index(s) for s in ("**The answer.** ", "verdicts on", "| statements from |", "**Not run here",
                                      "**What holds, and where**", "## Verdicts", "## Tables", "## Figures")]
    # the answer comes first, then its Words line, then the counts: within the answer's word budget (docs/layout.md,
    # "Size budgets") at 7 characters a word (its words average 6.4 with their spaces)
    import tomllib

    budget = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text(encoding="utf-8"))[
        "tool"]["lnrecency"]["size-budgets"]["answer-words"]
    gloss = index.split("\nWords: ", 1)[1].split("\n\n", 1)[0] if "\nWords: " in index else ""  # its terms, after it
    assert order == sorted(order) and order[0] < 200 and counts < 7 * budget + len(gloss) + 200, (counts, budget)
    if any(w != "confirmed" for w in words):
        assert counts < index.index("**What fails") < index.index("**What holds")
    # one bullet per claim, each with a sentence and a link to its evidence
    claims = list(dict.fromkeys(r[0] for r in verdicts["rows"]))
    for cid in claims:
        assert f"- **{cid}: " in index, cid
    # a caption shared by several figures is written once
    captions = [line for line in index.splitlines()
                if line and not line.lstrip().startswith(("#", "!", "-", "|", "*"))]  # not a (sub-)bullet
    long_ = [c for c in captions if len(c) > 200]
    assert len(long_) == len(set(long_))
    # never a NaN or an empty name in a sentence (R1's rows re-decided from docs/pretrained.json carry no statistic in
    # their evidence: the answer reads their qualifiers)
    assert not re.search(r"(?i)[+-]?\bnan\b", index) and ": : " not in index


def test_html_report_in_headless_chromium(quick_report, tmp_path):
    """index.html loads in a real browser with no console error, every figure decodes, a screenshot is
    written; the same machinery flags a page with a console error and a broken image."""
    from browser import check_page

    out, result = quick_report
    page = out / "index.html"
    text = page.read_text(encoding="utf-8")
    assert "http://" not in text.replace("http://www.w3.org", "") and "https://" not in text  # self-contained
    check = check_page(page, tmp_path / "report.png")
    assert check.console_errors == []
    assert check.title.startswith("lnrecency report"), check  # the page itself, not an error page
    assert check.images == len(result.figures) - len(result.not_run) and check.failed_images == [], check
    assert check.screenshot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # legible at 1x (issue 66): no figure shrunk so far that its 9 pt text (13.75 px at DPI 110) falls under 9 px
    assert check.smallest()[1] >= 9 / 13.75, check.smallest()
    # the same numbers as the Markdown: every verdict row's finding text is on the page
    verdicts = next(t for t in result.tables if t.name == "verdicts")
    import html as _html

    for row in verdicts.rows:
        assert _html.escape(str(row[verdicts.columns.index("finding")])) in text
    bad = tmp_path / "bad.html"
    bad.write_text('<html><body><img alt="broken" src="data:image/png;base64,iVBORw0KGgo=">'
                   '<script>console.error("boom")</script></body></html>', encoding="utf-8")
    flagged = check_page(bad, tmp_path / "bad.png")
    assert flagged.failed_images == ["broken"] and len(flagged.console_errors) == 1
    import base64

    png = next(p for p in sorted(out.glob("*.png")) if p.stat().st_size > 1000)
    small = tmp_path / "small.html"  # a figure squeezed to 200 px is flagged by the same scale check
    small.write_text(f'<html><body><img alt="squeezed" style="width:200px" src="data:image/png;base64,'
                     f'{base64.b64encode(png.read_bytes()).decode()}"></body></html>', encoding="utf-8")
    squeezed = check_page(small, tmp_path / "small.png")
    assert squeezed.smallest()[0] == "squeezed" and squeezed.smallest()[1] < 9 / 13.75


def test_readme_states_what_a_fresh_report_contains(quick_report):
    """The README's counts come from the module that writes the report's opening: its `--quick` line equals this
    fresh quick report (claims needing a cached experiment left out, as on a fresh machine), and its default
    line equals docs/verdicts.json, the run it was generated from."""
    import re

    from lnrecency.claims.registry import TRAINED

    out, _ = quick_report
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    table = json.loads((out / "verdicts.json").read_text(encoding="utf-8"))
    cols = table["columns"]
    rows = [r for r in table["rows"] if r[cols.index("id")] not in TRAINED]
    m = re.search(r"With `--quick`: \*\*(\d+) verdicts on (\d+) claims\*\* \(quick settings\): ([^.]*)\.", readme)
    assert m is not None, "the README does not state the quick report's counts"
    assert (int(m[1]), int(m[2])) == (len(rows), len({r[cols.index("id")] for r in rows}))
    for part in m[3].split(", "):
        n, word = part.split(" ", 1)
        assert int(n) == sum(r[cols.index("verdict")] == word for r in rows), part
    snap = json.loads((Path(__file__).resolve().parents[2] / "docs" / "verdicts.json").read_text(encoding="utf-8"))
    fresh = [r for r in snap["verdicts"] if r["id"] not in TRAINED]
    d = re.search(r"\*\*(\d+) verdicts on (\d+) claims\*\* \(default settings\)", readme)
    assert (int(d[1]), int(d[2])) == (len(fresh), len({r["id"] for r in fresh}))


@pytest.mark.slow
def test_a_figure_not_run_is_said_in_words_with_its_command_not_drawn(quick_report):
    """An empty experiment cache: the trained figures are not run. None of them writes a picture; index.md and
    index.html say so once per experiment in words, with the command that draws them, and embed no image for them."""
    out, result = quick_report
    assert result.not_run, "the session report's cache is empty: its trained figures cannot have been drawn"
    titles = {n: t for n, t, _ in result.figures}
    index = (out / "index.md").read_text(encoding="utf-8")
    page = (out / "index.html").read_text(encoding="utf-8")
    for stem in result.not_run:
        assert not (out / f"{stem}.png").exists() and not (out / f"{stem}.pdf").exists()
        assert titles[stem] in index and f'alt="{titles[stem]}"' not in page
    assert index.count("Not run: the thesis experiment") == 1 and "`lnrecency experiments thesis --quick`" in index
    assert "Caption as above.) ()" not in index  # no empty link list of a figure without files
    assert page.count('class="not-run"') == index.count("Not run: the ")
    meta = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert {f["name"] for f in meta["figures"] if not f["drawn"]} == set(result.not_run)


def test_the_build_keeps_what_was_alive_before_it_out_of_the_collector_and_gives_it_back(tmp_path, monkeypatch):
    """build.py freezes the objects alive when the build starts (the collector's full passes then skip them) and
    unfreezes them when it ends, also when it is interrupted."""
    import gc

    from lnrecency.report import build

    seen = []

    def interrupted(settings, jobs):
        seen.append(gc.get_freeze_count())
        raise KeyboardInterrupt

    monkeypatch.setattr(build, "_start_verdicts", interrupted)
    before = gc.get_freeze_count()
    with pytest.raises(KeyboardInterrupt):
        build.build_report(tmp_path / "r", quick=True, progress=False)
    assert seen and seen[0] > before and gc.get_freeze_count() == before == 0
    assert not (tmp_path / "r").exists()  # nothing published
