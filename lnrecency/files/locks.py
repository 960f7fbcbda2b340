"""Output folders locked for a whole run: a second run on the same ``--out`` is refused at once, instead of
silently replacing the first one's output when it ends.

:func:`output_lock` holds ``.<hash of name>.lnrecency-lock`` beside the folder, ``flock``-ed (re-entrant within a
process); :func:`holding_output` holds it from before a command's work to after its output is published (the
command line wraps every command that takes ``--out``).
"""
from __future__ import annotations

import hashlib
import os
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

__all__ = ["LOCK_SUFFIX", "OutputRefused", "output_lock", "holding_output"]


class OutputRefused(ValueError):
    """The output folder cannot be written without touching a file lnrecency did not write (one line)."""


LOCK_SUFFIX = ".lnrecency-lock"


@contextmanager
def output_lock(target: Path, shown: str | os.PathLike | None = None, flag: str = "--out") -> Iterator[None]:
    """Hold the lock of output folder ``target`` while a run writes it: ``.<hash of name>.lnrecency-lock`` beside it,
    ``flock``-ed. A second run on the same folder is refused at once (``OutputRefused``, one line) instead of
    silently replacing the first one's output. The lock file is removed on release (a run that opened it just
    before is detected: it finds the path gone or another file there, and tries again). ``flag``: the option that
    named the folder, in the messages."""
    import fcntl

    key = hashlib.sha1(os.fsencode(target.name)).hexdigest()[:16]  # any name length fits the file system
    path = target.parent / f".{key}{LOCK_SUFFIX}"
    held = os.fspath(path.absolute())
    if _HELD.get(held):  # this process holds it already (a command locks its --out for the whole run)
        _HELD[held] += 1
        try:
            yield
        finally:
            _HELD[held] -= 1
        return
    for _ in range(5):
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        if os.fstat(fd).st_size:  # ours are empty: a file with content there is the user's, never removed
            os.close(fd)
            raise OutputRefused(f"{flag}: {str(path)!r} is in the way of the output's lock file and is not one "
                                f"(it has content); rename it")
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise OutputRefused(f"{flag}: another lnrecency run is writing {os.fspath(shown or target)!r} now "
                                f"(lock {str(path)!r}); wait for it to finish or choose another folder") from None
        try:
            same = os.path.samestat(os.fstat(fd), os.stat(path))
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)  # the holder removed it between our open and our lock: take the new file
    else:  # pragma: no cover - five lost races in a row
        raise OutputRefused(f"{flag}: could not lock {str(path)!r}; try again")
    _HELD[held] = 1
    try:
        yield
    finally:
        del _HELD[held]
        try:
            os.unlink(path)
        except OSError:
            pass
        os.close(fd)


#: the output locks this process holds (lock path -> depth)
_HELD: dict[str, int] = {}


@contextmanager
def holding_output(out: str | os.PathLike | None) -> Iterator[None]:
    """Hold ``out``'s lock (:func:`output_lock`) for a whole run, from before its work to after its output is
    published, so that a second run on the same folder is refused at once rather than replacing the first one's
    output when it ends. Folders made on the way for the lock are removed again when no output was published. A
    path that cannot be an output folder is left to the command's own check (:func:`check_out`)."""
    try:
        text = os.fsdecode(os.fspath(out)) if out is not None else ""
        target = Path(text).resolve() if text.strip() and Path(text).name not in ("", ".", "..") else None
    except (RuntimeError, OSError, ValueError, TypeError):
        target = None
    if target is None or target.parent == target:
        yield
        return
    created, probe = [], target.parent
    while not probe.exists() and not probe.is_symlink() and probe.parent != probe:
        created.append(probe)
        probe = probe.parent
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError:
        yield  # the command's own check names the problem
        return
    from contextlib import ExitStack

    try:
        with ExitStack() as stack:
            try:
                stack.enter_context(output_lock(target, out))
            except OSError:  # no lock file can be made there: the command's own check names the problem
                pass
            yield
    finally:
        if not target.exists():
            for folder in created:
                try:
                    folder.rmdir()
                except OSError:
                    break
