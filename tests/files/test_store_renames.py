"""Evidence written before the package's floors moved still reads, and renders the same report.

The fixture ``data/evidence_before_move/`` was written by ``lnrecency verify --quick --out`` at commit 82587e9,
before the move; ``data/evidence_before_move.render.json`` holds the SHA-256 of every table and text file that
version's ``lnrecency report --from`` wrote from it (the expected values come from the old code, not from the code
under test). Figures are left out of the comparison: their bytes depend on the matplotlib version installed.
"""
from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from lnrecency.files.record_renames import RENAMED
from lnrecency.files.store import FORMAT, StoreError, loads

DATA = Path(__file__).resolve().parent / "data"
OLD = DATA / "evidence_before_move"


def test_the_fixture_names_records_by_their_old_modules():
    names = set(re.findall(r'"__record__":"([^"]+)"', (OLD / "evidence.json").read_text(encoding="utf-8")))
    old = names & set(RENAMED)
    assert len(old) >= 20, sorted(names)[:10]  # the fixture exercises the table, not only unmoved names
    assert "lnrecency.config:ModelConfig" in old and "lnrecency.evidence:Setting" in old


def test_every_renamed_record_resolves_today():
    """The table is not stale: each target is a record class defined under that name today."""
    import dataclasses
    import importlib

    for old, new in RENAMED.items():
        module, _, qualname = new.partition(":")
        cls = getattr(importlib.import_module(module), qualname)
        assert dataclasses.is_dataclass(cls) and cls.__module__ == module, (old, new)


def test_three_not_run_records_became_one():
    from lnrecency.inference.evidence import NotRun

    olds = [k for k in RENAMED if k.endswith(":NotRun")]
    assert len(olds) == 3 and {RENAMED[k] for k in olds} == {f"{NotRun.__module__}:NotRun"}


@pytest.mark.parametrize("record", ["lnrecency.evidence:NoSuchRecord", "lnrecency.evidence:dataclass",
                                    "lnrecency.config:_FROM_LAYERS"])
def test_an_unknown_old_name_is_still_refused(tmp_path, record):
    """The table adds names; it does not widen what a folder may name."""
    data = {"format": FORMAT, "data": {"__record__": record, "fields": {}}}
    (tmp_path / "evidence.json").write_text(json.dumps(data))
    np.savez(tmp_path / "arrays.npz")
    with pytest.raises(StoreError):
        loads(tmp_path)


def test_an_old_name_decodes_to_todays_record(tmp_path):
    from lnrecency.model.config import ModelConfig

    fields = {"alpha": 0.0, "embedding": "gaussian", "gamma": 1.0, "lam": 1.0, "norm": "layernorm", "residual": False}
    (tmp_path / "evidence.json").write_text(json.dumps(
        {"format": FORMAT, "data": {"__record__": "lnrecency.config:ModelConfig", "fields": fields}}))
    np.savez(tmp_path / "arrays.npz")
    assert loads(tmp_path) == ModelConfig(norm="layernorm")


@pytest.mark.slow
def test_an_evidence_folder_written_before_the_move_renders_identically(tmp_path):
    from lnrecency.cli.app import main

    src = tmp_path / "evidence"
    shutil.copytree(OLD, src)
    out = tmp_path / "report"
    assert main(["report", "--from", str(src), "--out", str(out)]) == 0
    expected = json.loads((DATA / "evidence_before_move.render.json").read_text(encoding="utf-8"))["sha256"]
    got = {name: hashlib.sha256((out / name).read_bytes()).hexdigest() for name in expected}
    differ = sorted(n for n in expected if got[n] != expected[n])
    assert differ == [], differ
    assert len(expected) > 100
