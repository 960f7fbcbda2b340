"""Registry of every claim check: id -> evaluator; ``evaluate(ids)`` runs them and returns ClaimResults.

Ids: "T1" (Theorem 1, seed text), "C2".."C9" (docs/model.md, claims C2-C9), "P1".."P9" (the authors' printed
derivation: P1-P7 symbolic, lnrecency.claims.printed; P8-P9 numeric, lnrecency.claims.printed_numeric).
A module may return several ClaimResults with the same id: one per setting group (confirmed in some
settings, refuted in others).
"""
from __future__ import annotations

import importlib
import multiprocessing as mp
import sys
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Iterable

from tqdm import tqdm

from lnrecency.claims.catalog import CATALOG
from lnrecency.verdicts import ClaimResult

#: id -> (module under lnrecency.claims, one-line description), derived from the catalog
CLAIMS: dict[str, tuple[str, str]] = {c.id: (c.module, c.description) for c in CATALOG if c.module}
#: the ids whose verdicts need trained models (torch; minutes of training, cached): evaluated only when
#: named, or with ``trained=True``
TRAINED: tuple[str, ...] = tuple(c.id for c in CATALOG if c.module and c.training)


def _run(module: str, wanted: list[str], quick: bool) -> list[ClaimResult]:
    """The module's results for the ``wanted`` ids. A module holding several claims maps each id to its
    own evaluator (``BY_ID``), so asking for one of them does not evaluate the others."""
    mod = importlib.import_module(f"lnrecency.claims.{module}")
    by_id = getattr(mod, "BY_ID", None)
    if by_id is None:
        results = mod.evaluate(quick=quick, progress=False)
    else:
        results = [r for cid in by_id if cid in wanted for r in by_id[cid](quick=quick)]
    return [r for r in results if r.id in wanted]


def check_ids(ids: Iterable[str] | None, *, trained: bool = False) -> list[str]:
    """The claim ids asked for (upper-cased, deduplicated, validated); None: every claim, those that need
    trained models only with ``trained``."""
    if ids is None:
        return [cid for cid in CLAIMS if trained or cid not in TRAINED]
    if isinstance(ids, str):
        ids = [ids]
    out = []
    for cid in ids:
        key = str(cid).upper()
        if key not in CLAIMS:
            raise ValueError(f"claim id must be one of {', '.join(CLAIMS)}; got {cid!r}")
        if key not in out:
            out.append(key)
    return out


def _run_in_worker(module: str, wanted: list[str], quick: bool) -> tuple[list[ClaimResult], dict]:
    """:func:`_run` in a worker process, with the false-alarm budget entries it registered there."""
    from lnrecency.stats import BUDGET

    BUDGET.clear()
    return _run(module, wanted, quick), dict(BUDGET.entries)


def _tasks(wanted: list[str]) -> list[tuple[str, list[str]]]:
    """One task per module, or per claim id where the module evaluates each id on its own (BY_ID)."""
    modules = []
    for cid in wanted:
        if CLAIMS[cid][0] not in modules:
            modules.append(CLAIMS[cid][0])
    tasks = []
    for m in modules:
        own = [cid for cid in wanted if CLAIMS[cid][0] == m]
        split = hasattr(importlib.import_module(f"lnrecency.claims.{m}"), "BY_ID")
        tasks += [(m, [cid]) for cid in own] if split else [(m, wanted)]
    return tasks


def _collect(futures: list, show: bool = False) -> list[ClaimResult]:
    """The workers' results in registry order; their false-alarm registrations merged into this process's."""
    from lnrecency.stats import BUDGET

    results: list[ClaimResult] = []
    for fut in tqdm(futures, disable=not show, desc="claims", unit="module", leave=False):
        part, entries = fut.result()
        results += part
        BUDGET.entries.update(entries)
    return _in_order(results)


def _in_order(results: list[ClaimResult]) -> list[ClaimResult]:
    order = {cid: q for q, cid in enumerate(CLAIMS)}
    return sorted(results, key=lambda r: order.get(r.id, len(order)))


@dataclass
class Running:
    """Claims being evaluated in forked worker processes (:func:`start`): ``pool`` (shut it down when done),
    ``result()`` (the ClaimResults in registry order, the workers' false-alarm registrations merged into this
    process's budget) and ``stop()`` (on interrupt: the workers ignore SIGINT, lnrecency.bounded.worker_init)."""

    pool: ProcessPoolExecutor
    futures: list

    def result(self, show: bool = False) -> list[ClaimResult]:
        return _collect(self.futures, show)

    def stop(self) -> None:
        """Kill the workers now (SIGKILL: they hold nothing to clean up) and drop the queued tasks."""
        for proc in list((getattr(self.pool, "_processes", None) or {}).values()):  # CPython's worker table
            proc.kill()
        self.pool.shutdown(wait=False, cancel_futures=True)


def start(ids: Iterable[str] | None = None, *, quick: bool = False, trained: bool = False,
          jobs: int = 2) -> Running:
    """Start evaluating the claims ``ids`` in ``jobs`` forked processes (one task per claim module, or per
    claim id where the module evaluates each on its own) and return at once. Each module's seeds are its
    own, so the results do not depend on ``jobs`` or on which worker ran what. Needs the fork start method."""
    from lnrecency.bounded import worker_init
    from lnrecency.config import check_int

    wanted = check_ids(ids, trained=trained)
    jobs = check_int("jobs", jobs, minimum=1, maximum=64)
    tasks = _tasks(wanted)
    pool = ProcessPoolExecutor(max_workers=max(1, min(jobs, len(tasks))), mp_context=mp.get_context("fork"),
                               initializer=worker_init)
    return Running(pool, [pool.submit(_run_in_worker, m, ids_, quick) for m, ids_ in tasks])


def evaluate(ids: Iterable[str] | None = None, *, quick: bool = False,
             progress: bool | None = None, trained: bool = False, jobs: int = 1) -> list[ClaimResult]:
    """Evaluate the claims ``ids`` (all by default); results in registry order, filtered to ``ids``.

    ``quick``: smaller grids and sample sizes (the pytest default); ``progress``: a tqdm bar over the
    claim modules (None: only when stderr is a terminal); ``trained``: with ``ids=None``, the claims on
    trained models too (:data:`TRAINED`). ``jobs``: claim modules evaluated in that many forked processes
    (each module's seeds are its own, so the results are the same for every ``jobs``; the workers'
    false-alarm registrations are merged into this process's budget; workers die with this process).
    """
    from lnrecency.config import check_int

    wanted = check_ids(ids, trained=trained)
    jobs = check_int("jobs", jobs, minimum=1, maximum=64)
    show = sys.stderr.isatty() if progress is None else bool(progress)
    if jobs > 1 and len(wanted) > 1 and "fork" in mp.get_all_start_methods():
        running = start(wanted, quick=quick, jobs=jobs)
        try:
            return running.result(show)
        except BaseException:
            running.stop()
            raise
        finally:
            running.pool.shutdown(wait=True)
    results: list[ClaimResult] = []
    for module, ids_ in tqdm(_tasks(wanted), disable=not show, desc="claims", unit="module", leave=False):
        results += _run(module, ids_, quick)
    return _in_order(results)
