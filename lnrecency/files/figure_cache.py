"""Drawn figures kept by their inputs: a figure's PNG and PDF are a pure function of what it draws and of the code
and libraries that draw it, so a report whose inputs were drawn before copies the files instead of drawing them
again (drawing is most of a report's time: about 11 of its CPU seconds at --quick).

An entry is a folder ``<root>/figures/<code>/<key>``: ``code`` is :func:`code_fingerprint` (the bytes of every
file of the packages ``lnrecency``, ``lnrecency.theory`` and ``lnrecency.numerics`` as this process imported them,
the interpreter, zlib, FreeType and library versions, the machine, and matplotlib's settings), ``key`` the SHA-256
of the code, the drawing unit's name and its inputs (the report's settings, or the evidence it renders). It holds
the files and ``manifest.json``: each figure's name, title, caption and the SHA-256 and size of each file. An entry
passes one reader before use (:meth:`FigureCache.get`): no folder or file read through a link, every field checked
against its type and bounds, its names the report's own and distinct, every file's size and hash against the
manifest, at most :data:`MAX_ENTRY_BYTES` in all; one that does not is a miss, drawn again and replaced. Only
drawn figures of parameter-free units are kept (the report's :class:`~lnrecency.report.figure_list.Drawing`
decides), nothing when the package's files changed since import. Entries of other code, stages of processes that
are gone and the oldest entries beyond :data:`MAX_ENTRIES` are removed when one is written. A hit gives the same
bytes as a drawing: the same seed, the same files, cached or not.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

from lnrecency.files.atomic import atomic_write_bytes, file_sha256
from lnrecency.files.readers import open_plain, read_json

__all__ = ["FigureCache", "CachedFigure", "code_fingerprint", "unit_key", "FORMAT"]

#: the layout of an entry (bumped when it changes: older entries are then misses)
FORMAT = 1
MAX_FILE_BYTES = 64 * 2**20  # a report figure is at most a few MB
MAX_MANIFEST_BYTES = 2**20
MAX_FIGURES = 64  # per drawing unit (the largest draws 2)
MAX_ENTRY_BYTES = 256 * 2**20  # what one entry's files may hold together (read into memory before they are copied)
MAX_ENTRIES = 400  # per code version: about 20 reports' figures (each unit an entry); the oldest go first
MAX_TITLE, MAX_CAPTION = 2_000, 40_000
_NAME = re.compile(r"[A-Za-z0-9_.-]{1,120}")
_HEX = re.compile(r"[0-9a-f]{64}")
_PACKAGES = ("lnrecency", "lnrecency.theory", "lnrecency.numerics")


def _sources() -> str:
    """SHA-256 of every file (path and bytes) of the packages ``lnrecency``, ``lnrecency.theory`` and
    ``lnrecency.numerics`` (their sources, data and compiled extensions; no ``__pycache__``)."""
    import importlib

    h = hashlib.sha256()
    for name in _PACKAGES:
        root = Path(importlib.import_module(name).__file__).parent
        for path in sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts
                           and not (name == "lnrecency" and p.relative_to(root).parts[0] in ("theory", "numerics"))):
            h.update(f"{name}/{path.relative_to(root).as_posix()}\0".encode())
            h.update(path.read_bytes())
    return h.hexdigest()


#: the sources as this process imported them (a cache whose sources differ now, edited since, is not used: the
#: code that would draw is not the code on disk)
_IMPORTED = _sources()


def code_fingerprint() -> str:
    """SHA-256 of what draws a figure: the package's files (:func:`_sources`, as imported), the interpreter, zlib,
    FreeType, numpy, matplotlib and Pillow versions, the machine, and matplotlib's settings now (``rcParams``, but
    the interactive backend)."""
    import platform
    import sys
    import zlib

    import matplotlib
    import numpy
    import PIL
    from matplotlib import ft2font

    params = {k: repr(v) for k, v in matplotlib.rcParams.items() if k != "backend"}
    text = json.dumps({"sources": _IMPORTED, "python": sys.version, "zlib": zlib.ZLIB_RUNTIME_VERSION,
                       "freetype": ft2font.__freetype_version__, "numpy": numpy.__version__,
                       "matplotlib": matplotlib.__version__, "pillow": PIL.__version__,
                       "machine": [platform.machine(), platform.node()], "rc": params}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def unit_key(unit: str, inputs: str, code: str | None = None) -> str:
    """The key of a drawing unit's entry: SHA-256 of :data:`FORMAT`, the code (``code``, else
    :func:`code_fingerprint` now), the unit and its inputs (a string that changes whenever anything the unit draws
    from does)."""
    code = code_fingerprint() if code is None else code
    text = json.dumps({"format": FORMAT, "code": code, "unit": unit, "inputs": inputs}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class CachedFigure:
    """A figure's record as its entry keeps it (what the report's index needs of a drawn figure; only drawn
    figures are kept)."""

    name: str
    title: str
    caption: str
    tight: bool
    not_run: bool


class FigureCache:
    """The figure entries under ``root`` (a cache root, :func:`lnrecency.experiments.run_cache.cache_root`), for the
    code and matplotlib settings of now. ``usable`` is False (every get a miss, every put refused) when the package's
    files changed since this process imported them."""

    def __init__(self, root: str | os.PathLike, formats: tuple[str, ...] = ("png", "pdf")):
        self.root = Path(root)
        self.base = self.root / "figures"
        self.fingerprint = code_fingerprint()
        self.code = self.base / self.fingerprint[:32]
        self.formats = tuple(formats)
        self.usable = _sources() == _IMPORTED

    def key(self, unit: str, inputs: str) -> str:
        return unit_key(unit, inputs, self.fingerprint)

    def get(self, key: str, out: Path, names: frozenset | None = None) -> list[tuple[CachedFigure, list[Path]]] | None:
        """The entry ``key``'s figures copied into ``out`` ([(record, paths)], in the unit's order), or None: no
        entry, or one that does not pass the reader (then nothing is copied). ``names``: the figure names the
        unit may write (another is a miss)."""
        if not self.usable:
            return None
        entry = self.code / key
        try:
            figs = self._read(entry, key)
            if names is not None and any(f.name not in names for f, _ in figs):
                return None
            blobs = [[self._bytes(entry / f"{fig.name}.{fmt}", files[fmt]) for fmt in files] for fig, files in figs]
        except (ValueError, OSError):
            return None
        copied = []
        for (fig, files), data in zip(figs, blobs):
            paths = [atomic_write_bytes(Path(out) / f"{fig.name}.{fmt}", blob) for fmt, blob in zip(files, data)]
            copied.append((fig, paths))
        return copied

    @staticmethod
    def _bytes(path: Path, ident: dict) -> bytes:
        """The file's bytes, read once from a plain file (no link) of the manifest's size, checked against its hash."""
        with open_plain(path, "figure", ident["size"]) as fh:
            blob = fh.read(ident["size"] + 1)
        if len(blob) != ident["size"] or hashlib.sha256(blob).hexdigest() != ident["sha256"]:
            raise ValueError(f"{path} is not the file its manifest names")
        return blob

    def _folders(self, entry: Path | None = None) -> None:
        """Every folder from the cache root down is a folder, not a link (ValueError otherwise)."""
        for folder in (self.root, self.base, self.code) + ((entry,) if entry is not None else ()):
            if not stat.S_ISDIR(os.lstat(folder).st_mode):
                raise ValueError(f"{folder} is not a folder")

    def _read(self, entry: Path, key: str) -> list[tuple[CachedFigure, dict]]:
        self._folders(entry)  # nothing read through a link
        data = read_json(entry / "manifest.json", what="figure cache manifest", max_bytes=MAX_MANIFEST_BYTES,
                         max_depth=6, links=False)
        if data.get("format") != FORMAT or data.get("key") != key or data.get("formats") != list(self.formats):
            raise ValueError("another entry's manifest")
        figs = data.get("figures")
        if not isinstance(figs, list) or not 0 < len(figs) <= MAX_FIGURES:
            raise ValueError("figures")
        out, total = [], 0
        for f in figs:
            if not isinstance(f, dict) or set(f) != {"name", "title", "caption", "tight", "files"}:
                raise ValueError("a figure's fields")
            name, title, caption, files = f["name"], f["title"], f["caption"], f["files"]
            if not (isinstance(name, str) and _NAME.fullmatch(name) and isinstance(title, str)
                    and len(title) <= MAX_TITLE and isinstance(caption, str) and len(caption) <= MAX_CAPTION
                    and isinstance(f["tight"], bool) and isinstance(files, dict)):
                raise ValueError("a figure's field")
            if list(files) != list(self.formats):
                raise ValueError("a figure's files")
            for fmt, ident in files.items():
                if not (isinstance(ident, dict) and set(ident) == {"sha256", "size"}
                        and isinstance(ident["sha256"], str) and _HEX.fullmatch(ident["sha256"])
                        and type(ident["size"]) is int and 0 < ident["size"] <= MAX_FILE_BYTES):
                    raise ValueError("a file's identity")
                total += ident["size"]
            out.append((CachedFigure(name, title, caption, f["tight"], False), files))
        if len({f.name for f, _ in out}) != len(out) or total > MAX_ENTRY_BYTES:
            raise ValueError("names repeated, or more bytes than an entry holds")
        return out

    def put(self, key: str, figs: list[tuple[CachedFigure, list[Path]]]) -> bool:
        """Keep ``figs`` (records and the files just written) as entry ``key``, written whole (staged, then
        renamed); entries of other code, stages left by a process that is gone, and the oldest entries beyond
        :data:`MAX_ENTRIES` are removed. False (nothing kept) for figures not drawn, when the code changed since
        import, or when the cache cannot be written or holds a link where a folder should be."""
        if not self.usable or not figs or any(fig.not_run or [p.suffix[1:] for p in paths] != list(self.formats)
                                              for fig, paths in figs):
            return False  # not the files an entry holds
        stage = None
        try:
            for folder in (self.root, self.base, self.code):  # one level at a time, never through a link
                if not os.path.lexists(folder):
                    folder.mkdir(parents=folder == self.root, exist_ok=True)  # the root as run_cache makes it
                if not stat.S_ISDIR(os.lstat(folder).st_mode):
                    return False
            self._forget_other_code()
            stage = self.code / f".stage-{os.getpid()}-{key[:16]}"
            if os.path.lexists(stage):
                shutil.rmtree(stage)
            stage.mkdir()
            manifest = []
            for fig, paths in figs:
                files = {}
                for path in paths:
                    fmt = path.suffix[1:]
                    shutil.copyfile(path, stage / f"{fig.name}.{fmt}", follow_symlinks=False)
                    files[fmt] = {"sha256": file_sha256(stage / f"{fig.name}.{fmt}"),
                                  "size": os.lstat(stage / f"{fig.name}.{fmt}").st_size}
                manifest.append({"name": fig.name, "title": fig.title, "caption": fig.caption,
                                 "tight": bool(fig.tight), "files": files})
            (stage / "manifest.json").write_text(json.dumps(
                {"format": FORMAT, "key": key, "formats": list(self.formats), "figures": manifest}, indent=1))
            entry = self.code / key
            if os.path.islink(entry):
                os.unlink(entry)
            elif os.path.isdir(entry):  # a damaged entry (the reader refused it): replaced
                shutil.rmtree(entry)
            os.rename(stage, entry)
            stage = None
            self._prune()
            return True
        except (OSError, ValueError):
            return False
        finally:
            if stage is not None and os.path.isdir(stage) and not os.path.islink(stage):
                shutil.rmtree(stage, ignore_errors=True)

    def _forget_other_code(self) -> None:
        """Remove the entries of other code (folders named by a fingerprint other than this code's; links and
        other names are left alone)."""
        for child in os.scandir(self.base):
            if child.name != self.code.name and re.fullmatch(r"[0-9a-f]{32}", child.name) \
                    and child.is_dir(follow_symlinks=False):
                shutil.rmtree(child.path, ignore_errors=True)

    def _prune(self) -> None:
        """Remove stages whose process is gone, and the oldest entries beyond :data:`MAX_ENTRIES`."""
        from lnrecency.files.atomic import pid_alive

        entries = []
        for child in os.scandir(self.code):
            if not child.is_dir(follow_symlinks=False):
                continue
            stage = re.fullmatch(r"\.stage-(\d+)-[0-9a-f]{16}", child.name)
            if stage and not pid_alive(int(stage.group(1))):
                shutil.rmtree(child.path, ignore_errors=True)
            elif _HEX.fullmatch(child.name):
                entries.append((child.stat(follow_symlinks=False).st_mtime, child.path))
        for _, path in sorted(entries)[:max(0, len(entries) - MAX_ENTRIES)]:
            shutil.rmtree(path, ignore_errors=True)
