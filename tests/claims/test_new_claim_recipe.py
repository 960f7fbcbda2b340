"""docs/layout.md's recipe for a new claim, walked through: C3's two modules (its evaluator and its views) copied under
a new ID and one catalogue line (C3's, under that ID) are all it takes for the claim to be declared, registered,
listed, shown and evaluated; its statements come from the catalogue, its table and Monte Carlo labels from its ID.
The same machinery refuses a module that registers a claim the catalogue does not declare, or declares in another
module."""
from __future__ import annotations

import importlib
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from lnrecency.claims import catalog
from lnrecency.claims import parameter_free as package
from lnrecency.claims.declare import REGISTERED
from lnrecency.claims.parameter_free import c3_residual
from lnrecency.report.views import outputs
from lnrecency.report.views import parameter_free as view_package
from lnrecency.report.views.parameter_free import c3_residual as c3_views

#: an ID and module no real claim will take (a real next claim, say C10, must not meet this test's copy)
NEW = "X99"
MODULE = "parameter_free.x99_residual_copy"


@pytest.fixture
def copied(tmp_path, monkeypatch):
    """Step 1: the two modules (C3's evaluator with ``ID = "X99"``, and its views reading that module), each in a
    folder on its package's path; step 2: one catalogue line."""
    source = Path(c3_residual.__file__).read_text(encoding="utf-8")
    assert source.count('ID = "C3"') == 1
    (tmp_path / "claims").mkdir()
    (tmp_path / "views").mkdir()
    (tmp_path / "claims" / "x99_residual_copy.py").write_text(source.replace('ID = "C3"', f'ID = "{NEW}"'),
                                                              encoding="utf-8")
    view_source = Path(c3_views.__file__).read_text(encoding="utf-8")
    assert view_source.count("lnrecency.claims.parameter_free.c3_residual import") == 1
    (tmp_path / "views" / "x99_residual_copy.py").write_text(
        view_source.replace("parameter_free.c3_residual import", "parameter_free.x99_residual_copy import"),
        encoding="utf-8")
    monkeypatch.setattr(package, "__path__", [*package.__path__, str(tmp_path / "claims")])
    monkeypatch.setattr(view_package, "__path__", [*view_package.__path__, str(tmp_path / "views")])
    monkeypatch.setattr(outputs, "VIEWS", dict(outputs.VIEWS))
    line = replace(catalog.declared("C3"), id=NEW, module=MODULE, title="a copy of C3 (the recipe's walk-through)")
    monkeypatch.setattr(catalog, "CATALOG", catalog.CATALOG + (line,))
    monkeypatch.setitem(catalog.DECLARED, NEW, line)
    name, view = f"lnrecency.claims.{MODULE}", f"lnrecency.report.views.{MODULE}"
    module = importlib.import_module(name)
    importlib.import_module(view)
    yield module
    from lnrecency.inference.stats import BUDGET

    sys.modules.pop(name, None)
    sys.modules.pop(view, None)
    REGISTERED.pop(NEW, None)
    for key in [k for k in BUDGET.entries if k.startswith(f"{NEW} ")]:  # the copy's checks leave the session's budget
        del BUDGET.entries[key]
        BUDGET.families.discard(key)


def test_a_copied_claim_is_declared_registered_and_listed(copied, capsys):
    from lnrecency.cli.app import main

    entry = REGISTERED[NEW]
    assert entry.module == f"lnrecency.claims.{MODULE}" and entry.description.startswith("a copy of C3")
    assert [t.stem for t in outputs.VIEWS[NEW].tables] == ["x99_scores"]  # its own table, beside C3's
    assert NEW in catalog.ids() and NEW not in catalog.trained_ids()
    assert main(["verify", "--list"]) == 0
    out = capsys.readouterr().out
    assert f"{NEW}    a copy of C3" in out
    assert copied.KEEPS == catalog.declared("C3").text("keeps")  # read from the catalogue, not copied


def test_a_copied_claim_evaluates_and_decides_declared_statements(copied):
    from lnrecency.inference.stats import BUDGET

    rows = REGISTERED[NEW].evaluate(quick=True)
    assert {r.id for r in rows} == {NEW} and rows
    for r in rows:
        assert catalog.statement_source(NEW, r.statement) == catalog.SOURCES["ours"]
    assert any(name.startswith(f"{NEW} keeps[") for name in BUDGET.entries)  # its own false-alarm entries


def test_a_module_registering_an_undeclared_claim_is_refused():
    from lnrecency.claims.declare import claim

    with pytest.raises(KeyError, match="must be one of"):
        claim("X99")  # a placeholder ID: no real claim can take it
    with pytest.raises(ValueError, match="declared in the catalogue with module"):
        claim("C3", module="lnrecency.claims.parameter_free.elsewhere")(lambda **kw: [])
    with pytest.raises(ValueError, match="available="):
        claim("TT1", module="lnrecency.claims.trained.tt1_tt4_thesis_text")(lambda **kw: [])
