"""Evidence written before the package's floors moved still reads, and renders the same report.

The fixture ``data/evidence_before_move/`` was written by ``lnrecency verify --quick --out`` at commit 82587e9,
before the move; ``data/evidence_before_move.render.json`` holds the SHA-256 of every table and text file that
version's ``lnrecency report --from`` wrote from it. ``data/evidence_before_round4/`` (and its ``.render.json``) was
written the same way at commit d420cf3, before round 4 moved the claim modules and split the trained-model room.
Today the old folder is rendered beside the same evidence
stored under today's record names, and the two must agree byte for byte (the renderer has changed since, on
purpose). Figures are left out of the comparison: their bytes depend on the matplotlib version installed (the
project asks for matplotlib>=3.8, not one version), and the manifest is compared on the files the record hashes.
"""
from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from lnrecency.files.atomic import MANIFEST
from lnrecency.files.record_renames import RENAMED
from lnrecency.files.store import FORMAT, StoreError, loads

DATA = Path(__file__).resolve().parent / "data"
OLD = DATA / "evidence_before_move"
ROUND4 = DATA / "evidence_before_round4"


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
        {"format": "lnrecency-evidence-6", "data": {"__record__": "lnrecency.config:ModelConfig", "fields": fields}}))
    np.savez(tmp_path / "arrays.npz")
    assert loads(tmp_path) == ModelConfig(norm="layernorm")


@pytest.mark.parametrize("fmt,naming,name", [
    (FORMAT, "__record__", "lnrecency.model.config:ModelConfig"),  # format 7 names records by tag only
    (FORMAT, "__record__", "lnrecency.numerics.simulate:Instances"),  # ... even a class with no tag
    ("lnrecency-evidence-6", "__tag__", "ModelConfig"),  # format 6 (before the tags) by module:qualname only
    ("lnrecency-evidence-6", "__record__", "lnrecency.numerics.simulate:Instances"),  # a record with no tag
])
def test_a_format_reads_only_its_own_record_naming(tmp_path, fmt, naming, name):
    """Issue 78, item 3. The valid neighbours: each format with its own naming (the test above, and the tags)."""
    (tmp_path / "evidence.json").write_text(json.dumps({"format": fmt, "data": {naming: name, "fields": {}}}))
    np.savez(tmp_path / "arrays.npz")
    with pytest.raises(StoreError, match="__tag__ only|not a stored record type") as exc:
        loads(tmp_path)
    assert name in str(exc.value)
    fields = {"alpha": 0.0, "embedding": "gaussian", "gamma": 1.0, "lam": 1.0, "norm": "layernorm", "residual": False}
    good = {"__tag__": "ModelConfig"} if fmt == FORMAT else {"__record__": "lnrecency.model.config:ModelConfig"}
    (tmp_path / "evidence.json").write_text(json.dumps({"format": fmt, "data": {**good, "fields": fields}}))
    assert loads(tmp_path).norm == "layernorm"


def test_the_round4_fixture_names_records_by_their_modules_before_round4():
    names = set(re.findall(r'"__record__":"([^"]+)"', (ROUND4 / "evidence.json").read_text(encoding="utf-8")))
    moved = {n for n in names if n.startswith(("lnrecency.claims.c", "lnrecency.claims.t1", "lnrecency.claims.p"))}
    assert len(moved) >= 20 and moved <= set(RENAMED), sorted(moved - set(RENAMED))[:5]


@pytest.mark.slow
@pytest.mark.parametrize("fixture", [OLD, ROUND4], ids=["floors", "round4"])
def test_an_evidence_folder_written_before_the_move_renders_identically(tmp_path, fixture, monkeypatch):
    """The old folder and the same evidence stored under today's record names hold the same evidence: today's
    folder (written from the old one as read through the renames) reads back to exactly what the old one read to,
    so the two render the same report, byte for byte (a report is a function of its evidence:
    tests/files/test_store.py), and the old folder is rendered once: the renames lose nothing. The renderer itself
    may change; data/evidence_before_move.render.json keeps the hashes the old code wrote, for the record, and the
    files it names must all still be written. The figures are built from the evidence as a report builds them but
    not rasterised (empty placeholder files): what they read is what the renames must keep, and the evidence they
    read is compared above, number for number; drawing them is tested from today's evidence against a direct report
    (tests/files/test_store.py), and their bytes depend on the matplotlib version. For the round-4 fixture every
    recorded file is compared byte for byte, and its manifest on every file the record hashes (the manifest's hash
    in the record held the figures' bytes of the matplotlib that re-recorded it: it is not compared)."""
    from lnrecency.cli.app import main
    from lnrecency.files.figure_record import ReportFigure
    from lnrecency.files.store import dumps

    def placeholders(self, out_dir, formats=("png", "pdf")):
        if self.not_run:
            return []
        paths = [Path(out_dir) / f"{self.name}.{fmt}" for fmt in formats]
        for path in paths:
            path.write_bytes(b"")
        return paths

    record = json.loads((DATA / f"{fixture.name}.render.json").read_text(encoding="utf-8"))
    names = record["sha256"]
    monkeypatch.setattr(ReportFigure, "write", placeholders)
    if "catalogue" in record:  # the claims declared when it was recorded: one declared since is not in its report
        from lnrecency.claims import catalog

        every = catalog.ids()
        assert set(record["catalogue"]) <= set(every), sorted(set(record["catalogue"]) - set(every))
        monkeypatch.setattr(catalog, "ids", lambda: tuple(c for c in every if c in record["catalogue"]))
    src = tmp_path / "evidence"
    shutil.copytree(fixture, src)
    text, arrays = dumps(loads(src))
    assert "lnrecency.config:ModelConfig" not in text and '"lnrecency.claims.c3_residual:' not in text  # today's
    today = tmp_path / "today"
    today.mkdir()
    (today / "evidence.json").write_text(text, encoding="utf-8")
    (today / "arrays.npz").write_bytes(arrays)
    again_text, again_arrays = dumps(loads(today))
    assert again_text == text  # every record, field and number, under today's names
    assert again_arrays == arrays
    out = tmp_path / "report"
    assert main(["report", "--from", str(src), "--out", str(out)]) == 0
    assert len(names) > 100

    def digest(name: str) -> str:
        return hashlib.sha256((out / name).read_bytes()).hexdigest()

    missing = sorted(n for n in names if not (out / n).is_file())
    assert missing == [], missing  # every file the old code wrote is still written
    if fixture == ROUND4:  # today's report is the one recorded for this evidence, byte for byte (the renderer's own
        # intended changes since round 4 are named, with the hashes before them, in the record's "re_recorded")
        changed = sorted(n for n, h in names.items() if n != MANIFEST and digest(n) != h)
        assert changed == [], changed
        # the manifest names every file written, and holds the recorded hash of each file the record hashes
        manifest = json.loads((out / MANIFEST).read_text(encoding="utf-8"))["files"]
        assert sorted(manifest) == sorted(p.name for p in out.iterdir() if p.name != MANIFEST)
        wrong = sorted(n for n, h in names.items() if n != MANIFEST and manifest[n]["sha256"] != h)
        assert wrong == [], wrong
