"""The false-alarm budget under pytest-xdist (issue 54): each worker hands its registrations to the controller, whose
ledger is the union of them all. Two planted modules on two workers register one comparison each at a rate the limit
allows once but not twice: the union is over the limit and the run fails, although each worker alone is under it (at
a rate it allows twice, the same hooks pass the union)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from lnrecency.inference.stats import SUITE_LIMITS

ROOT = Path(__file__).resolve().parents[2]
CASES = Path(__file__).resolve().parent / "xdist_cases"


def _run(rate: float) -> subprocess.CompletedProcess:
    env = {**os.environ, "LNRECENCY_PLANTED_RATE": repr(rate)}
    env.pop("PYTEST_XDIST_WORKER", None)
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2",
                           str(CASES / "budget_a.py"), str(CASES / "budget_b.py")],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


def test_the_controller_checks_the_union_of_the_workers_registrations():
    """Each worker alone is under the limit (75% of it); their union is over it, and the run fails."""
    pytest.importorskip("xdist")
    proc = _run(0.75 * SUITE_LIMITS["normal"])
    out = proc.stdout + proc.stderr
    assert "2 passed" in out and "registered Monte Carlo comparisons: 2 in 2 checks" in out, out
    assert "OVER BUDGET" in out and proc.returncode == 1, out


@pytest.mark.parametrize("share, over", [(0.4, False), (0.75, True)])
def test_a_workers_registrations_reach_the_controllers_ledger(monkeypatch, share, over):
    """The two hooks of that run, in this process: a worker's ending writes its ledger into its output, the
    controller merges each worker's output; under the limit twice (40%) the union passes; a family stays one."""
    from types import SimpleNamespace

    from lnrecency.inference.budget import Budget

    conf = sys.modules["conftest"]
    outputs = []
    for name in ("a", "b"):
        worker = Budget()
        worker.register(f"planted {name}", 2, rate=share * SUITE_LIMITS["normal"], family=True)
        monkeypatch.setattr(conf, "BUDGET", worker)
        session = SimpleNamespace(config=SimpleNamespace(workeroutput={}), exitstatus=0)
        conf.pytest_sessionfinish(session, 0)
        outputs.append(session.config.workeroutput)
    controller = Budget()
    monkeypatch.setattr(conf, "BUDGET", controller)
    for out in outputs:
        conf.pytest_testnodedown(SimpleNamespace(workeroutput=out), None)
    assert controller.comparisons() == 4 and controller.decisions() == 2  # two families of two entries
    assert bool(controller.over_limit()) == over


def test_a_module_and_the_modules_that_share_a_session_fixture_are_one_group():
    conf = sys.modules["conftest"]
    from types import SimpleNamespace

    def item(nodeid, *names):
        return SimpleNamespace(nodeid=nodeid, fixturenames=list(names))

    items = [item("tests/a/test_x.py::test_1", "tmp_path"), item("tests/a/test_x.py::test_2", "quick_evidence_session"),
             item("proofs_check/test_c.py::test_3", "quick_verdicts"), item("tests/b/test_y.py::test_4", "tmp_path"),
             item("tests/b/test_y.py::test_5", "trained_cache"), item("tests/b/test_z.py::test_6", "tmp_path")]
    assert conf.xdist_groups(items) == {
        "tests/a/test_x.py::test_1": "quick", "tests/a/test_x.py::test_2": "quick",  # the whole module
        "proofs_check/test_c.py::test_3": "quick", "tests/b/test_y.py::test_4": "trained",
        "tests/b/test_y.py::test_5": "trained", "tests/b/test_z.py::test_6": "tests/b/test_z.py"}


def test_a_groups_cost_is_its_tests_and_one_setup_of_each_shared_fixture():
    conf = sys.modules["conftest"]
    from types import SimpleNamespace

    items = [SimpleNamespace(nodeid="tests/a/test_x.py::t1", fixturenames=["big"]),
             SimpleNamespace(nodeid="tests/a/test_x.py::t2", fixturenames=["big", "tmp_path"]),
             SimpleNamespace(nodeid="tests/b/test_y.py::t3", fixturenames=[])]
    groups = conf.xdist_groups(items)
    costs = conf.group_costs(items, groups, {"tests/a/test_x.py::t1": 1.0, "tests/a/test_x.py::t2": 2.0},
                             {"tests::big": 30.0})
    assert costs == {"tests/a/test_x.py": 33.0, "tests/b/test_y.py": 0.0}  # the fixture once, a new test at 0
