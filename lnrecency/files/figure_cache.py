"""Drawn figures kept by their inputs: a figure's PNG and PDF are a pure function of what it draws and of the code
and libraries that draw it, so a report whose inputs were drawn before copies the files instead of drawing them
again (drawing is most of a report's time: about 14 of its CPU seconds at --quick).

An entry is a folder ``<root>/figures/<code>/<key>``: ``code`` is :func:`code_fingerprint` (the bytes of every
file of the packages ``lnrecency``, ``theory`` and ``numerics``, and the versions and settings of the drawing
libraries), ``key`` the SHA-256 of the code, the drawing unit's name and its inputs (the report's settings, or
the evidence it renders). It holds the files and ``manifest.json``: each figure's name, title, caption and the
SHA-256 and size of each file. An entry passes one reader before use (:meth:`FigureCache.get`): no link, every
field checked against its type and bounds, every file's size and hash against the manifest; one that does not is
a miss, drawn again and replaced. Entries of other code are removed when one is written, so the cache holds one
version's figures. A hit gives the same bytes as a drawing: the same seed, the same files, cached or not.
"""
from __future__ import annotations

import functools
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
MAX_TITLE, MAX_CAPTION = 2_000, 40_000
_NAME = re.compile(r"[A-Za-z0-9_.-]{1,120}")
_HEX = re.compile(r"[0-9a-f]{64}")
_PACKAGES = ("lnrecency", "lnrecency.theory", "lnrecency.numerics")


@functools.lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """SHA-256 of what draws a figure: every file (path and bytes) of the packages ``lnrecency``, ``theory`` and
    ``numerics`` (their sources, data and compiled extensions; no ``__pycache__``), the versions of numpy,
    matplotlib and Pillow, and matplotlib's settings (``rcParams``, but the interactive backend)."""
    import importlib

    import matplotlib
    import numpy
    import PIL

    h = hashlib.sha256()
    for name in _PACKAGES:
        root = Path(importlib.import_module(name).__file__).parent
        for path in sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts
                           and not (name == "lnrecency" and p.relative_to(root).parts[0] in ("theory", "numerics"))):
            h.update(f"{name}/{path.relative_to(root).as_posix()}\0".encode())
            h.update(path.read_bytes())
    h.update(f"numpy {numpy.__version__} matplotlib {matplotlib.__version__} pillow {PIL.__version__}".encode())
    params = {k: repr(v) for k, v in matplotlib.rcParams.items() if k != "backend"}
    h.update(json.dumps(params, sort_keys=True).encode())
    return h.hexdigest()


def unit_key(unit: str, inputs: str) -> str:
    """The key of a drawing unit's entry: SHA-256 of :data:`FORMAT`, the code, the unit and its inputs (a string
    that changes whenever anything the unit draws from does)."""
    text = json.dumps({"format": FORMAT, "code": code_fingerprint(), "unit": unit, "inputs": inputs}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class CachedFigure:
    """A figure's record as its entry keeps it (what the report's index needs of a drawn figure)."""

    name: str
    title: str
    caption: str
    tight: bool
    not_run: bool


class FigureCache:
    """The figure entries under ``root`` (a cache root, :func:`lnrecency.experiments.run_cache.cache_root`)."""

    def __init__(self, root: str | os.PathLike, formats: tuple[str, ...] = ("png", "pdf")):
        self.base = Path(root) / "figures"
        self.code = self.base / code_fingerprint()[:32]
        self.formats = tuple(formats)

    def get(self, key: str, out: Path) -> list[tuple[CachedFigure, list[Path]]] | None:
        """The entry ``key``'s figures copied into ``out`` ([(record, paths)], in the unit's order), or None: no
        entry, or one that does not pass the reader (then nothing is copied)."""
        entry = self.code / key
        try:
            figs = self._read(entry, key)
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
        """The file's bytes, read once from a plain file (no link) and checked against its manifest entry."""
        with open_plain(path, "figure", MAX_FILE_BYTES) as fh:
            blob = fh.read(MAX_FILE_BYTES + 1)
        if len(blob) != ident["size"] or hashlib.sha256(blob).hexdigest() != ident["sha256"]:
            raise ValueError(f"{path} is not the file its manifest names")
        return blob

    def _read(self, entry: Path, key: str) -> list[tuple[CachedFigure, dict]]:
        for folder in (self.base, self.code, entry):  # nothing read through a link
            if not stat.S_ISDIR(os.lstat(folder).st_mode):
                raise ValueError(f"{folder} is not a folder")
        data = read_json(entry / "manifest.json", what="figure cache manifest", max_bytes=MAX_MANIFEST_BYTES,
                         max_depth=6)
        if data.get("format") != FORMAT or data.get("key") != key or data.get("formats") != list(self.formats):
            raise ValueError("another entry's manifest")
        figs = data.get("figures")
        if not isinstance(figs, list) or not 0 < len(figs) <= MAX_FIGURES:
            raise ValueError("figures")
        out = []
        for f in figs:
            if not isinstance(f, dict) or set(f) != {"name", "title", "caption", "tight", "not_run", "files"}:
                raise ValueError("a figure's fields")
            name, title, caption, files = f["name"], f["title"], f["caption"], f["files"]
            if not (isinstance(name, str) and _NAME.fullmatch(name) and isinstance(title, str)
                    and len(title) <= MAX_TITLE and isinstance(caption, str) and len(caption) <= MAX_CAPTION
                    and isinstance(f["tight"], bool) and isinstance(f["not_run"], bool) and isinstance(files, dict)):
                raise ValueError("a figure's field")
            if list(files) != ([] if f["not_run"] else list(self.formats)):
                raise ValueError("a figure's files")
            for fmt, ident in files.items():
                if not (isinstance(ident, dict) and set(ident) == {"sha256", "size"}
                        and isinstance(ident["sha256"], str) and _HEX.fullmatch(ident["sha256"])
                        and type(ident["size"]) is int and 0 < ident["size"] <= MAX_FILE_BYTES):
                    raise ValueError("a file's identity")
            out.append((CachedFigure(name, title, caption, f["tight"], f["not_run"]), files))
        return out

    def put(self, key: str, figs: list[tuple[CachedFigure, list[Path]]]) -> bool:
        """Keep ``figs`` (records and the files just written) as entry ``key``, written whole (staged, then
        renamed); entries of other code are removed first. False (nothing kept) when the cache cannot be written
        or holds a link where a folder should be."""
        if any([p.suffix[1:] for p in paths] != ([] if fig.not_run else list(self.formats)) for fig, paths in figs):
            return False  # not the files an entry holds
        try:
            self._forget_other_code()
            self.code.mkdir(parents=True, exist_ok=True)
            for folder in (self.base, self.code):
                if not stat.S_ISDIR(os.lstat(folder).st_mode):
                    return False
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
                                 "tight": bool(fig.tight), "not_run": bool(fig.not_run), "files": files})
            (stage / "manifest.json").write_text(json.dumps(
                {"format": FORMAT, "key": key, "formats": list(self.formats), "figures": manifest}, indent=1))
            entry = self.code / key
            if os.path.islink(entry):
                os.unlink(entry)
            elif os.path.isdir(entry):  # a damaged entry (the reader refused it): replaced
                shutil.rmtree(entry)
            os.rename(stage, entry)
            return True
        except OSError:
            if "stage" in locals() and os.path.isdir(stage) and not os.path.islink(stage):
                shutil.rmtree(stage, ignore_errors=True)
            return False

    def _forget_other_code(self) -> None:
        """Remove the entries of other code (folders named by a fingerprint other than this code's; links and
        other names are left alone)."""
        if not os.path.isdir(self.base) or os.path.islink(self.base):
            return
        for child in os.scandir(self.base):
            if child.name != self.code.name and re.fullmatch(r"[0-9a-f]{32}", child.name) \
                    and child.is_dir(follow_symlinks=False):
                shutil.rmtree(child.path, ignore_errors=True)
