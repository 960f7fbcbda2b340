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

__all__ = ["Terminated", "stop_signals", "end_children", "run_stoppable", "said_stop"]


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


def said_stop(exc: BaseException, stopped: str) -> int | None:
    """The exit code of a stop: SIGINT (KeyboardInterrupt, 130), SIGTERM (:class:`Terminated`, 143) or either as the
    SystemExit a staged output folder raises (lnrecency.files.atomic); the worker processes ended and one line
    printed, ``stopped`` with the signal's name for its ``%s``. None (nothing done) for any other exception."""
    import sys

    code = {KeyboardInterrupt: 130, Terminated: Terminated.exit_code}.get(type(exc))
    if isinstance(exc, SystemExit) and exc.code in (130, 143):
        code = int(exc.code)
    if code is None:
        return None
    end_children()
    print(stopped % ("SIGTERM" if code == 143 else "SIGINT (Ctrl-C)"), file=sys.stderr)
    return code


def run_stoppable(name: str, main, left: str = "nothing was written") -> int:
    """``main()`` under :func:`stop_signals`, for a module's command line (``python3 -m ...``): SIGINT or SIGTERM
    ends the worker processes and the run with one line naming ``name`` (exit 130 or 143), not a traceback; the
    resource tracker's note on a stopped pool's semaphores is silenced as by the ``lnrecency`` command; ``left``
    says what the stop leaves behind."""
    import sys
    import warnings

    warnings.filterwarnings("ignore", category=UserWarning, module="multiprocessing.resource_tracker")
    if "ignore:resource_tracker:UserWarning" not in sys.warnoptions:
        sys.warnoptions.append("ignore:resource_tracker:UserWarning")
    try:
        with stop_signals():
            return int(main() or 0)
    except (KeyboardInterrupt, Terminated, SystemExit) as exc:
        code = said_stop(exc, f"{name}: stopped by %s; {left}")
        if code is None:
            raise
        return code
