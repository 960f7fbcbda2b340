"""A claim is one contract checked when it is declared (issue 82, item 3): its module named by its IDs and present,
its view module present exactly when it declares one (a missing or misspelt one refused at declaration, when the
catalogue is imported, and again when the views load, naming both), and placeholder IDs a real claim cannot take."""
from __future__ import annotations

import dataclasses

import pytest

from lnrecency.claims import catalog


def test_a_module_not_named_by_its_ids_is_refused_at_declaration():
    with pytest.raises(ValueError, match="claim C42's module 'parameter_free.c4_anisotropy' must be named by the IDs"):
        catalog.declare("C42", "parameter_free.c4_anisotropy", "t", catalog.S("s", "ours", "x"))
    assert catalog.declare("C4", "parameter_free.c4_anisotropy", "t", catalog.S("s", "ours", "x")).view


@pytest.mark.parametrize("cid, module, match", [
    ("C42", "parameter_free.c42_new", r"its claim module 'lnrecency/claims/parameter_free/c42_new.py' is missing"),
    ("C4", "parameter_free.c4_anisotropyy", r"claim module .* is missing \(or 'parameter_free.c4_anisotropyy' is "
                                            r"misspelt\)"),
    ("W1", "parameter_free.w1_rollout", r"its view module 'lnrecency/report/views/parameter_free/w1_rollout.py' is "
                                        r"missing .*; or declare view=False"),
])
def test_a_missing_or_misspelt_part_is_refused_at_declaration(cid, module, match):
    with pytest.raises(ValueError, match=match):
        catalog.declare(cid, module, "t", catalog.S("s", "ours", "x"))
    assert not catalog.declare("W1", "parameter_free.w1_rollout", "t", catalog.S("s", "ours", "x"), view=False).view


def test_placeholder_letters_are_the_tests_alone():
    assert not any(catalog.id_parts(c.id)[0] == catalog.PLACEHOLDER_LETTERS for c in catalog.CATALOG)
    catalog.declare("X1", "any_test_module", "t", catalog.S("s", "ours", "x"))  # a test's placeholder: any module


def _with(monkeypatch, decl):
    monkeypatch.setattr(catalog, "CATALOG", catalog.CATALOG + (decl,))


def test_a_declared_view_that_is_missing_or_misspelt_is_refused(monkeypatch):
    from lnrecency.claims import registry
    from lnrecency.report.views import registry as views

    # a declaration made past the catalogue's check (a second line of defence when the views load)
    decl = dataclasses.replace(catalog.declared("C4"), id="C42", module="parameter_free.c42_new")
    _with(monkeypatch, decl)
    monkeypatch.setattr(views, "MODULES", registry.MODULES + ("parameter_free.c42_new",))
    with pytest.raises(RuntimeError, match=r"claim C42 declares a view, but there is no module "
                                           r"lnrecency/report/views/parameter_free/c42_new.py"):
        views._view_modules()


def test_a_view_for_a_claim_that_declares_none_is_refused(monkeypatch):
    from lnrecency.report.views import registry as views

    t1 = catalog.declared("T1")
    monkeypatch.setattr(catalog, "CATALOG", tuple(dataclasses.replace(c, view=False) if c is t1 else c
                                                  for c in catalog.CATALOG))
    with pytest.raises(RuntimeError, match="t1_theorem1.py exists, but claim T1 declares view=False"):
        views._view_modules()


def test_every_claim_module_has_its_view_exactly_when_declared():
    import importlib.util

    for c in catalog.CATALOG:
        exists = importlib.util.find_spec(f"lnrecency.report.views.{c.module}") is not None
        assert exists == c.view, c.id
