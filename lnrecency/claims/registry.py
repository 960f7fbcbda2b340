"""Registry of every claim check: id -> evaluator; ``evaluate(ids)`` runs them and returns ClaimResults.

Each claim is declared in :mod:`lnrecency.claims.catalog`; its module attaches its evaluator
(:func:`lnrecency.claims.declare.claim`). This registry imports the claim modules, in :data:`MODULES` order (the
catalogue's), and orders the claims as the catalogue does; a claim
declared there with no evaluator is an error, and so is a verdict on a statement its claim does not declare. A
claim whose experiment's cache is damaged gives rows that say so (:func:`damaged`), never an exception. Ids: "T1"
(Theorem 1, seed text), "C2".."C9" (docs/model.md, claims C2-C9), "P1".."P9" (the authors' printed derivation),
"TM1".."TM5", "S2.1".."S3.3", "TT1".."TT4", "TV1".."TV6" and "W2".."W4" (trained models), "R1" (real pretrained
decoders); "W1" (Wu et al.'s rollout, in the limit).
An evaluator may return several ClaimResults with its id: one per setting group (confirmed in some settings,
refuted in others).
"""
from __future__ import annotations

import dataclasses
import importlib
import math
import multiprocessing as mp
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Iterable

from lnrecency.claims import catalog
from lnrecency.claims.declare import REGISTERED, Claim
from lnrecency.experiments.run_cache import DamagedCache, note_reads
from lnrecency.inference.stats import BUDGET
from lnrecency.inference.verdicts import ClaimResult
from lnrecency.runtime.arguments import check_int
from lnrecency.runtime.child import worker_init

#: the claim modules under lnrecency.claims, in report order (each registers its claims when imported)
MODULES: tuple[str, ...] = catalog.modules()


def untagged_records(module) -> list[str]:
    """The evidence records ``module`` defines that the store has no tag for (lnrecency/files/record_tags.py):
    checked as each claim module is loaded, so a new claim's records are named at once, not when its first
    evaluation is stored."""
    from lnrecency.files.record_tags import TAGS
    from lnrecency.inference.evidence import Evidence

    tagged = set(TAGS.values())
    return sorted(f"{module.__name__}:{c.__qualname__}" for c in vars(module).values()
                  if isinstance(c, type) and issubclass(c, Evidence) and c.__module__ == module.__name__
                  and f"{module.__name__}:{c.__qualname__}" not in tagged)


def _catalog() -> tuple[Claim, ...]:
    for m in MODULES:
        missing = untagged_records(importlib.import_module(f"lnrecency.claims.{m}"))
        if missing:
            raise RuntimeError(f"give these evidence records a tag in lnrecency/files/record_tags.py (tag -> "
                               f"'module:qualname'): {missing}")
    rank = {f"lnrecency.claims.{m}": q for q, m in enumerate(MODULES)}
    strays = sorted({c.module for c in REGISTERED.values()} - set(rank))
    if strays:
        raise RuntimeError(f"claims declared outside lnrecency.claims.registry.MODULES: {strays}")
    missing = [cid for cid in catalog.DECLARED if cid not in REGISTERED]
    if missing:
        raise RuntimeError(f"claims declared in lnrecency.claims.catalog with no registered evaluator: {missing}")
    order = {cid: q for q, cid in enumerate(catalog.DECLARED)}
    return tuple(sorted(REGISTERED.values(), key=lambda c: (order.get(c.id, len(order)), rank[c.module])))


#: every registered claim, in report order (what each shows: lnrecency.report.views.registry)
CATALOG: tuple[Claim, ...] = _catalog()
#: id -> Claim
CLAIMS: dict[str, Claim] = {c.id: c for c in CATALOG}
#: the ids whose verdicts need trained models (torch; minutes of training, cached): evaluated only when
#: named, or with ``trained=True``
TRAINED: tuple[str, ...] = tuple(cid for cid, c in CLAIMS.items() if c.training)


def _run(cid: str, quick: bool, progress: bool | None = False) -> list[ClaimResult]:
    """Claim ``cid``'s results (its own evaluator: asking for one claim evaluates no other). ``progress`` reaches
    the claims on trained models only (their training shows progress lines; nothing else does)."""
    shown = progress if cid in TRAINED else False
    try:
        out = [r for r in CLAIMS[cid].evaluate(quick=quick, progress=shown) if r.id == cid]
    except DamagedCache as exc:  # reported as damaged, with the file and the fix: never "not run", never a verdict
        return damaged(cid, str(exc))
    for r in out:  # every verdict decides a statement its claim declares, word for word
        catalog.statement_source(cid, r.statement)
    return labelled([checked_part(r) for r in out] if quick else out)


#: what a quick row says when its module has not named the part of the domain it checked
QUICK_PART = ("on the quick run's settings", "the rest of its domain (the full run checks it)")


def checked_part(r: ClaimResult) -> ClaimResult:
    """A quick row of a statement the catalogue declares checked in part by the quick run
    (:func:`lnrecency.claims.catalog.checked_in_part`): never confirmed (issue 84, item 2). A module names the part
    it checked itself (:meth:`ClaimResult.on_part`, e.g. "at layers 3-4"); a confirmed row whose module did not is
    made inconclusive here, in :data:`QUICK_PART`'s words, so that no claim can forget."""
    if not isinstance(r, ClaimResult) or r.not_run or not catalog.checked_in_part(r.id, r.statement):
        return r
    if r.qualifiers is not None and r.qualifiers.reason == "partial":
        return r
    return r.on_part(*QUICK_PART)


def labelled(results: list[ClaimResult]) -> list[ClaimResult]:
    """Each result labelled by whose statement it decides (issue 75; :func:`lnrecency.claims.catalog.label`),
    whatever its module, or stored evidence written before the rule, wrote."""
    return [r if not isinstance(r, ClaimResult) or r.not_run or catalog.label(r.id, r.statement, r.verdict) ==
            r.verdict else dataclasses.replace(r, verdict=catalog.label(r.id, r.statement, r.verdict))
            for r in results]


def damaged(cid: str, reason: str) -> list[ClaimResult]:
    """One row per declared statement of ``cid``, its evidence :class:`~lnrecency.inference.evidence.Damaged`."""
    from lnrecency.inference.evidence import Damaged

    return [ClaimResult(cid, catalog.result_source(cid, s.text), s.text, {}, "inconclusive", Damaged(reason=reason),
                        f"Not evaluated: the cached results are damaged: {reason}")
            for s in catalog.declared(cid).statements]


def available(cid: str, quick: bool) -> bool:
    """Whether the report evaluates ``cid``: a parameter-free claim always; one on trained or real models when its
    experiment is cached, or its cache is damaged (so that the report names the file)."""
    c = CLAIMS[cid]
    if not c.training:
        return True
    try:
        return bool(c.available(quick))
    except ImportError:
        return False
    except DamagedCache:
        return True


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


def _run_in_worker(cid: str, quick: bool) -> tuple[list[ClaimResult], tuple, list]:
    """:func:`_run` in a worker process, with the false-alarm budget registrations it made there and the cache
    entries it read (lnrecency.experiments.run_cache.reads)."""
    from lnrecency.experiments import run_cache

    BUDGET.clear()
    run_cache.clear_reads()
    return _run(cid, quick), BUDGET.snapshot(), run_cache.reads()


def _collect(futures: list, show: bool | None = False) -> list[ClaimResult]:
    """The workers' results in registry order; their false-alarm registrations merged into this process's."""
    from lnrecency.runtime.progress import Progress

    results: list[ClaimResult] = []
    bar = Progress(len(futures), "claims", "claims", enabled=None if show is None else bool(show))
    try:
        for fut in futures:
            part, registered, used = fut.result()
            results += part
            BUDGET.merge(registered)
            note_reads(used)
            bar.update(1, part[0].id if part else "")
    finally:
        bar.close()
    return _in_order(results)


def _in_order(results: list[ClaimResult]) -> list[ClaimResult]:
    order = {cid: q for q, cid in enumerate(CLAIMS)}
    return sorted(results, key=lambda r: order.get(r.id, len(order)))


@dataclass
class Running:
    """Claims being evaluated in forked worker processes (:func:`start`): ``pool`` (shut it down when done),
    ``result()`` (the ClaimResults in registry order, the workers' false-alarm registrations merged into this
    process's budget) and ``stop()`` (on interrupt: the workers ignore SIGINT, lnrecency.runtime.child.worker_init)."""

    pool: ProcessPoolExecutor
    futures: list

    def result(self, show: bool | None = False) -> list[ClaimResult]:
        return _collect(self.futures, show)

    def stop(self) -> None:
        """Kill the workers now (SIGKILL: they hold nothing to clean up) and drop the queued tasks."""
        for proc in list((getattr(self.pool, "_processes", None) or {}).values()):  # CPython's worker table
            proc.kill()
        self.pool.shutdown(wait=False, cancel_futures=True)


#: each claim's measured evaluation time, quick and full: the one file :func:`start` orders the workers' tasks by
SECONDS_FILE = "data/claim_seconds.json"


def measured_seconds(quick: bool) -> dict[str, float]:
    """Claim -> CPU seconds of its evaluation (``lnrecency/data/claim_seconds.json``, written by
    ``benchmarks/bench_report.py --write-costs``), for the quick or the full settings; every field checked (a
    malformed file is an error naming it, never a silent order)."""
    from importlib.resources import files

    return checked_seconds(files("lnrecency").joinpath(SECONDS_FILE).read_text(encoding="utf-8"), quick)


def checked_seconds(text: str, quick: bool) -> dict[str, float]:
    """:func:`measured_seconds` from the file's ``text``."""
    import json

    try:
        data = json.loads(text) if len(text) < 1 << 20 else None
    except ValueError:
        data = None
    table = data.get("quick" if quick else "full") if isinstance(data, dict) else None
    if not isinstance(table, dict) or not all(
            isinstance(k, str) and isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
            and v >= 0 for k, v in table.items()):
        raise ValueError(f"lnrecency/{SECONDS_FILE}: {'quick' if quick else 'full'} must map claim IDs to finite "
                         f"seconds >= 0")
    return {k: float(v) for k, v in table.items()}


def longest_first(ids: list[str], quick: bool) -> list[str]:
    """``ids`` in the order the workers take them: the longest measured evaluation first (a claim not measured
    first of all, as if the longest), ties in registry order. At the measured times two workers' shares then come
    out even, where in registry order P9 and C5 came late and one worker ran about a second longer on the quick
    report (two on the full one); the results do not depend on the order."""
    seconds = measured_seconds(quick)
    return sorted(ids, key=lambda cid: -seconds.get(cid, math.inf))


def start(ids: Iterable[str] | None = None, *, quick: bool = False, trained: bool = False,
          jobs: int = 2) -> Running:
    """Start evaluating the claims ``ids`` in ``jobs`` forked processes (one task per claim, the longest first:
    :func:`longest_first`) and return at once. Each claim's seeds are its own, so the results do not depend on
    ``jobs``, on the order or on which worker ran what; they are collected in registry order. Needs the fork start
    method."""
    wanted = check_ids(ids, trained=trained)
    jobs = check_int("jobs", jobs, minimum=1, maximum=64)
    pool = ProcessPoolExecutor(max_workers=max(1, min(jobs, len(wanted))), mp_context=mp.get_context("fork"),
                               initializer=worker_init)
    futures = {cid: pool.submit(_run_in_worker, cid, quick) for cid in longest_first(wanted, quick)}
    return Running(pool, [futures[cid] for cid in wanted])


def evaluate(ids: Iterable[str] | None = None, *, quick: bool = False,
             progress: bool | None = None, trained: bool = False, jobs: int = 1) -> list[ClaimResult]:
    """Evaluate the claims ``ids`` (all by default); results in registry order, filtered to ``ids``.

    ``quick``: smaller grids and sample sizes (the pytest default); ``progress``: None (default) a bar over the
    claims on a terminal, a line every 10 s otherwise (lnrecency.runtime.progress); False: nothing; ``trained``: with
    ``ids=None``, the claims on trained
    models too (:data:`TRAINED`). ``jobs``: claims evaluated in that many forked processes (each claim's
    seeds are its own, so the results are the same for every ``jobs``; the workers' false-alarm
    registrations are merged into this process's budget; workers die with this process).
    """
    wanted = check_ids(ids, trained=trained)
    jobs = check_int("jobs", jobs, minimum=1, maximum=64)
    show = None if progress is None else bool(progress)
    if jobs > 1 and len(wanted) > 1 and "fork" in mp.get_all_start_methods():
        running = start(wanted, quick=quick, jobs=jobs)
        try:
            return running.result(show)
        except BaseException:
            running.stop()
            raise
        finally:
            running.pool.shutdown(wait=True)
    from lnrecency.runtime.progress import Progress

    results: list[ClaimResult] = []
    bar = Progress(len(wanted), "claims", "claims", enabled=show)
    try:
        for cid in wanted:
            bar.update(0, cid)
            results += _run(cid, quick, None if show is None else show)
            bar.update(1, cid)
    finally:
        bar.close()
    return _in_order(results)
