"""The quick loop's slow marks come from measurement (tests/test_costs.json, benchmarks/profile_suite.py): the file is
well formed, a shared fixture's setup is found where pytest finds the fixture, and a test over the threshold, by
itself or by a fixture it uses, is marked slow while one under it is not."""
from __future__ import annotations

import math
import sys
from types import SimpleNamespace

import pytest


def _conftest():
    return sys.modules["conftest"]  # the root conftest.py, loaded by pytest before any test module


def test_the_costs_file_is_well_formed():
    threshold, tests, fixtures = _conftest().measured_costs()
    assert 0 < threshold < 60
    assert len(tests) > 500 and all(math.isfinite(c) and c >= 0 for c in (*tests.values(), *fixtures.values()))
    assert all("::" in k for k in (*tests, *fixtures))


def test_a_shared_fixture_is_found_where_pytest_finds_it():
    cost = _conftest().shared_setup_cost
    fixtures = {"::data": 1.0, "tests::data": 2.0, "tests/a/test_x.py::data": 3.0, "::other": 9.0}

    def item(nodeid, *names):
        return SimpleNamespace(nodeid=nodeid, fixturenames=list(names))

    assert cost(item("tests/a/test_x.py::test_1", "data"), fixtures) == 3.0  # the module's own fixture first
    assert cost(item("tests/a/test_y.py::test_1", "data"), fixtures) == 2.0  # then the nearest folder's conftest
    assert cost(item("proofs_check/test_z.py::test_1", "data"), fixtures) == 1.0  # then the root's
    assert cost(item("proofs_check/test_z.py::test_1", "data", "other"), fixtures) == 9.0  # the most of its fixtures
    assert cost(item("proofs_check/test_z.py::test_1", "tmp_path"), fixtures) == 0.0  # not shared: not counted


@pytest.mark.parametrize("own, shared, slow", [(0.1, 0.0, False), (0.1, 99.0, True), (99.0, 0.0, True)])
def test_marks_follow_the_measured_costs(monkeypatch, own, shared, slow):
    conf = _conftest()
    monkeypatch.setattr(conf, "measured_costs", lambda: (2.5, {"tests/test_q.py::test_a": own},
                                                         {"::shared": shared}))
    monkeypatch.setattr(conf, "PROFILE", "thorough")  # no thorough-only skips in the way
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)  # no pytest-xdist group marks either
    marks = []
    item = SimpleNamespace(nodeid="tests/test_q.py::test_a", fixturenames=["shared"], keywords={},
                           add_marker=marks.append)
    conf.pytest_collection_modifyitems(None, [item])
    assert [m.name for m in marks] == (["slow"] if slow else [])
