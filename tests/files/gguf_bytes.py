"""Hand-made GGUF files and wheels for the tests: every byte written here, so a header can lie."""
from __future__ import annotations

import base64
import hashlib
import struct
import zipfile
from pathlib import Path

U32, U64, F32, STR, ARR, BOOL = 4, 10, 6, 8, 9, 7


def _s(text: str) -> bytes:
    b = text.encode()
    return struct.pack("<Q", len(b)) + b


def kv(key: str, kind: int, value) -> bytes:
    out = _s(key) + struct.pack("<I", kind)
    if kind == U32:
        return out + struct.pack("<I", value)
    if kind == U64:
        return out + struct.pack("<Q", value)
    if kind == F32:
        return out + struct.pack("<f", value)
    if kind == BOOL:
        return out + struct.pack("<?", value)
    if kind == STR:
        return out + _s(value)
    if kind == ARR:  # (item kind, items): strings or u32
        item, items = value
        body = struct.pack("<IQ", item, len(items))
        body += b"".join(_s(x) if item == STR else struct.pack("<I", x) for x in items)
        return out + body
    raise ValueError(kind)


def gguf(metadata: list[bytes], tensors: list[tuple[str, tuple, int, int]], data: bytes = b"", version: int = 3,
         count: int | None = None) -> bytes:
    """A GGUF file: ``tensors`` as (name, dims, ggml type, offset); ``data`` after the 32-byte aligned header;
    ``count`` overrides the declared tensor count."""
    head = b"GGUF" + struct.pack("<IQQ", version, len(tensors) if count is None else count, len(metadata))
    head += b"".join(metadata)
    for name, dims, kind, offset in tensors:
        head += _s(name) + struct.pack("<I", len(dims)) + b"".join(struct.pack("<Q", d) for d in dims)
        head += struct.pack("<IQ", kind, offset)
    head += b"\0" * (-len(head) % 32)
    return head + data


def tiny_llama() -> bytes:
    """A well-formed two-tensor 'llama' GGUF (F32): token_embd (4 x 8) and one block weight (4 x 4)."""
    meta = [kv("general.architecture", STR, "llama"), kv("llama.block_count", U32, 1),
            kv("llama.embedding_length", U32, 4), kv("llama.attention.head_count", U32, 2),
            kv("tokenizer.ggml.tokens", ARR, (STR, [f"t{i}" for i in range(8)]))]
    return gguf(meta, [("token_embd.weight", (4, 8), 0, 0), ("blk.0.attn_q.weight", (4, 4), 0, 128)],
                bytes(128 + 64))


def huge_llama() -> bytes:
    """A 'llama' GGUF whose header declares a 2^36-element tensor (256 GiB as float32) and holds no data."""
    meta = [kv("general.architecture", STR, "llama"), kv("llama.block_count", U32, 1),
            kv("llama.embedding_length", U32, 4), kv("llama.attention.head_count", U32, 2),
            kv("tokenizer.ggml.tokens", ARR, (STR, ["a", "b"]))]
    return gguf(meta, [("token_embd.weight", (2**18, 2**18), 0, 0)])


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def wheel(path: Path, package: str, files: dict[str, bytes], requires: tuple[str, ...] = (),
          record: dict[str, bytes] | None = None) -> Path:
    """A wheel holding ``files`` under ``package/``; RECORD hashes ``record`` (default: the files themselves);
    METADATA lists ``requires`` ("name==version")."""
    dist = f"{package}-1.0.0.dist-info"
    meta = "Metadata-Version: 2.1\nName: " + package.replace("_", "-") + "\nVersion: 1.0.0\n"
    meta += "".join(f"Requires-Dist: {r}\n" for r in requires)
    rec = record if record is not None else files
    lines = [_record_line(f"{package}/{k}", v) for k, v in rec.items()] + [f"{dist}/RECORD,,"]
    with zipfile.ZipFile(path, "w") as z:
        for name, data in files.items():
            z.writestr(f"{package}/{name}", data)
        z.writestr(f"{dist}/METADATA", meta)
        z.writestr(f"{dist}/RECORD", "\n".join(lines) + "\n")
    return path
