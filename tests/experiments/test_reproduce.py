"""`lnrecency reproduce`: the files it writes, its refusals, and an interrupted run leaving nothing."""
from __future__ import annotations

import json

import pytest

from lnrecency.cli.app import main
from lnrecency.files.atomic import MANIFEST


def test_one_figure_writes_tables_figures_and_findings(tmp_path, capsys):
    out = tmp_path / "rep"
    assert main(["reproduce", "--figure", "4", "--samples", "500", "--out", str(out), "--no-progress"]) == 0
    names = sorted(p.name for p in out.iterdir())
    assert names == sorted([MANIFEST, "index.md", "reproduce.json", "panels.md", "panels.csv", "panels.json",
                            "theory_count.md", "theory_count.csv", "theory_count.json", "simul_alpha_residual.png",
                            "simul_alpha_residual.pdf",
                            "simul_alpha_residual_theory.png", "simul_alpha_residual_theory.pdf"])
    meta = json.loads((out / "reproduce.json").read_text())
    assert meta["files"] == [n for n in names if n != MANIFEST]
    assert meta["figures"] == ["4"] and len(meta["settings"]) == 5
    assert all(s["equivalent_config"]["gamma"] == pytest.approx((16 * (1 - s["authors_setting"]["alpha"])) ** 0.5)
               for s in meta["settings"])
    table = json.loads((out / "panels.json").read_text())
    assert len(table["rows"]) == 5 * 4
    assert "Residual weight" in (out / "index.md").read_text()
    # the printed RP of each panel, and how many of them each theory predicts (20 printed panels here)
    assert [r[table["columns"].index("RP printed")] for r in table["rows"]][:4] == [0.5, 0.5009, 0.5019, 0.5028]
    count = json.loads((out / "theory_count.json").read_text())
    assert {r[0] for r in count["rows"]} == {"limit", "first order", "Edgeworth", "Edgeworth (Fisher z)"}
    assert "Of the 20 RP values printed" in (out / "index.md").read_text()


def test_curve_figure_and_same_seed_same_bytes(tmp_path):
    for name in ("a", "b"):
        assert main(["reproduce", "--figure", "5", "--out", str(tmp_path / name), "--no-progress"]) == 0
    assert (tmp_path / "a" / "h_curves.csv").read_bytes() == (tmp_path / "b" / "h_curves.csv").read_bytes()
    assert (tmp_path / "a" / "alpha_resid.png").read_bytes() == (tmp_path / "b" / "alpha_resid.png").read_bytes()


@pytest.mark.parametrize("argv, words", [
    (["--samples", "1"], ["samples", "1"]),
    (["--seed", "-3"], ["seed", "-3"]),
])
def test_refusals(tmp_path, capsys, argv, words):
    assert main(["reproduce", "--figure", "1", *argv, "--out", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and all(w in err for w in words)
    assert not (tmp_path / "x").exists()


def test_interrupted_run_leaves_the_old_folder(tmp_path, monkeypatch):
    import lnrecency.experiments.authors.reproduce as rep

    out = tmp_path / "rep"
    assert main(["reproduce", "--figure", "2", "--out", str(out), "--no-progress"]) == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}

    def boom(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(rep, "heatmap_figures", boom)
    with pytest.raises(KeyboardInterrupt):
        rep.reproduce(out, figure="1", samples=200, progress=False)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert [p.name for p in tmp_path.iterdir()] == ["rep"]  # no staging folder left


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_killed_run_leaves_nothing(tmp_path, sig):
    """A run stopped by Ctrl-C (SIGINT) or kill (SIGTERM) mid-simulation leaves neither DIR nor a staging
    folder behind (lnrecency.files.atomic.staged_directory)."""
    import signal
    import subprocess
    import sys
    import time

    out = tmp_path / "rep"
    proc = subprocess.Popen([sys.executable, "-m", "lnrecency.cli.app", "reproduce", "--figure", "A1", "--samples",
                             "100000000", "--out", str(out), "--no-progress"],
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL) and None,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 60
    while not any(tmp_path.iterdir()) and time.time() < deadline:  # the staging folder exists: mid-run
        time.sleep(0.1)
    time.sleep(1.0)
    proc.send_signal(getattr(signal, sig))
    _, err = proc.communicate(timeout=60)
    assert proc.returncode != 0 and "Traceback" not in err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow  # 20 s or more (the marker's definition, pyproject.toml)
def test_expansion_ceiling_tables(tmp_path):
    """With enough draws (>= 50 per batch) the authors-v2 run adds the cumulant-expansion ceiling: one row per
    printed panel, the three truncations, and their count against the printed values."""
    out = tmp_path / "rep"
    assert main(["reproduce", "--figure", "1", "--samples", "2000", "--out", str(out), "--no-progress"]) == 0
    table = json.loads((out / "expansion_ceiling.json").read_text())
    cols = table["columns"]
    assert len(table["rows"]) == 16 and {"Edgeworth 2 gap", "Edgeworth 2 gap SE", "RP printed"} <= set(cols)
    rows = [dict(zip(cols, r)) for r in table["rows"]]
    assert all(r["Edgeworth 2 gap SE"] > 0 for r in rows)
    for r in rows:  # the gap is the truncation minus RP of the same draws; a certain miss is never "within"
        assert r["Edgeworth 2 gap"] == pytest.approx(r["Edgeworth 2"] - r["RP"], abs=1e-12)
        assert not (r["normal within"] and r["normal beyond"])
    panels = json.loads((out / "panels.json").read_text())
    assert [r["RP run"] for r in rows] == [p[panels["columns"].index("RP")] for p in panels["rows"]]
    count = json.loads((out / "ceiling_count.json").read_text())
    assert {r[0] for r in count["rows"]} == {"normal", "Edgeworth 1", "Edgeworth 2", "Fisher-z Edgeworth 2"}
    assert "Fed each triple's exact cumulants" in (out / "index.md").read_text()
    assert json.loads((out / "reproduce.json").read_text())["ceiling_samples"] == 2000
    # same seed, same numbers: the tables are written from these (the whole command's bytes twice:
    # test_curve_figure_and_same_seed_same_bytes); one setting of the figure, again, equals itself field by field
    from lnrecency.experiments.authors.catalogue import FIGURES
    from lnrecency.experiments.authors.ceiling import cumulant_ceiling

    row, d = FIGURES["1"].rows[0], FIGURES["1"].dims[0]
    first = cumulant_ceiling(row, d, samples=2000, seed=0)
    assert cumulant_ceiling(row, d, samples=2000, seed=0) == first
    assert cumulant_ceiling(row, d, samples=2000, seed=1) != first  # ... and another seed's differ
    layer = FIGURES["1"].layers[0]  # the table's first row is this setting's first layer
    assert (rows[0]["RP"], rows[0]["Edgeworth 2"]) == (first[layer].rp, first[layer].expansions["Edgeworth 2"][0])


def test_colour_bar_labels_never_run_into_the_next_panel():
    """Issue 66: in the authors' panel grids, each colour bar's tick labels end left of the next panel's own tick
    labels (drawn at the figures' DPI); the same check finds the overlap in a grid drawn closer."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from lnrecency.experiments.authors.outputs import heatmap_figures
    from lnrecency.experiments.authors.panels import run_panels
    from lnrecency.files.figure_record import DPI

    figs, runs = run_panels("4", samples=2000, progress=False)  # the scale the overlap was seen at

    def worst_gap(fig) -> float:
        FigureCanvasAgg(fig)
        fig.set_dpi(DPI)
        fig.canvas.draw()  # the tick labels get their text when drawn
        renderer = fig.canvas.get_renderer()
        grid = [ax for ax in fig.axes if ax.get_subplotspec() is not None]
        gaps = []
        for ax in grid:
            spec = ax.get_subplotspec()
            right = [b for b in grid if b.get_subplotspec().rowspan == spec.rowspan
                     and b.get_subplotspec().colspan.start == spec.colspan.stop]
            # the bar's labels: the panel's texts placed right of it (figure_record.colour_bar, in axes coordinates)
            labels = [t for t in ax.texts if t.get_position()[0] > 1 and t.get_text()]
            if not right or not labels:
                continue
            bar_end = max(t.get_window_extent(renderer).x1 for t in labels)  # right of the bar
            lo, hi = sorted(right[0].get_ylim())
            left = [tick.label1 for tick in right[0].yaxis.get_major_ticks()
                    if tick.label1.get_visible() and lo <= tick.get_loc() <= hi]
            next_start = min(t.get_window_extent(renderer).x0 for t in left if t.get_text())
            gaps.append(next_start - bar_end)
        return min(gaps)
    (mc, _) = heatmap_figures(figs[0], runs)
    assert worst_gap(mc.figure) > 0
    mc.figure.subplots_adjust(wspace=0.25)  # panels closer than their bars' labels need: the same check says so
    assert worst_gap(mc.figure) < 0


@pytest.mark.parametrize("lo, hi", [(0.0, 1.0), (0.50012, 0.50018), (-3e-7, 2e-7), (120.0, 136.5)])
def test_a_colour_bar_marks_at_most_four_values_inside_its_range_each_read_back_to_a_millionth(lo, hi):
    from lnrecency.files.figure_record import bar_ticks

    ticks = bar_ticks(lo, hi)
    assert 1 <= len(ticks) <= 4 and len({text for _, text in ticks}) == len(ticks)  # neighbours never read alike
    slack = 1e-9 * (hi - lo)  # a locator's value may exceed an end by float rounding
    assert all(lo - slack <= v <= hi + slack and abs(float(text) - v) <= 1e-6 * (hi - lo) for v, text in ticks)
    assert bar_ticks(lo, hi, ticks=[lo]) == [(lo, bar_ticks(lo, hi, ticks=[lo])[0][1])]  # a value given is kept
