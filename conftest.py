"""pytest configuration of the whole suite (tests/ and proofs_check/).

* hypothesis profiles: "ci" (default; few examples, no deadline) and "thorough" (many examples, and
  the tests marked ``thorough``: the same checks on more settings), selected by the environment
  variable LNRECENCY_HYPOTHESIS=thorough. Both derandomised (fixed seed):
  the same run gives the same examples.
* the false-alarm budget: every statistical comparison of the suite (Monte Carlo means, orderings and
  frequencies in proofs_check/, the sampler's two-sample tests and mean checks in tests/) registers
  itself in lnrecency.inference.stats.BUDGET;
  the terminal summary prints, in two parts (non-asymptotic "exact" bounds; "normal"-tail checks at a
  moderate rate), the union bound on the probability that a correct claim fails by chance in this run,
  and the run fails when a part exceeds its limit in lnrecency.inference.stats.SUITE_LIMITS. Split over
  pytest-xdist workers (``pytest -n 2``), each worker hands its registrations to the controller when it ends, and the
  controller's ledger, the union of them all, is the one printed and checked (a comparison registered by two workers,
  a shared fixture's, is one entry: the same name, the same draws).
* pytest-xdist (``-n 2`` in pyproject.toml's addopts; ``-n 0``: one process): the tests are grouped (``--dist
  loadgroup``, set whenever ``-n`` is given) so that shared setup is done once: a module's tests run on one worker
  (its module fixtures are set up once), and the modules that read the session's quick verdicts, report or evidence,
  or the trained-model cache, run on one worker per shared fixture. The groups are handed out costliest first (their
  measured CPU seconds, tests/test_costs.json). Each worker runs one BLAS / OpenMP thread.
"""
from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

from lnrecency.inference.stats import BASES, BUDGET, SUITE_LIMITS

settings.register_profile("ci", max_examples=25, deadline=None, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("thorough", max_examples=400, deadline=None, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow])
PROFILE = os.environ.get("LNRECENCY_HYPOTHESIS", "ci")
if PROFILE not in ("ci", "thorough"):
    raise ValueError(f"LNRECENCY_HYPOTHESIS must be 'ci' or 'thorough'; got {PROFILE!r}")
settings.load_profile(PROFILE)


def pytest_configure(config):
    # under pytest-xdist the tests are distributed by group (see pytest_collection_modifyitems): -n alone means
    # --dist load, which would set up a module's or the session's shared fixtures once per worker. A worker parses
    # the command line again, so it learns the controller's choice from its input (pytest_configure_node)
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None:
        config.option.loadgroup = bool(workerinput.get("lnrecency_loadgroup"))
    if getattr(config.option, "numprocesses", None):
        if getattr(config.option, "dist", "no") == "load":
            config.option.dist = "loadgroup"
            config.option.loadscopereorder = False  # groups go out in the order of the collection (by cost)
        # one BLAS / OpenMP thread per worker (the workers are started after this, with this environment): two
        # workers of two threads each on two cores would spin for each other. Results do not depend on it (the
        # library pins its own threads where it matters: numerics one_blas_thread, the decoders' `threads`)
        for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ.setdefault(var, "1")
    # every figure the tests draw is checked for small text and legend entries that its panels do not draw
    # (lnrecency.files.figure_record.figure_problems); a defect fails the test that drew it
    os.environ.setdefault("LNRECENCY_STRICT_FIGURES", "1")
    config.addinivalue_line("markers", "thorough: a slower repeat of a check that also runs by default "
                                       "(more settings or values); run with LNRECENCY_HYPOTHESIS=thorough")


#: fixtures whose setup is the marker ``slow``'s definition (a whole report or evidence store, trained decoders, a
#: real model loaded): every test that uses one, directly or through another fixture, is marked slow
SLOW_FIXTURES = frozenset({"quick_report_and_evidence", "quick_report_session", "quick_evidence_session",
                           "trained_cache", "tiny_runs", "smol"})


def measured_costs() -> tuple[float, dict[str, float], dict[str, float]]:
    """(threshold, {test id: its own CPU seconds}, {"baseid::name": CPU seconds of one setup of that shared
    fixture}) of tests/test_costs.json, written by benchmarks/profile_suite.py from one full run on the 2-core
    machine; (inf, {}, {}) when it is missing."""
    import json
    from pathlib import Path

    path = Path(__file__).resolve().parent / "tests" / "test_costs.json"
    if not path.is_file():
        return float("inf"), {}, {}
    data = json.loads(path.read_text(encoding="utf-8"))
    return (float(data["slow_cpu_seconds"]), {k: float(v["cpu"]) for k, v in data["tests"].items()},
            {k: float(v) for k, v in data.get("fixtures", {}).items()})


def shared_setups(item, fixtures: dict[str, float]) -> set[str]:
    """The keys ("baseid::name") of the shared fixtures of ``fixtures`` that ``item`` uses, each found where pytest
    looks for it: the test's module, then each folder up to the root's conftest.py."""
    module = item.nodeid.split("::")[0]
    parts = module.split("/")
    bases = [module] + ["/".join(parts[:q]) for q in range(len(parts) - 1, -1, -1)]
    keys = set()
    for name in getattr(item, "fixturenames", ()):
        for base in bases:
            if f"{base}::{name}" in fixtures:
                keys.add(f"{base}::{name}")
                break
    return keys


def shared_setup_cost(item, fixtures: dict[str, float]) -> float:
    """The most CPU seconds one of the shared fixtures ``item`` uses took to set up."""
    return max((fixtures[key] for key in shared_setups(item, fixtures)), default=0.0)


#: session fixtures whose tests run on one pytest-xdist worker (the group's name), so that each is set up once
SHARED_GROUPS = {"quick_verdicts": "quick", "quick_report_and_evidence": "quick", "quick_report_session": "quick",
                 "quick_evidence_session": "quick", "trained_cache": "trained"}


def xdist_groups(items) -> dict[str, str]:
    """{test id: its pytest-xdist group}: a module's tests are one group (its module fixtures are set up once, its tests
    run in their order), named for the first session fixture of :data:`SHARED_GROUPS` any of them uses (the modules
    that share one are one group), else for the module."""
    module_of = {item.nodeid: item.nodeid.split("::")[0] for item in items}
    group: dict[str, str] = {}
    for item in items:
        shared = [SHARED_GROUPS[name] for name in getattr(item, "fixturenames", ()) if name in SHARED_GROUPS]
        if shared:
            group.setdefault(module_of[item.nodeid], shared[0])
    return {nodeid: group.get(module, module) for nodeid, module in module_of.items()}


def group_costs(items, groups: dict[str, str], costs: dict[str, float], fixtures: dict[str, float]) -> dict[str, float]:
    """{group: measured CPU seconds}: its tests' own (tests/test_costs.json) and one setup of each shared fixture
    they use."""
    own: dict[str, float] = {}
    setups: dict[str, set] = {}
    for item in items:
        g = groups[item.nodeid]
        own[g] = own.get(g, 0.0) + costs.get(item.nodeid, 0.0)
        setups.setdefault(g, set()).update(shared_setups(item, fixtures))
    return {g: own[g] + sum(fixtures[key] for key in setups[g]) for g in own}


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's worker reads the group marks (it adds them to the test ids)
def pytest_collection_modifyitems(config, items):
    """Items marked ``thorough`` run only in the thorough profile; the default profile keeps the same
    check on fewer settings, so `pytest proofs_check` stays within its time goal. Items that use one of
    :data:`SLOW_FIXTURES`, and those whose own measured CPU time, or the setup of a shared fixture they use
    (tests/test_costs.json), reaches its threshold, are marked ``slow`` (``pytest -m 'not slow'``, the quick loop,
    leaves them out; the suite runs them)."""
    threshold, costs, fixtures = measured_costs()
    for item in items:
        if "slow" in item.keywords:
            continue
        if SLOW_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)
            continue
        cost = max(costs.get(item.nodeid, 0.0), shared_setup_cost(item, fixtures))
        if cost >= threshold:
            item.add_marker(pytest.mark.slow(measured=cost))
    if os.environ.get("PYTEST_XDIST_WORKER"):
        groups = xdist_groups(items)
        for item in items:
            item.add_marker(pytest.mark.xdist_group(groups[item.nodeid]))
        # the costliest groups first, by their measured CPU seconds (tests/test_costs.json: the tests' own and their
        # shared setups'), the order in which xdist hands them out (pytest_configure: --no-loadscope-reorder), so
        # that no long group starts last; a module's tests keep their order
        cost = group_costs(items, groups, costs, fixtures)
        items.sort(key=lambda item: (-cost[groups[item.nodeid]], groups[item.nodeid]))
    if PROFILE == "thorough":
        return
    skip = pytest.mark.skip(reason="thorough profile only (LNRECENCY_HYPOTHESIS=thorough)")
    for item in items:
        if "thorough" in item.keywords:
            item.add_marker(skip)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    terminalreporter.section("lnrecency false-alarm budget")
    terminalreporter.write_line(
        f"hypothesis profile: {PROFILE}; registered Monte Carlo comparisons: {BUDGET.comparisons()} "
        f"in {len(BUDGET.entries)} checks")
    what = {"exact": "non-asymptotic (Clopper-Pearson, empirical Bernstein)",
            "normal": "normal tail, asymptotic (CLT)"}
    for basis in BASES:
        total = BUDGET.total(basis)
        terminalreporter.write_line(
            f"  {what[basis]}: {BUDGET.comparisons(basis)} comparisons in {BUDGET.decisions(basis)} decisions "
            f"(a two-sided family of entries is one); P(a correct claim fails by chance) "
            f"<= {total:.3g} (union bound; limit {SUITE_LIMITS[basis]:g})"
            + ("" if total <= SUITE_LIMITS[basis] else "  ** OVER BUDGET **"))


def pytest_sessionfinish(session, exitstatus):
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:  # a pytest-xdist worker: its registrations go to the controller (plain types)
        entries, families = BUDGET.snapshot()
        workeroutput["lnrecency_budget"] = ({name: list(entry) for name, entry in entries.items()}, sorted(families))
        return
    dump = os.environ.get("LNRECENCY_BUDGET_DUMP")  # where the comparisons come from (a JSON file), on request
    if dump:
        import json

        with open(dump, "w", encoding="utf-8") as fh:
            json.dump({name: list(entry) for name, entry in BUDGET.entries.items()}, fh, indent=1, default=str)
    if BUDGET.over_limit() and session.exitstatus == 0:
        session.exitstatus = 1


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):
    """pytest-xdist, on the controller, before a worker starts: tell it whether the tests are distributed by group."""
    node.workerinput["lnrecency_loadgroup"] = node.config.option.dist == "loadgroup"


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    """pytest-xdist, on the controller: a worker ended; its budget registrations join the controller's ledger, the
    one the terminal summary prints and pytest_sessionfinish checks."""
    entries, families = getattr(node, "workeroutput", {}).get("lnrecency_budget", ({}, []))
    BUDGET.merge(({name: tuple(entry) for name, entry in entries.items()}, frozenset(families)))


@pytest.fixture(scope="session")
def word_corpus(tmp_path_factory):
    """A maker of tiny local corpora for the text plans' quick pipelines: ``make(name, seed)`` -> a folder of 30 files
    of 600 words drawn from ten, seeded."""
    import numpy as np

    def make(name: str, seed: int):
        corpus = tmp_path_factory.mktemp(name)
        rng = np.random.default_rng(seed)
        words = ["alpha", "beta", "gamma", "delta", "key", "value", "def", "return", "self", "print"]
        for q in range(30):
            (corpus / f"f{q:02d}.txt").write_text(" ".join(rng.choice(words, size=600)) + "\n")
        return corpus
    return make


@pytest.fixture(scope="session")
def trained_cache(tmp_path_factory):
    """One fresh $LNRECENCY_CACHE for the whole session, shared by the trained-model tests: the experiments
    key each run by the hash of its configuration (lnrecency.experiments.run_cache.key), so a configuration is
    trained once per session and every later test (any module) reads it. Fresh per session: what this machine
    trained before is never part of a test."""
    path = tmp_path_factory.mktemp("cache")
    old = os.environ.get("LNRECENCY_CACHE")
    os.environ["LNRECENCY_CACHE"] = str(path)
    yield path
    if old is None:
        del os.environ["LNRECENCY_CACHE"]
    else:
        os.environ["LNRECENCY_CACHE"] = old


@pytest.fixture(scope="session")
def quick_verdicts():
    """Every parameter-free claim evaluated in quick mode (``lnrecency verify --quick``), once per session (in two
    processes, or in this one on a pytest-xdist worker): (ids, results). proofs_check/test_claims.py checks them;
    the session's quick report is built on them."""
    from lnrecency.claims.registry import CLAIMS, TRAINED, evaluate

    ids = [cid for cid in CLAIMS if cid not in TRAINED]
    # two processes in a run of one process; one on a pytest-xdist worker (the other worker has a core's work)
    jobs = 1 if os.environ.get("PYTEST_XDIST_WORKER") else 2
    return ids, tuple(evaluate(ids, quick=True, progress=False, jobs=jobs))


class _Evaluated:
    """What lnrecency.claims.registry.start returns (no pool: the results are there already)."""

    pool = None

    def __init__(self, results):
        self._results = results

    def result(self, progress=None):
        return list(self._results)


@pytest.fixture(scope="session")
def quick_report_and_evidence(tmp_path_factory, quick_verdicts):
    """The quick report (``lnrecency report --quick``: seed 0, every format) and its evidence (what ``lnrecency verify
    --quick --out`` writes for it, byte for byte: tests/files/test_store.py checks the two writers agree), from one
    computation, once per session, with an empty experiment cache, so that what this machine has trained or counted
    is never part of them: (report folder, result, evidence folder). No test writes into them. Its verdict step is
    handed the session's quick verdicts (the same claims, settings and seeds; the results do not depend on the process
    that evaluates them, tests/inference/test_verdicts.py) instead of evaluating them a second time."""
    import lnrecency.report.build as build
    from lnrecency.report.build import build_report

    ids, results = quick_verdicts

    def handed(wanted, *, quick, jobs, **kwargs):
        assert quick and list(wanted) == ids and not kwargs, (list(wanted), quick, kwargs)
        return _Evaluated(results)

    out = tmp_path_factory.mktemp("quick-report") / "report"
    evidence = tmp_path_factory.mktemp("quick-evidence") / "ev"
    old = os.environ.get("LNRECENCY_CACHE")
    os.environ["LNRECENCY_CACHE"] = str(tmp_path_factory.mktemp("quick-report-empty-cache"))
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(build, "start", handed)
            result = build_report(out, quick=True, seed=0, progress=False, evidence_out=evidence)
    finally:
        if old is None:
            del os.environ["LNRECENCY_CACHE"]
        else:
            os.environ["LNRECENCY_CACHE"] = old
    return out, result, evidence


@pytest.fixture(scope="session")
def quick_report_session(quick_report_and_evidence):
    """The session's quick report: (folder, result), read by tests/report/test_report.py and test_store.py."""
    out, result, _ = quick_report_and_evidence
    return out, result


@pytest.fixture(scope="session")
def quick_evidence_session(quick_report_and_evidence):
    """The session's quick evidence store: tests/files/test_store.py renders it against the direct quick report,
    and the notebooks' tests (tests/report/test_notebooks.py) render from it instead of each computing its own quick
    data."""
    return quick_report_and_evidence[2]
