"""Run one call in a child process under a wall-clock and an address-space budget.

Used where a single library call cannot be bounded from inside (sympy's exact arithmetic on huge integers
runs in C and ignores signals): the child is forked, limited with RLIMIT_AS, and killed when the time is up.
The child dies with its parent (Linux: PR_SET_PDEATHSIG; elsewhere a daemon process, ended at a normal exit).
"""
from __future__ import annotations

import multiprocessing as mp
import os
import resource
import signal
from typing import Any, Callable

from threadpoolctl import threadpool_limits


class BudgetExceeded(Exception):
    """The call did not finish within its time or memory budget (the message says which)."""


def die_with_parent() -> None:
    """Linux: this process gets SIGKILL when its parent dies (a worker never outlives a killed command)."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # not Linux: the daemon flag still ends it at a normal exit
        pass


def one_blas_thread():
    """BLAS held to one thread in this process (threadpoolctl; restored at the end when used as a context
    manager). Where processes or threads are the parallelism, BLAS threads on top oversubscribe the cores
    and spin: the report's verdict worker ran 5.8x slower beside the figure drawing (measured, 2 cores)."""
    return threadpool_limits(limits=1, user_api="blas")


def worker_init() -> None:
    """Initializer of the project's forked worker processes: :func:`die_with_parent`; SIGTERM ends it at once
    and Ctrl-C's SIGINT (sent to the whole process group) is left to the parent, which terminates its
    workers (a handler inherited from the parent would turn either into an exception that the pool's worker
    loop catches, and the worker would go on to its next queued task); and BLAS held to one thread for the
    worker's life (:func:`one_blas_thread`)."""
    die_with_parent()
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    one_blas_thread()


def _address_space() -> int:
    """This process's current virtual size in bytes (0 where /proc is missing)."""
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _child(conn, fn, args, kwargs, memory_bytes):
    die_with_parent()
    try:  # the budget is on top of what the forked image already maps (e.g. a test process with torch)
        cap = _address_space() + memory_bytes
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    except (ValueError, OSError):
        pass
    try:
        conn.send(("ok", fn(*args, **kwargs)))
    except MemoryError:
        conn.send(("memory", None))
    except BaseException as exc:  # re-raised in the parent with its type and message
        try:
            conn.send(("error", exc))
        except Exception:
            conn.send(("error", ValueError(str(exc))))
    finally:
        conn.close()


def run_bounded(fn: Callable, *args: Any, seconds: float, memory_bytes: int, **kwargs: Any) -> Any:
    """fn(*args, **kwargs) in a forked child; BudgetExceeded after ``seconds`` or when the child runs out of
    its ``memory_bytes`` of address space; exceptions of fn are re-raised here."""
    ctx = mp.get_context("fork")
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(child, fn, args, kwargs, memory_bytes), daemon=True)
    proc.start()
    child.close()
    try:
        if not parent.poll(seconds):
            raise BudgetExceeded(f"did not finish within {seconds:g} s")
        try:
            status, value = parent.recv()
        except EOFError:
            raise BudgetExceeded(f"the worker ended without an answer (memory budget "
                                 f"{memory_bytes / 2**30:.2g} GiB?)") from None
    finally:
        if proc.is_alive():
            proc.kill()
        proc.join()
        parent.close()
    if status == "memory":
        raise BudgetExceeded(f"needed more than {memory_bytes / 2**30:.2g} GiB")
    if status == "error":
        raise value
    return value


__all__ = ["run_bounded", "BudgetExceeded"]
