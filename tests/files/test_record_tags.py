"""Stable record tags (issue 66): the evidence store names every record by a tag from
lnrecency/files/record_tags.py, never by the module it lives in; each tag resolves to the class it names today;
every record class has one; a tag this version does not have is refused in one line."""
from __future__ import annotations

import dataclasses
import importlib
import json

import pytest

from lnrecency.files.record_tags import TAGS
from lnrecency.files.store import FORMAT, StoreError, dumps, loads


def test_every_tag_names_a_record_class_where_it_lives_today():
    assert len(set(TAGS.values())) == len(TAGS)  # one tag per class
    for tag, name in TAGS.items():
        module, _, qualname = name.partition(":")
        cls = getattr(importlib.import_module(module), qualname)
        assert dataclasses.is_dataclass(cls) and cls.__module__ == module and cls.__qualname__ == qualname, tag


def test_every_evidence_record_has_a_tag():
    from lnrecency.claims.catalog import modules
    from lnrecency.inference.evidence import Evidence

    for name in modules():  # every claim module, where most records are declared
        importlib.import_module(f"lnrecency.claims.{name}")

    def below(c):
        for s in c.__subclasses__():
            yield s
            yield from below(s)
    tagged = set(TAGS.values())
    missing = sorted(f"{c.__module__}:{c.__qualname__}" for c in below(Evidence)
                     if c.__module__.startswith("lnrecency.") and f"{c.__module__}:{c.__qualname__}" not in tagged)
    assert missing == [], f"give these records a tag in lnrecency/files/record_tags.py: {missing}"


def test_stored_evidence_names_tags_not_modules(quick_evidence_session, tmp_path):
    text = (quick_evidence_session / "evidence.json").read_text(encoding="utf-8")
    assert '"__tag__":' in text and '"__record__"' not in text and '"lnrecency.' not in text
    assert json.loads(text)["format"] == FORMAT
    from lnrecency.model.config import ModelConfig

    again_text, arrays = dumps(loads(quick_evidence_session))
    assert again_text == text  # read back and written again: the same bytes
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "arrays.npz").write_bytes(arrays)
    (bad / "evidence.json").write_text(json.dumps({"format": FORMAT, "data": {"__tag__": "NoSuchRecord",
                                                                              "fields": {}}}))
    with pytest.raises(StoreError, match="record tag this version does not have: 'NoSuchRecord'"):
        loads(bad)
    assert ModelConfig.__qualname__ in TAGS  # the model's configuration is stored under its own tag


def test_an_untagged_record_is_refused_when_written():
    from lnrecency.inference.evidence import Evidence, record

    @record
    class Untagged(Evidence):
        x: float

    Untagged.__module__ = "lnrecency.inference.evidence"
    with pytest.raises(TypeError, match="has no tag"):
        dumps(Untagged(x=1.0))
