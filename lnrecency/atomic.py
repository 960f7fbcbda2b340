"""Atomic file output: write to a temporary file in the target folder, then ``os.replace``.

An interrupted write (exception, KeyboardInterrupt) removes the temporary file and leaves the target
untouched, so a report folder never holds a half-written file.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

__all__ = ["atomic_path", "atomic_write_text", "atomic_write_bytes", "atomic_save", "staged_directory",
           "publish"]


@contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path next to ``path``; on success it replaces ``path``, on failure it is removed."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".part")
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        os.chmod(tmp_path, 0o666 & ~current_umask())  # mkstemp creates 0600: give the file the usual mode
        os.replace(tmp_path, target)
    except BaseException:
        tmp_path.unlink(missing_ok=True)
        raise


def current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> Path:
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)
    return Path(path)


def atomic_write_text(path: str | os.PathLike, text: str) -> Path:
    return atomic_write_bytes(path, text.encode("utf-8"))


def atomic_save(path: str | os.PathLike, writer: Callable[[Path], None]) -> Path:
    """Call ``writer(tmp_path)`` (e.g. a matplotlib ``savefig``) and move the result to ``path``."""
    with atomic_path(path) as tmp:
        writer(tmp)
    return Path(path)


@contextmanager
def staged_directory(final: str | os.PathLike, manifest: str) -> Iterator[Path]:
    """Yield a hidden sibling folder of ``final`` to build an output folder in. The builder calls
    :func:`publish` at its end; whatever happens, the staging folder is removed, so an interrupted run
    leaves ``final`` as it was and no partial folder. ``manifest``: the JSON file (with a "files" list)
    by which an earlier output in ``final`` names the files it owns."""
    final = Path(final)
    if final.exists() and not final.is_dir():
        raise ValueError(f"out must be a directory; got {str(final)!r}, an existing file")
    final.parent.mkdir(parents=True, exist_ok=True)
    try:
        stage = Path(tempfile.mkdtemp(dir=final.parent, prefix=f".{final.name}.building-"))
    except OSError as exc:  # name the folder the user asked for, not the staging one
        raise OSError(exc.errno, exc.strerror, str(final)) from None
    with _terminate_as_exit():
        try:
            yield stage
        finally:
            shutil.rmtree(stage, ignore_errors=True)  # gone after a successful publish; removed otherwise


@contextmanager
def _terminate_as_exit() -> Iterator[None]:
    """SIGTERM (kill, a scheduler's stop) raises SystemExit(143) in the main thread instead of ending the
    process on the spot, so cleanup runs as for Ctrl-C; the previous handler is restored on exit."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum, frame):
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _owned_names(folder: Path, manifest: str) -> set[str]:
    """The files an earlier output in ``folder`` wrote (its manifest's "files" list); empty if none."""
    try:
        return set(json.loads((folder / manifest).read_text())["files"])
    except (OSError, ValueError, KeyError, TypeError):
        return set()


def publish(stage: Path, final: Path, manifest: str) -> None:
    """Make ``stage`` the folder ``final`` by renames, with SIGINT and SIGTERM held back: the folder is
    either the old one or the complete new one, never a mix. Files of the old folder that its manifest
    does not list (the user's own) are carried over unless the new output has that name."""
    os.chmod(stage, 0o777 & ~current_umask())
    blocked = {signal.SIGINT, signal.SIGTERM}
    old_mask = signal.pthread_sigmask(signal.SIG_BLOCK, blocked)
    try:
        if not final.exists():
            os.replace(stage, final)
            return
        aside = final.with_name(f".{final.name}.previous-{os.getpid()}")
        owned = _owned_names(final, manifest)
        os.replace(final, aside)
        os.replace(stage, final)
        for item in aside.iterdir():
            if item.name not in owned and not (final / item.name).exists():
                os.replace(item, final / item.name)
        shutil.rmtree(aside, ignore_errors=True)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)
