"""Independent trainings in parallel worker processes, with the same bytes as serially.

Each job is a picklable call ``fn(*args)`` that trains one model with a fixed number of torch threads
(deterministic kernels, lnrecency.experiments.decoders.train.deterministic) and returns a JSON-able record; the records
come
back in job order whatever the number of workers, so a run with 2 workers writes what a serial run writes.
Workers start by ``spawn`` (no state inherited from the parent's torch), ignore Ctrl-C (the parent stops
them), and are killed when the parent is interrupted.
"""
from __future__ import annotations

import os
from typing import Callable

__all__ = ["run_jobs", "default_workers", "check_workers"]


def default_workers() -> int:
    """min(2, CPUs): two single-threaded trainings at once on this project's 2-core machines."""
    return max(1, min(2, os.cpu_count() or 1))


def check_workers(workers) -> int:
    from lnrecency.runtime.arguments import check_int

    return check_int("workers", workers, minimum=1, maximum=max(2, os.cpu_count() or 1))


def _worker_init(parent: int) -> None:
    """A worker dies with its parent whatever ends it, SIGKILL included (PR_SET_PDEATHSIG; a parent already gone
    before that was set is seen by the parent id), and leaves Ctrl-C to the parent."""
    import signal

    from lnrecency.runtime.child import die_with_parent

    die_with_parent()
    if os.getppid() != parent:
        os._exit(1)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _call(job):
    fn, args = job
    return fn(*args)


def run_jobs(fn: Callable, jobs: list, *, workers: int | None = None, done: Callable | None = None,
             label: Callable = str) -> list:
    """[fn(*args) for args in jobs], ``workers`` at a time in worker processes (1: in this process);
    ``done(index, record)`` is called in the parent as each job finishes (to cache it and report progress)."""
    workers = default_workers() if workers is None else check_workers(workers)
    out: list = [None] * len(jobs)
    if workers == 1 or len(jobs) <= 1:
        for q, args in enumerate(jobs):
            out[q] = fn(*args)
            if done is not None:
                done(q, out[q])
        return out
    from concurrent.futures import ProcessPoolExecutor, as_completed
    from multiprocessing import get_context

    pool = ProcessPoolExecutor(max_workers=min(workers, len(jobs)), mp_context=get_context("spawn"),
                               initializer=_worker_init, initargs=(os.getpid(),))
    try:
        futures = {pool.submit(_call, (fn, args)): q for q, args in enumerate(jobs)}
        for fut in as_completed(futures):
            q = futures[fut]
            out[q] = fut.result()
            if done is not None:
                done(q, out[q])
    except BaseException:
        for proc in list((getattr(pool, "_processes", None) or {}).values()):
            proc.kill()
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown()
    return out
