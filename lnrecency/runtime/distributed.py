"""Run independent tasks in this process, on a local Dask cluster, or on an existing one.

``scheduler``:
  * "local" - start a ``distributed.LocalCluster`` of ``workers`` processes (one thread each), use it,
    close it (the default of ``lnrecency sweep``: a laptop and a cluster run the same command);
  * an address ("tcp://host:8786" or any string the ``distributed.Client`` accepts) - an existing cluster;
  * "none" - in this process, no Dask (nothing to install).

Reproducible by construction: every task is a pure function of its arguments (its random seed, if any,
is part of them), and results are returned in task order whatever the order they finish in, so the same
inputs give the same bytes whatever the number of workers. Ctrl-C cancels the pending futures and closes
a local cluster before the KeyboardInterrupt propagates.
"""
from __future__ import annotations

import contextlib
import logging
import sys
from typing import Any, Callable, Iterator, Sequence

from tqdm import tqdm

from lnrecency.runtime.arguments import check_int

__all__ = ["map_ordered", "client", "LOCAL", "IN_PROCESS", "executor", "check_workers"]

LOCAL = "local"
IN_PROCESS = "none"
ADDRESS_SCHEMES = ("tcp", "inproc")  # tls and ucx need security objects / packages this CLI does not set up


def check_workers(workers) -> int:
    """Local worker processes: at least 1, at most the cores this process may use (more only queue up,
    each costing ~100 MB)."""
    import os

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return check_int("workers", workers, minimum=1, maximum=max(1, cores))


def _need_distributed():
    try:
        import distributed
    except ImportError:  # pragma: no cover - depends on the install
        raise ValueError("scheduler: Dask is not installed; install it with "
                         "pip install 'lnrecency[dask]' (or use --scheduler none)") from None
    return distributed


@contextlib.contextmanager
def client(scheduler: str, workers: int = 2) -> Iterator[Any]:
    """A ``distributed.Client`` for ``scheduler`` ("local" or an address); a local cluster is closed on
    exit. ValueError naming the address when it cannot be reached."""
    distributed = _need_distributed()
    workers = check_workers(workers)
    if scheduler == LOCAL:
        with distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                      dashboard_address=None, silence_logs=logging.CRITICAL) as cluster, \
                distributed.Client(cluster) as c:
            yield c
        return
    scheme = scheduler.split("://", 1)[0] if "://" in scheduler else "tcp"
    if scheme not in ADDRESS_SCHEMES:
        raise ValueError(f"scheduler: the scheme {scheme!r} of {scheduler!r} is not supported; use 'local', "
                         f"'none' or an address {' | '.join(s + '://HOST:PORT' for s in ADDRESS_SCHEMES)}")
    try:
        c = distributed.Client(scheduler, timeout="4s")
    except Exception as exc:  # any failure to connect: one line naming the address
        raise ValueError(f"scheduler: cannot connect to {scheduler!r} ({exc}); give the address of a "
                         f"running Dask scheduler, 'local' or 'none'") from None
    try:
        yield c
    finally:
        c.close()


def map_ordered(fn: Callable, tasks: Sequence[tuple], *, scheduler: str = IN_PROCESS, workers: int = 2,
                progress: bool | None = None, desc: str = "tasks") -> list:
    """[fn(*t) for t in tasks], computed in this process or on Dask, returned in task order."""
    tasks = list(tasks)
    show = sys.stderr.isatty() if progress is None else bool(progress)
    with tqdm(total=len(tasks), desc=desc, unit="task", disable=not show) as bar:
        if scheduler == IN_PROCESS:
            out = []
            for t in tasks:
                out.append(fn(*t))
                bar.update(1)
            return out
        distributed = _need_distributed()
        with client(scheduler, workers) as c:
            futures = [c.submit(fn, *t, pure=False) for t in tasks]
            try:
                for _ in distributed.as_completed(futures):
                    bar.update(1)
                return c.gather(futures)
            except BaseException:
                c.cancel(futures)
                raise


@contextlib.contextmanager
def executor(scheduler: str, workers: int = 2) -> Iterator[Any]:
    """A concurrent.futures-style executor on Dask (``Client.get_executor``), for chunked Monte Carlo."""
    with client(scheduler, workers) as c:
        yield c.get_executor(pure=False)
