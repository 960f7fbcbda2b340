"""Atomic output. A file: written to a temporary file beside it, then ``os.replace``; an interrupted
write removes the temporary file and leaves the target untouched.

An output folder (report, sweep, reproduce, a checkpoint) is checked before any work
(:func:`check_out`), built in a hidden staging folder and published (:func:`publish`) under one rule:
lnrecency deletes, moves or overwrites only files it wrote itself, as recorded in the folder's manifest
``.lnrecency-manifest.json`` (each name with the SHA-256 and size of the file written; a file whose
content changed since is the user's). The manifest is deterministic: the same run gives the same bytes. Every other
file stays where it is, whatever a file in the folder
claims; a new output that needs such a name is refused, before the work when the name is known then,
and at the latest before anything in the folder changes. A symbolic link to a folder is written through
and stays a link. A staging folder left by a killed run (its process gone) is removed by the next one.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import stat
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from lnrecency.files.locks import LOCK_SUFFIX, OutputRefused, holding_output, output_lock  # re-exported

__all__ = ["atomic_path", "atomic_write_text", "atomic_write_bytes", "atomic_save", "staged_directory", "output_lock",
           "publish", "check_out", "owned_names", "OutputRefused", "MANIFEST", "file_sha256", "plain_folder",
           "pid_alive", "holding_output", "LOCK_SUFFIX"]


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


def plain_folder(root: str | os.PathLike, path: str | os.PathLike, what: str = "folder") -> Path:
    """Make ``path`` (inside the existing folder ``root``) and the folders between, following no symlink: a part
    that is a link, or there and not a folder, raises FileExistsError naming it and the fix (a write below a
    planted link would land outside ``root``); ValueError when ``path`` is not inside ``root``."""
    root, path = Path(root), Path(path)
    try:
        parts = path.relative_to(root).parts
    except ValueError:
        raise ValueError(f"{str(path)!r} is not inside {str(root)!r}") from None
    if any(p in ("", ".", "..") for p in parts):
        raise ValueError(f"{str(path)!r}: a {what} is named by plain names (no '..')")
    here = root
    for part in parts:
        here = here / part
        if here.is_symlink():
            raise FileExistsError(f"{what} {str(here)!r} is a symbolic link, not a folder lnrecency made: refused "
                                  f"(a write there would land outside {str(root)!r}); remove the link and run again")
        try:
            here.mkdir()
        except FileExistsError:
            if here.is_symlink() or not here.is_dir():
                raise FileExistsError(f"{what} {str(here)!r} is not a folder lnrecency made; remove it and run "
                                      f"again") from None
    return path


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


# -- output folders: checked before the work, staged, published by a manifest ---------------------------

MANIFEST = ".lnrecency-manifest.json"
_STAGE = ".lnrecency-stage-"
_NAME_MAX = 255


def file_sha256(path: Path) -> str:
    """The SHA-256 (hex) of a file, read in 1 MiB blocks."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _identity(path: Path) -> dict:
    """What the manifest records of a file it wrote: content hash and size (an edit gives another). Not
    inode or time: two runs with the same seed must give the same bytes, manifest included."""
    return {"sha256": file_sha256(path), "size": os.lstat(path).st_size}


#: a manifest larger or deeper than this is not one lnrecency wrote (its own hold a name, a size and a hash a file)
MAX_MANIFEST_BYTES = 16 * 2**20
MAX_MANIFEST_DEPTH = 4


def plain_name(folder: Path, name: Any) -> bool:
    """Whether ``name`` names a file directly inside ``folder``: a non-empty string with no path separator, not
    ``.`` or ``..``, not absolute, no NUL, and still inside ``folder`` once the path is resolved."""
    if not isinstance(name, str) or name in ("", ".", "..") or "\x00" in name or os.path.isabs(name):
        return False
    if any(sep in name for sep in ("/", "\\", os.sep, os.altsep or "/")):
        return False
    real = os.path.realpath(folder)
    return os.path.dirname(os.path.normpath(os.path.join(real, name))) == real


def _read_manifest(folder: Path) -> dict[str, dict]:
    """{name: identity} of the files an earlier lnrecency output wrote in ``folder`` ({} if none). A
    manifest that is not ours (not a regular file, too large or deep, not JSON with finite numbers, not the
    format) is refused rather than overwritten, and so is one that names anything but a plain file inside the
    folder (``../x``, ``/etc/x``, ``a/b``): nothing is moved or removed then."""
    from lnrecency.files.readers import read_json

    path = folder / MANIFEST
    if not os.path.lexists(path):
        return {}
    refusal = (f"--out: {str(path)!r} is not a manifest lnrecency wrote; move it or choose another folder")
    try:
        data = read_json(path, what="manifest", max_bytes=MAX_MANIFEST_BYTES, max_depth=MAX_MANIFEST_DEPTH)
        files = data["files"]
        if data.get("tool") != "lnrecency" or not isinstance(files, dict) or not all(
                isinstance(k, str) and isinstance(v, dict) for k, v in files.items()):
            raise ValueError
    except (OSError, ValueError, KeyError, TypeError, UnicodeDecodeError, RecursionError):
        raise OutputRefused(refusal) from None
    bad = next((k for k in files if not plain_name(folder, k)), None)
    if bad is not None:
        raise OutputRefused(f"--out: {str(path)!r} names {bad[:80]!r}, which is not a file inside the folder; "
                            f"nothing was moved: remove the manifest or choose another folder")
    return files


def _ours(path: Path, recorded: dict) -> bool:
    """A regular file (not a link) with the size and content hash the manifest recorded: the file
    lnrecency wrote, unchanged."""
    try:
        st = os.lstat(path)
        if not stat.S_ISREG(st.st_mode) or st.st_size != recorded.get("size"):
            return False
        return file_sha256(path) == recorded.get("sha256")
    except OSError:
        return False


def owned_names(folder: Path) -> set[str]:
    """Names in ``folder`` that lnrecency wrote and nobody changed since (manifest name and hash agree)."""
    return {n for n, h in _read_manifest(folder).items() if _ours(folder / n, h)}


def _clashes(folder: Path, names) -> list[str]:
    owned = owned_names(folder)
    return sorted(n for n in names if os.path.lexists(folder / n) and n not in owned)


def _refuse_clashes(folder: Path, names, flag: str = "--out") -> None:
    clash = _clashes(folder, names)
    if clash:
        more = f" (and {len(clash) - 1} more)" if len(clash) > 1 else ""
        raise OutputRefused(f"{flag}: {str(folder / clash[0])!r}{more} was not written by lnrecency (or was changed "
                            f"since); it is kept: move it or choose another folder")


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _remove_stale_stages(folder: Path) -> None:
    """Staging folders of runs that were killed (their process is gone) are removed."""
    try:
        entries = list(folder.glob(_STAGE + "*"))
    except OSError:
        return
    for entry in entries:
        try:
            pid = int(entry.name[len(_STAGE):].split("-")[0])
        except ValueError:
            continue
        if pid != os.getpid() and not pid_alive(pid) and entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)


def check_out(out: str | os.PathLike, names: Iterable[str] = (), flag: str = "--out") -> Path:
    """Check an output folder before any work; return the folder to write. Refused (``OutputRefused``, one
    line): an empty name, '.', '..', the root, a name longer than the file system allows, an existing
    non-folder, a symbolic link (to a folder or to nothing: nothing is written through a link),
    a folder (or the nearest existing parent) not writable, and any of ``names`` (files the output will
    write) present in the folder but not written by lnrecency. ``flag``: the option that named the folder, in the
    messages."""
    text = os.fspath(out)
    if isinstance(text, bytes):
        text = os.fsdecode(text)
    if not str(text).strip():
        raise OutputRefused(f"{flag}: empty path; give a folder name, e.g. results")
    path = Path(text)
    if path.name in ("", ".", ".."):
        raise OutputRefused(f"{flag}: {text!r} does not name a folder of its own; give a folder name, e.g. "
                            f"{str(path / 'results')!r}")
    for part in path.parts:
        if len(os.fsencode(part)) > _NAME_MAX:
            raise OutputRefused(f"{flag}: a name of {len(os.fsencode(part))} bytes; the file system allows "
                                f"{_NAME_MAX}")
    if path.is_symlink():  # no file is written through a link (a write there lands outside the named folder)
        raise OutputRefused(f"{flag}: {text!r} is a symbolic link (to {os.readlink(path)!r}): an output folder is "
                            f"never written through a link; give the folder itself")
    if path.exists() and not path.is_dir():
        raise OutputRefused(f"{flag} must be a directory; got {text!r}, an existing file")
    try:
        target = path.resolve()
    except (RuntimeError, OSError) as exc:  # a symbolic-link loop on the path
        raise OutputRefused(f"{flag}: cannot resolve {text!r}: {exc}") from None
    probe = target
    while not probe.exists():
        if probe.is_symlink() or probe.parent == probe:
            raise OutputRefused(f"{flag}: cannot create {text!r} (a link to nothing on its path)")
        probe = probe.parent
    if not probe.is_dir():
        raise OutputRefused(f"{flag}: cannot create {text!r}: {str(probe)!r} is a file")
    try:  # a real write, not os.access: root passes access() on /proc, read-only mounts, ...
        os.rmdir(tempfile.mkdtemp(prefix=".lnrecency-probe-", dir=probe))
    except OSError as exc:
        raise OutputRefused(f"{flag}: cannot create a folder in {str(probe)!r}: {exc.strerror or exc}") from None
    if target.exists():
        _refuse_clashes(target, names, flag)
    return target


@contextmanager
def staged_directory(final: str | os.PathLike, names: Iterable[str] = (),
                     flag: str = "--out") -> Iterator[Path]:
    """Check ``final`` (:func:`check_out`, with ``names`` the files the output will certainly write) and
    yield a staging folder to build the output in; the builder calls :func:`publish` at its end. Whatever
    happens the staging folder is removed, so an interrupted or failed run leaves ``final`` as it was; a
    folder this created on the way is removed again. ``flag``: the option that named ``final``."""
    target = check_out(final, names, flag)
    created = []
    probe = target
    while not probe.exists():
        created.append(probe)
        probe = probe.parent
    home = target if target.exists() else target.parent
    try:
        home.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # name the folder the user asked for, not the staging one
        raise OSError(exc.errno, exc.strerror, os.fspath(final)) from None
    with output_lock(target, final, flag), _terminate_as_exit():
        try:
            _remove_stale_stages(home)
            stage = Path(tempfile.mkdtemp(dir=home, prefix=f"{_STAGE}{os.getpid()}-"))
        except OSError as exc:
            raise OSError(exc.errno, exc.strerror, os.fspath(final)) from None
        try:
            yield stage
        finally:
            shutil.rmtree(stage, ignore_errors=True)  # gone after a successful publish; removed otherwise
            if not target.exists():  # folders made on the way to one never published
                for folder in created[1:]:
                    try:
                        folder.rmdir()
                    except OSError:
                        break


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


def publish(stage: Path, final: str | os.PathLike) -> None:
    """Make the files of ``stage`` the output in ``final`` (a link to a folder is written through), with
    SIGINT and SIGTERM held back. A new folder: one rename. An existing one: each file renamed into place;
    files lnrecency wrote there before (:func:`owned_names`) are replaced, or removed when the new output
    does not have them; every other file is left exactly where it is, and a new file that would need its
    name is refused with the folder unchanged. If any rename fails, the renames done are undone. The
    manifest (names and SHA-256 of the files written) is written last."""
    target = Path(final).resolve()
    new = sorted(p.name for p in stage.iterdir() if p.is_file() and p.name != MANIFEST)
    hashes = {n: _identity(stage / n) for n in new}
    blocked = {signal.SIGINT, signal.SIGTERM}
    old_mask = signal.pthread_sigmask(signal.SIG_BLOCK, blocked)
    try:
        _write_manifest(stage, hashes)
        os.chmod(stage, 0o777 & ~current_umask())
        if not target.exists():
            try:
                os.rename(stage, target)
                return
            except OSError:
                if not target.is_dir():
                    raise
        _publish_into(stage, target, new, hashes)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)


def _write_manifest(folder: Path, hashes: dict[str, dict]) -> None:
    atomic_write_text(folder / MANIFEST, json.dumps({"tool": "lnrecency", "files": hashes}, indent=1,
                                                    sort_keys=True) + "\n")


def _publish_into(stage: Path, target: Path, new: list[str], hashes: dict[str, dict]) -> None:
    old = _read_manifest(target)
    owned = {n for n, h in old.items() if _ours(target / n, h)}
    _refuse_clashes(target, new)
    aside = Path(tempfile.mkdtemp(dir=stage, prefix=".previous-"))
    done: list[tuple[str, bool, bool]] = []  # (name, moved a previous file aside, placed a new file)
    try:
        for n in new:
            had = n in owned
            if had:
                os.replace(target / n, aside / n)
            done.append((n, had, False))
            os.replace(stage / n, target / n)
            done[-1] = (n, had, True)
        for n in sorted(owned - set(new)):
            os.replace(target / n, aside / n)
            done.append((n, True, False))
        _write_manifest(target, hashes)
    except BaseException:
        for n, had, placed in reversed(done):
            if placed:
                os.replace(target / n, stage / n)
            if had:
                os.replace(aside / n, target / n)
        raise
