"""A fresh report decides the trained claims whose experiments publish their runs (issue 85, item 2): each row is
decided again from docs/'s per-run rows by the plan's own rule, must equal the README's row (docs/verdicts.json), and
says so; a row the runs do not decide the same way is refused, and a cache that disagrees is named."""
from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest

from lnrecency.claims import published as pub
from lnrecency.claims.catalog import trained_ids
from lnrecency.report.published_rows import with_published

ROOT = Path(__file__).resolve().parents[2]
STORED = json.loads((ROOT / "docs" / "verdicts.json").read_text(encoding="utf-8"))["verdicts"]


@pytest.fixture()
def docs(tmp_path, monkeypatch):
    """A copy of docs/'s snapshots the test may change, read in place of docs/."""
    for name in ("thesis_text.json", "thesis_text_v2.json", "thesis_text_v3.json", "thesis_text_v4.json",
                 "thesis_text_v5.json", "wu_icl.json", "pretrained.json"):
        shutil.copy(ROOT / "docs" / name, tmp_path / name)
    monkeypatch.setattr(pub, "DOCS", tmp_path)
    pub._decided.cache_clear()
    yield tmp_path
    pub._decided.cache_clear()


def test_a_fresh_report_decides_every_claim_that_publishes_its_runs_as_the_readme_says():
    rows = with_published([])
    publishing = [cid for cid in trained_ids() if pub.publishes(cid)]
    assert {r.id for r in rows} == set(publishing) and len(publishing) == 32  # R1 with docs/pretrained.json
    for cid in publishing:
        mine = [(r.statement, r.verdict) for r in rows if r.id == cid]
        assert mine == [(s["statement"], s["verdict"]) for s in STORED if s["id"] == cid], cid
    for r in rows:
        assert isinstance(r.evidence, pub.PublishedRuns) and not r.not_run
        assert r.finding.startswith(f"Verdict and interval re-derived here from the {r.evidence.runs} runs published "
                                    f"in {r.evidence.file} by the plan's own rule")
        assert f"lnrecency {r.evidence.command}" in r.finding
    # the claims that publish no per-run rows stay as they were (not run here)
    assert not any(pub.publishes(cid) for cid in ("TM1", "S2.1", "S3.1"))


def test_a_stored_row_the_runs_do_not_decide_is_refused(docs):
    """N1's arms swapped in the published runs: the rule now confirms N1, so docs/verdicts.json's "refuted" no longer
    follows from them: TN1 is refused (damaged), naming both verdicts."""
    snap = json.loads((docs / "thesis_text_v4.json").read_text())
    runs = snap["runs"]
    runs["N1 layernorm"], runs["N1 none"] = runs["N1 none"], runs["N1 layernorm"]
    (docs / "thesis_text_v4.json").write_text(json.dumps(snap))
    rows = {r.id: r for r in with_published([])}
    tn1 = rows["TN1"]
    assert tn1.not_run and "refuted" in tn1.finding and "confirmed" in tn1.finding and "refused" in tn1.finding
    assert not rows["TU1"].not_run  # the other rows of the plan still follow


def test_a_stored_interval_the_runs_do_not_give_is_refused(docs, monkeypatch):
    """The verdict alone is not enough: TU1's stored interval moved by a hair is refused, naming both."""
    from lnrecency.report import published_rows

    real = published_rows._stored_rows

    def moved(cid):
        rows = json.loads(json.dumps(real(cid)))
        if cid == "TU1":
            rows[0]["qualifiers"]["low"] += 1e-12
        return rows
    monkeypatch.setattr(published_rows, "_stored_rows", moved)
    rows = {r.id: r for r in with_published([])}
    assert rows["TU1"].not_run and "gives the interval" in rows["TU1"].finding and not rows["TU2"].not_run


def test_a_damaged_snapshot_is_named(docs):
    (docs / "thesis_text_v3.json").write_text('{"runs": {"bos layernorm": [{"seed": 0}]}}')
    rows = {r.id: r for r in with_published([])}
    assert rows["TC1"].not_run and "docs/thesis_text_v3.json" in rows["TC1"].finding


def test_cached_rows_are_kept_when_they_agree_and_named_when_they_do_not():
    base = {r.id: r for r in with_published([])}
    agree = [dataclasses.replace(base["TU1"], finding="from the cache")]
    assert [r.finding for r in with_published(agree) if r.id == "TU1"] == ["from the cache"]
    differ = [dataclasses.replace(base["TU1"], verdict="confirmed", finding="from the cache")]
    row = next(r for r in with_published(differ) if r.id == "TU1")
    assert row.verdict == "refuted" and row.finding.startswith("The cached runs decide confirmed, the 58 runs")


def test_cached_rows_are_compared_as_the_registry_labels_them():
    """A cached TV row agrees with the published runs and is kept; one that reads "reproduced" (a label for someone
    else's statement; TV1's is ours) cannot even be made: the label follows the source (issue 84, item 6)."""
    base = {r.id: r for r in with_published([])}
    cached = [dataclasses.replace(base["TV1"], finding="from the cache")]
    assert [r.finding for r in with_published(cached) if r.id == "TV1"] == ["from the cache"]
    with pytest.raises(ValueError, match="the TV1 row reads 'reproduced', a label for someone else's statement"):
        dataclasses.replace(base["TV1"], verdict="reproduced")


def test_a_quick_runs_rows_give_way_to_the_published_ones_and_say_so():
    base = {r.id: r for r in with_published([])}
    quick = [dataclasses.replace(base["TU1"], verdict="inconclusive", finding="quick run: not decisive")]
    row = next(r for r in with_published(quick, quick=True) if r.id == "TU1")
    assert row.verdict == "refuted" and row.finding.startswith("The cache holds this claim's quick runs")

