"""lnrecency.claims.declare: a claim module attaches its evaluator to the catalogue's declaration; the registry refuses
what it cannot order. What a claim shows is registered on the report floor (tests/report/test_views.py)."""
from __future__ import annotations

import pytest

from lnrecency.claims import declare, registry  # the registry imports (and so registers) every claim module
from lnrecency.claims.declare import REGISTERED, claim


def _declare_x(monkeypatch, cid: str) -> None:
    """One catalogue line for a test claim whose module is this test file."""
    from lnrecency.claims import catalog

    line = catalog.declare(cid, __name__.removeprefix("lnrecency.claims."), "a test claim",
                           catalog.S("s", "ours", "A test statement."))
    monkeypatch.setitem(catalog.DECLARED, cid, line)


def test_the_decorator_registers_and_returns_the_evaluator(monkeypatch):
    monkeypatch.setattr(declare, "REGISTERED", dict(REGISTERED))
    _declare_x(monkeypatch, "X1")

    @claim("X1", module=f"lnrecency.claims.{__name__}")
    def evaluate(*, quick=False, progress=None):
        return []

    entry = declare.REGISTERED["X1"]
    assert evaluate.__name__ == "evaluate" and entry.evaluate is evaluate
    assert entry.module == f"lnrecency.claims.{__name__}" and entry.description == "a test claim"
    assert not hasattr(entry, "tables")  # a claim draws nothing: its views are on the report floor


def test_an_id_declared_in_two_modules_is_refused(monkeypatch):
    monkeypatch.setattr(declare, "REGISTERED", dict(REGISTERED))
    with pytest.raises(ValueError, match="T1 is declared in the catalogue with module"):  # a second module
        claim("T1", module="lnrecency.claims.parameter_free.c3_residual")(lambda *, quick=False, progress=None: [])
    with pytest.raises(TypeError):  # the view keywords are gone from the claims floor
        claim("T1", tables=())


def test_the_registry_refuses_a_claim_declared_outside_its_modules(monkeypatch):
    from lnrecency.claims.declare import Claim

    monkeypatch.setitem(REGISTERED, "X9", Claim("X9", "somewhere.else", "stray", None))
    with pytest.raises(RuntimeError, match="somewhere.else"):
        registry._catalog()
