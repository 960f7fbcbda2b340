"""The report says what it read (issue 52): every cache entry a verdict rested on is noted (kind, entry, plan,
date, hash) and listed in the report's provenance section; a hermetic report (`--no-cache`) reads none, whatever
was planted in the machine's cache; `--cache DIR` reads another."""
from __future__ import annotations

import json

import pytest

from lnrecency.experiments import run_cache
from lnrecency.report.build import provenance_lines


@pytest.fixture
def root(tmp_path, monkeypatch):
    monkeypatch.setenv("LNRECENCY_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_every_read_entry_is_noted_once_with_its_plan_and_hash(root):
    import hashlib

    run_cache.clear_reads()
    path = run_cache.entry("thesis-text", "k-attn2-none-0.json")
    run_cache.write(path, {"plan_sha256": "ab" * 32, "x": 1})
    assert run_cache.reads() == []  # written, not read
    for _ in range(2):
        run_cache.read(path)
    (e,) = run_cache.reads()
    assert (e["kind"], e["entry"], e["plan_sha256"]) == ("thesis-text", "k-attn2-none-0.json", "ab" * 32)
    assert e["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest() and e["bytes"] == path.stat().st_size
    assert run_cache.read(run_cache.entry("runs", "missing.json")) is None and len(run_cache.reads()) == 1
    lines = "\n".join(provenance_lines(run_cache.reads()))
    assert "1 cached result read" in lines and "| thesis-text | `k-attn2-none-0.json` | abababababab |" in lines
    assert "Not recorded" in provenance_lines(None)[0]  # evidence written before provenance was kept
    run_cache.clear_reads()
    assert "No cached result was read" in "\n".join(provenance_lines(run_cache.reads()))


def test_a_hermetic_root_does_not_see_a_planted_entry(root, tmp_path):
    """A planted (damaged) pretrained-model cache makes R1 evaluable (reported as damaged) under the machine's
    cache; under an empty root (what `report --no-cache` uses) it is not seen; the root is restored after."""
    from lnrecency.claims.registry import available
    from lnrecency.experiments.studies.pretrained import PretrainedSettings

    planted = run_cache.entry("pretrained", f"pretrained-{PretrainedSettings().key()}.json")
    planted.parent.mkdir(parents=True)
    planted.write_text(json.dumps({"settings": {}, "models": "x"}))
    assert available("R1", False)
    empty = tmp_path / "empty"
    empty.mkdir()
    with run_cache.using_root(empty) as where:
        assert where == empty.resolve() and not available("R1", False)
    assert run_cache.cache_root() == root


def test_report_cache_flags_are_checked_before_any_work(tmp_path, capsys):
    from lnrecency.cli.app import main

    assert main(["report", "--cache", str(tmp_path / "nope"), "--out", str(tmp_path / "r")]) == 2
    assert "--cache" in capsys.readouterr().err and not (tmp_path / "r").exists()
    with pytest.raises(SystemExit):
        main(["report", "--no-cache", "--cache", str(tmp_path), "--out", str(tmp_path / "r")])


def test_the_report_names_the_cache_folder_it_read(quick_report_session, quick_evidence_session, tmp_path):
    """Issue 66: report.json and index.md name the cache folder, also when no entry was read from it; a rendering
    from the stored evidence names the same folder; a hermetic block (`report --no-cache`) names none instead of
    its temporary folder, so that a hermetic report does not depend on where that folder was made."""
    out, _ = quick_report_session
    meta = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert meta["provenance"] == [] and "quick-report-empty-cache" in meta["cache"]
    index = (out / "index.md").read_text(encoding="utf-8")
    assert f"Cache folder: `{meta['cache']}`." in index and "No cached result was read" in index
    from lnrecency.files.store import loads

    assert loads(quick_evidence_session).cache == meta["cache"]
    with run_cache.using_root(tmp_path, hermetic=True):
        assert run_cache.cache_label() == run_cache.HERMETIC
        with run_cache.using_root(tmp_path / "inner"):
            assert run_cache.cache_label() == str((tmp_path / "inner").resolve())
    assert run_cache.cache_label() == str(run_cache.cache_root().resolve())
    assert provenance_lines([], None) == provenance_lines([])  # evidence from before: no folder line
