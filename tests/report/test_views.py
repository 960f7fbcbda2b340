"""lnrecency.report.views: what a claim shows is registered by its ID (tables, figures, notebook cells) on the report
floor, a notebook code cell is a real function whose body becomes the cell, and the registry refuses what it cannot
order."""
from __future__ import annotations

import numpy as np
import pytest

import lnrecency.theory.closed_forms as cf_module
from lnrecency.model.config import ModelConfig
from lnrecency.report.views import outputs, registry  # the registry imports (and so registers) every view module
from lnrecency.report.views.cells import cell_source
from lnrecency.report.views.outputs import VIEWS, FigureOutput, TableOutput, section, views

SCALE = 3.0


def _cell(data, display):
    """A docstring is not part of the cell."""
    cfg = ModelConfig(norm="layernorm")
    display(np.arange(3) * SCALE, cfg.label())  # a comment stays


def _cell_with_module_alias(data, display):
    display(cf_module.closed_forms(ModelConfig()).score)


def _cell_with_own_import(data, display):
    from lnrecency.theory.limit import limit_scores

    display(limit_scores(4, 2))


def _cell_reading_nothing_defined(data, display):
    display(NOT_DEFINED_ANYWHERE)  # noqa: F821


def _table(data):
    return None


def test_cell_source_is_the_body_with_the_imports_it_needs():
    src = cell_source(_cell)
    assert src.splitlines() == [
        "from lnrecency.model.config import ModelConfig",
        f"from {__name__} import SCALE",
        "import numpy as np",
        'cfg = ModelConfig(norm="layernorm")',
        "display(np.arange(3) * SCALE, cfg.label())  # a comment stays"]
    assert "docstring" not in src and "def " not in src
    assert "import lnrecency.theory.closed_forms as cf_module" in cell_source(_cell_with_module_alias).splitlines()
    own = cell_source(_cell_with_own_import)
    assert own.startswith("from lnrecency.theory.limit import limit_scores\n")
    assert own.count("import") == 1  # the cell's own import is not added a second time


def test_the_cell_runs_as_the_notebook_would():
    shown = []
    namespace = {"data": None, "display": lambda *a: shown.append(a)}
    exec(compile(cell_source(_cell), "<cell>", "exec"), namespace)
    assert shown and list(shown[0][0]) == [0.0, 3.0, 6.0]


def test_a_cell_reading_an_undefined_name_is_refused():
    with pytest.raises(NameError, match="NOT_DEFINED_ANYWHERE"):
        cell_source(_cell_reading_nothing_defined)


def _declare_x(monkeypatch, cid: str) -> None:
    """One catalogue line for a test claim whose module is this test file's name."""
    from lnrecency.claims import catalog

    line = catalog.declare(cid, "test_views", "a test claim", catalog.S("s", "ours", "A test statement."))
    monkeypatch.setitem(catalog.DECLARED, cid, line)


def test_views_register_by_claim_id(monkeypatch):
    monkeypatch.setattr(outputs, "VIEWS", dict(VIEWS))
    _declare_x(monkeypatch, "X1")
    views("X1", module="lnrecency.report.views.test_views", tables=(TableOutput("x1", "line", _table),),
          notebook="nb", cells=("md", _cell, _table))
    entry = outputs.VIEWS["X1"]
    assert entry.module == "lnrecency.report.views.test_views" and entry.tables[0].build is _table
    assert entry.description == "a test claim"  # the catalogue's title
    # a cell that is one of the claim's own builders shows that output
    assert entry.cells == ("md", _cell, entry.tables[0])
    assert cell_source(entry.cells[2]).splitlines() == [f"from {__name__} import _table", "display(_table(data))"]
    figure = FigureOutput("line", _table, ("x",))
    assert cell_source(figure).splitlines()[-1] == "show_figures(display, *_table(data))"
    with pytest.raises(TypeError, match="module-level"):
        cell_source(TableOutput("y", "line", lambda data: None))
    section("X-section", "outputs only", module=__name__, cells=("text",))
    assert outputs.VIEWS["X-section"].section


def test_views_in_the_wrong_module_twice_or_with_a_bad_cell_are_refused(monkeypatch):
    monkeypatch.setattr(outputs, "VIEWS", dict(VIEWS))
    with pytest.raises(ValueError, match="belong in lnrecency.report.views.parameter_free.t1_theorem1"):
        views("T1", module="lnrecency.report.views.parameter_free.c3_residual")
    with pytest.raises(ValueError, match="X9.*registered twice"):  # a section over a registered id
        section("X9", "outputs", module="m1")
        section("X9", "outputs", module="m2")
    _declare_x(monkeypatch, "X2")
    with pytest.raises(TypeError, match="Markdown text, a function or a report output"):
        views("X2", module="lnrecency.report.views.test_views", cells=(42,))


def test_figure_output_splits_its_drawing_into_parts():
    def draw(data, part=None):
        return [part]

    units = FigureOutput("line", draw, ("a", "b"), parts=3).units()
    assert [fn(None) for _, fn in units] == [[0], [1], [2]]
    assert FigureOutput("line", draw, lambda settings: [settings]).names("s") == ["s"]


def test_the_registry_refuses_views_registered_outside_its_modules(monkeypatch):
    from lnrecency.report.views.outputs import View

    monkeypatch.setitem(VIEWS, "X9", View("X9", "somewhere.else", "stray"))
    with pytest.raises(RuntimeError, match="somewhere.else"):
        registry._views()


def test_every_claim_with_views_is_a_registered_claim_and_the_order_is_the_catalogues():
    from lnrecency.claims.registry import CATALOG

    order = [c.id for c in CATALOG]
    ids = [v.id for v in registry.VIEW_LIST if not v.section]
    assert ids == sorted(ids, key=order.index)
    assert [v.id for v in registry.VIEW_LIST if v.section] == ["boundaries"]
