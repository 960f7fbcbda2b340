"""Stopping a run: SIGTERM and SIGINT end the ``lnrecency`` command the same clean way.

:func:`stop_signals` turns SIGTERM into :class:`Terminated` (like Ctrl-C's KeyboardInterrupt) in the main thread,
so that every ``finally`` runs: staged output folders are removed, the output lock is released, and
:func:`end_children` stops the worker processes (they also die with their parent on their own:
:func:`lnrecency.runtime.child.die_with_parent`). A SIGINT that the starting shell set to ignored (a background
job of a non-interactive shell) is restored to Python's KeyboardInterrupt, so ``kill -INT`` stops a run too.
The command then exits 143 (SIGTERM) or 130 (SIGINT) with one line.
"""
from __future__ import annotations

import signal
import threading
from contextlib import contextmanager
from typing import Iterator

__all__ = ["Terminated", "stop_signals", "end_children"]


class Terminated(BaseException):
    """SIGTERM arrived (a BaseException, like KeyboardInterrupt: ``except Exception`` does not swallow it)."""

    exit_code = 143


@contextmanager
def stop_signals() -> Iterator[None]:
    """Within: SIGTERM raises :class:`Terminated` and SIGINT raises KeyboardInterrupt in the main thread; the
    previous handlers are restored on exit. Elsewhere than the main thread: nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def terminate(signum, frame):
        raise Terminated()

    previous = {signal.SIGTERM: signal.signal(signal.SIGTERM, terminate)}
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        previous[signal.SIGINT] = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def end_children(timeout: float = 3.0) -> int:
    """Terminate this process's live multiprocessing children (pool workers), then kill those still alive after
    ``timeout`` seconds; the number ended."""
    import multiprocessing as mp
    import time

    children = mp.active_children()
    for p in children:
        try:
            p.terminate()
        except (OSError, ValueError):
            pass
    deadline = time.monotonic() + timeout
    for p in children:
        p.join(max(0.0, deadline - time.monotonic()))
        if p.is_alive():
            try:
                p.kill()
                p.join(1.0)
            except (OSError, ValueError):
                pass
    return len(children)
