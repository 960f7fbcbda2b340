"""Robustness round 7 (issue 78), stored records and wheels: every decoded field checked against its declared type
(no field of a stored record typed ``Any`` or ``object``), and a wheel whose members are encrypted or use a
compression method other than stored or deflate refused in one line before any member is read."""
from __future__ import annotations

import dataclasses
import json
import struct
import typing
import zipfile

import numpy as np
import pytest

from lnrecency.files.record_tags import TAGS
from lnrecency.files.store import FORMAT, StoreError, _hints, _record_class, loads
from tests.files.gguf_bytes import tiny_llama, wheel

#: tagged records that hold live objects (a model, a figure, a callable, a shape spec): never stored, so never built
#: from stored evidence (the decoder refuses their untyped fields)
NEVER_STORED = {"Loaded", "Many", "ReportFigure", "TableOutput"}


def _untyped(hint) -> bool:
    return hint is typing.Any or hint is object or any(_untyped(a) for a in typing.get_args(hint) if a is not ...)


def test_no_stored_record_has_an_untyped_field():
    """Issue 78, item 4: every tagged record's annotations resolve, and none is Any or object (the decoder checks
    each field against them); the records that cannot be stored are named."""
    import lnrecency.claims.registry  # noqa: F401  (every claim module, so that every record's names resolve)

    untyped = set()
    for tag, name in TAGS.items():
        cls = _record_class(name, renamed=False)
        if tag in NEVER_STORED:
            continue
        hints = _hints(cls)
        untyped |= {f"{tag}.{f.name}" for f in dataclasses.fields(cls) if f.init and _untyped(hints[f.name])}
    assert untyped == set(), f"give these fields of stored records a type: {sorted(untyped)}"


def _store(tmp_path, gain):
    fields = {"centres": False, "gain": gain, "name": "l2", "rotation_invariant": True, "scales": True}
    (tmp_path / "evidence.json").write_text(json.dumps({"format": FORMAT, "data": {"__tag__": "Normalisation",
                                                                                     "fields": fields}}))
    np.savez(tmp_path / "arrays.npz")
    return tmp_path


def test_a_string_where_a_number_is_declared_is_refused(tmp_path):
    """Issue 78, item 4: a Normalisation whose gain is text (which .factor() would sympify) is refused when read,
    and cannot be made; the valid neighbour, a gain of 2, decodes and scales."""
    import sympy

    from lnrecency.model.layers import Normalisation

    with pytest.raises(StoreError, match="field 'gain' holds str"):
        loads(_store(tmp_path, "__import__('os').system('true')"))
    with pytest.raises(ValueError, match="gain must be a number; got str"):
        Normalisation("l2", False, True, gain="1")
    norm = loads(_store(tmp_path, 2))
    assert norm.gain == 2 and norm.factor(sympy.Integer(4)) == sympy.Rational(1, 2)


def test_a_field_typed_any_is_refused_when_read(tmp_path):
    """A record that still declares an untyped field is never built from stored evidence."""
    (tmp_path / "evidence.json").write_text(json.dumps(
        {"format": FORMAT, "data": {"__tag__": "Many", "fields": {"item": "x", "minimum": 1}}}))
    np.savez(tmp_path / "arrays.npz")
    with pytest.raises(StoreError, match="field 'item' holds str"):
        loads(tmp_path)


@pytest.mark.parametrize("how", ["method99", "encrypted"])
@pytest.mark.parametrize("member", ["METADATA", "RECORD"])
def test_a_wheel_with_an_unreadable_member_is_refused_in_one_line(tmp_path, how, member):
    """Issue 78, item 7: any member (not only the model) encrypted or compressed with method 99: a ValueError naming
    --gguf, the wheel and the member, not NotImplementedError / RuntimeError. The neighbour: the intact wheel."""
    from lnrecency.files.gguf_source import open_source

    w = wheel(tmp_path / "p-1.0.0-py3-none-any.whl", "p", {"m.gguf": tiny_llama()})
    assert open_source(w).size > 0
    name = f"p-1.0.0.dist-info/{member}"
    raw = bytearray(w.read_bytes())
    with zipfile.ZipFile(w) as z:
        local = z.getinfo(name).header_offset
    central = raw.find(name.encode(), raw.find(b"PK\x01\x02")) - 46
    for at in ((local + 8, central + 10) if how == "method99" else (local + 6, central + 8)):
        value = 99 if how == "method99" else struct.unpack("<H", raw[at:at + 2])[0] | 1
        raw[at:at + 2] = struct.pack("<H", value)
    w.write_bytes(bytes(raw))
    with pytest.raises(ValueError, match=f"--gguf '{w}': member '{name}' is "
                                         + ("compressed with method 99" if how == "method99" else "encrypted")):
        open_source(w)
