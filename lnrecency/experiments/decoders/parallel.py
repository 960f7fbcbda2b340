"""Independent trainings in parallel worker processes, with the same bytes as serially.

Each job is a picklable call ``fn(*args)`` that trains one model with a fixed number of torch threads
(deterministic kernels, lnrecency.experiments.decoders.train.deterministic) and returns a JSON-able record; the records
come
back in job order whatever the number of workers, so a run with 2 workers writes what a serial run writes.
Workers start by ``spawn`` (no state inherited from the parent's torch), ignore Ctrl-C (the parent stops
them), and are killed when the parent is interrupted.

``scheduler``: "local" (the worker processes above, the default) or the address of a running Dask scheduler
("tcp://HOST:PORT", the ``dask`` extra; the client of :mod:`lnrecency.runtime.distributed`, as the sweep's): each job
is one Dask task, its record comes back to this process (which caches it) and the records are the same bytes as
local workers give. A job that writes files itself (a run keeping its weights) writes them on the worker that runs
it: point the workers' ``LNRECENCY_CACHE`` at a folder shared with this machine. A worker lost mid-run costs that
run only: Dask runs the task again on another worker (its ``distributed.scheduler.allowed-failures``), and a run
that still fails is named in the error raised after every other run has finished (and been cached).
"""
from __future__ import annotations

import os
from typing import Callable

__all__ = ["run_jobs", "default_workers", "check_workers", "check_scheduler", "LOCAL"]

#: the default scheduler: worker processes on this machine
LOCAL = "local"


def default_workers() -> int:
    """min(2, CPUs): two single-threaded trainings at once on this project's 2-core machines."""
    return max(1, min(2, os.cpu_count() or 1))


def check_workers(workers) -> int:
    from lnrecency.runtime.arguments import check_int

    return check_int("workers", workers, minimum=1, maximum=max(2, os.cpu_count() or 1))


def check_scheduler(scheduler) -> str:
    """"local" or a Dask scheduler's address (tcp://HOST:PORT or inproc://...), checked without importing Dask
    (whether the address answers is known when the client connects, which names it)."""
    from lnrecency.runtime.distributed import ADDRESS_SCHEMES

    words = (f"scheduler must be 'local' (worker processes here) or the address of a running Dask scheduler "
             f"({' | '.join(s + '://HOST:PORT' for s in ADDRESS_SCHEMES)}); got {scheduler!r:.80}")
    if not isinstance(scheduler, str) or not scheduler or scheduler != scheduler.strip() or "\n" in scheduler:
        raise ValueError(words)
    if scheduler == LOCAL:
        return scheduler
    scheme, sep, rest = scheduler.partition("://")
    if not sep or scheme not in ADDRESS_SCHEMES or not rest or any(c.isspace() for c in rest):
        raise ValueError(words)
    return scheduler


#: how long the first check of a scheduler's address waits for an answer (seconds)
REACH_SECONDS = 4.0


def check_reachable(scheduler: str) -> None:
    """A tcp:// scheduler address answers (a plain TCP connection, no Dask), checked before any data work: a wrong
    or dead address is refused within :data:`REACH_SECONDS`, not after the corpus is tokenised."""
    import socket

    scheme, _, rest = scheduler.partition("://")
    if scheduler == LOCAL or scheme != "tcp":
        return
    host, _, port = rest.rpartition(":")
    host = host.strip("[]")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"scheduler must be tcp://HOST:PORT with a port in [1, 65535]; got {scheduler!r:.80}")
    try:
        with socket.create_connection((host, int(port)), timeout=REACH_SECONDS):
            pass
    except OSError as exc:
        raise ValueError(f"scheduler: nothing answers at {scheduler!r} ({exc.strerror or exc}; waited at most "
                         f"{REACH_SECONDS:g} s); start the Dask scheduler first, or use --scheduler local") from None


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
             label: Callable = str, scheduler: str = LOCAL) -> list:
    """[fn(*args) for args in jobs], ``workers`` at a time in worker processes (1: in this process) or each a task
    on the Dask cluster at ``scheduler`` (its workers, whatever ``workers`` says); ``done(index, record)`` is called
    in the parent as each job finishes (to cache it and report progress); ``label(args)`` names a job that failed."""
    check_scheduler(scheduler)
    if not jobs:  # everything cached: no cluster to reach
        return []
    if scheduler != LOCAL:
        return _on_cluster(fn, jobs, scheduler, done, label)
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


def _on_cluster(fn: Callable, jobs: list, scheduler: str, done: Callable | None, label: Callable) -> list:
    """Each job one task on the cluster at ``scheduler``; records in job order. A task that fails (its worker lost
    more often than the scheduler allows, or an error of its own) does not stop the others: a task whose workers were
    lost is run once more alone (:func:`_alone`), and what still fails is named, with its error, in the RuntimeError
    raised once every other run has finished."""
    import contextlib
    import uuid

    import distributed

    from lnrecency.runtime.distributed import client

    out: list = [None] * len(jobs)
    failed: list[tuple[int, BaseException]] = []
    tag = uuid.uuid4().hex[:8]
    name = getattr(fn, "__name__", "job")
    with contextlib.ExitStack() as stack:
        try:
            c = stack.enter_context(client(scheduler, 1))
        except ValueError as exc:  # the sweep's words name 'none', which trainings do not take
            raise ValueError(f"{str(exc).split('; give')[0]}; give the address of a running Dask scheduler, or "
                             f"'local' (worker processes here)") from None
        futures = {c.submit(_call, (fn, args), pure=False, key=f"lnrecency-{name}-{q}-{tag}"): q
                   for q, args in enumerate(jobs)}
        try:
            for fut in distributed.as_completed(list(futures)):
                q = futures[fut]
                if fut.status != "finished":
                    failed.append((q, _failure(fut, scheduler)))
                    continue
                out[q] = fut.result()
                if done is not None:
                    done(q, out[q])
        except BaseException:
            c.cancel(list(futures))
            raise
        lost = getattr(c, "status", "running") != "running"  # the client lost its scheduler
        if not lost:
            failed = _alone(c, fn, jobs, failed, out, done, f"{name}-{tag}")
    if failed:
        failed.sort(key=lambda x: x[0])
        def said(e: BaseException) -> str:
            return f"{type(e).__name__}: {str(e).splitlines()[0][:160]}" if str(e) else type(e).__name__
        names = "; ".join(f"{str(label(jobs[q]))[:120]} ({said(e)})" for q, e in failed)
        kept = len(jobs) - len(failed)
        if lost:
            raise RuntimeError(f"the Dask scheduler at {scheduler} was lost: {len(failed)} of {len(jobs)} runs got no "
                               f"result ({names}); the {kept} that finished were kept: restart the scheduler (or use "
                               f"--scheduler local) and run again to finish the others") from None
        raise RuntimeError(f"{len(failed)} of {len(jobs)} runs failed on the cluster at {scheduler}: {names}; the "
                           f"other runs finished and were kept: run again to retry these") from failed[0][1]
    return out


def _failure(fut, scheduler: str) -> BaseException:
    """Why a task did not finish: its own error, or (a task cancelled or lost with its scheduler, which has no error
    to give) a ConnectionError saying so."""
    if fut.status == "error":
        try:
            exc = fut.exception(timeout=5)
        except Exception as again:  # noqa: BLE001 - the scheduler may be gone as the error is asked for
            exc = again
        if exc is not None:
            return exc
    return ConnectionError(f"no result: the task was {fut.status}, its worker or the scheduler at {scheduler} lost")


def _alone(c, fn: Callable, jobs: list, failed: list, out: list, done: Callable | None, tag: str) -> list:
    """The tasks of ``failed`` whose workers were lost (KilledWorker), run again one at a time: a worker's tasks die
    with it, so a run that kills its worker can take others down with it while they share a worker; alone, each
    costs only itself. Returns what still failed (errors of a run's own are not run again: they would repeat)."""
    from distributed import KilledWorker

    still = []
    for q, exc in failed:
        if not isinstance(exc, KilledWorker):
            still.append((q, exc))
            continue
        fut = c.submit(_call, (fn, jobs[q]), pure=False, key=f"lnrecency-{tag}-{q}-alone")
        try:
            out[q] = fut.result()
        except Exception as again:  # noqa: BLE001 - named in the caller's error, with its type
            still.append((q, again))
            continue
        if done is not None:
            done(q, out[q])
    return still
