"""figure_problems: the check every test-drawn figure passes (LNRECENCY_STRICT_FIGURES), shown rejecting its
planted defects: a 6 pt tick, and a figure-level key for points that one panel does not draw."""
from __future__ import annotations

import pytest
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from lnrecency.files.figure_record import ReportFigure, figure_problems


def two_panels(points_on_right: bool, label: str = "points: MC") -> Figure:
    fig = Figure(figsize=(6, 3))
    left, right = fig.subplots(1, 2)
    for ax, pts in ((left, True), (right, points_on_right)):
        ax.plot([0, 1], [0, 1], "-")
        if pts:
            ax.errorbar([0.5], [0.5], yerr=[0.1], fmt="o")
    fig.legend(handles=[Line2D([], [], color="k", label="line: limit"),
                        Line2D([], [], color="k", marker="o", ls="none", label=label)])
    return fig


def test_a_clean_figure_passes():
    assert figure_problems(two_panels(True)) == []
    assert figure_problems(two_panels(False, "points: MC (left panel)")) == []


def test_a_key_for_points_a_panel_lacks_is_found():
    problems = figure_problems(two_panels(False))
    assert len(problems) == 1 and "every panel" in problems[0]


def test_small_text_is_found_and_fails_the_write(tmp_path, monkeypatch):
    fig = two_panels(True)
    fig.axes[0].tick_params(labelsize=6)
    assert any("6 pt" in p for p in figure_problems(fig))
    monkeypatch.setenv("LNRECENCY_STRICT_FIGURES", "1")
    with pytest.raises(ValueError, match="at least 9"):
        ReportFigure("bad", "t", "c", fig).write(tmp_path)
    assert not list(tmp_path.iterdir())  # nothing written


@pytest.mark.parametrize("tight", [True, False])
def test_the_write_finds_what_a_separate_check_finds(tmp_path, monkeypatch, tight):
    """The write checks after measuring the tight box (which lays every text out) instead of drawing once more; a
    figure saved without it is drawn for the check. Either way the same problems, on figures never drawn before."""
    monkeypatch.setenv("LNRECENCY_STRICT_FIGURES", "1")
    for spoil, words in ((lambda f: f.axes[1].tick_params(labelsize=6), "6 pt"),
                         (lambda f: f.legends[0].remove() or f.legend(handles=[Line2D([], [], marker="s", ls="none",
                                                                                      label="squares")]), "squares")):
        fig = two_panels(True)
        spoil(fig)
        expected = figure_problems(_spoiled(spoil))  # a twin, checked on its own (it draws itself)
        assert expected and any(words in p for p in expected)
        with pytest.raises(ValueError) as err:
            ReportFigure("bad", "t", "c", fig, tight=tight).write(tmp_path)
        assert str(err.value) == "figure bad: " + "; ".join(expected)
    ReportFigure("good", "t", "c", two_panels(True), tight=tight).write(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["good.pdf", "good.png"]


def _spoiled(spoil) -> Figure:
    fig = two_panels(True)
    spoil(fig)
    return fig
