"""Stored rows, round 8 (issue 86, items 1-2): a stored row whose label its own qualifiers contradict is refused
(never rendered or carried forward), and every stored field has bounds, refused as a ValueError naming the field."""
from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest

from lnrecency.inference.qualifiers import MAX_TEXT, Qualifiers, contradiction
from lnrecency.report.words.findings import finding_of, findings_of

ROOT = Path(__file__).resolve().parents[2]
SNAPSHOT = json.loads((ROOT / "docs" / "verdicts.json").read_text(encoding="utf-8"))


def test_every_committed_row_follows_from_its_qualifiers():
    rows, quick = SNAPSHOT["verdicts"], SNAPSHOT["quick_rows"]
    assert len(findings_of(rows + quick)) == len(rows) + len(quick)  # none dropped (a claim declared since adds rows)
    assert len(rows) >= 138  # the rows of round 8 and after


def _row(cid: str, verdict: str) -> dict:
    return copy.deepcopy(next(r for r in SNAPSHOT["verdicts"] if r["id"] == cid and r["verdict"] == verdict))


def test_a_flipped_row_is_refused_naming_the_claim_and_what_contradicts_it():
    row = _row("C2", "refuted")
    row["verdict"] = "confirmed"
    with pytest.raises(ValueError, match=r"the C2 row .* it reads confirmed but its qualifiers say it fails"):
        finding_of(row)


def test_a_decided_row_with_an_undecided_rows_reason_is_refused():
    row = _row("TU1", "refuted")
    row["qualifiers"]["reason"] = "not significant"
    with pytest.raises(ValueError, match="reads refuted but its qualifiers give the reason 'not significant'"):
        finding_of(row)
    assert contradiction("inconclusive", Qualifiers(reason="holm")) == ""


@pytest.mark.parametrize("data, words", [
    ({"estimate": 10 ** 400}, "qualifier estimate must be a finite number within float range"),
    ({"counter": {"label": "x"}}, "qualifier counter needs estimate"),
    ({"counter": {"label": "x", "estimate": 1.0, "low": 2.0, "high": 1.0}}, "counter's interval must have both ends"),
    ({"where": "w " * 200_000}, f"qualifier where must be at most {MAX_TEXT} characters"),
    ({"low": 2.0, "high": 1.0}, "qualifier interval must have both ends, low <= high"),
])
def test_every_stored_field_has_bounds(data, words):
    with pytest.raises(ValueError, match=words.replace("(", r"\(")):
        Qualifiers.from_json(data)


def test_the_readme_refuses_a_snapshot_with_a_contradicting_row_in_one_line(tmp_path):
    (tmp_path / "docs").mkdir()
    data = copy.deepcopy(SNAPSHOT)
    row = next(r for r in data["verdicts"] if r["id"] == "C2" and r["verdict"] == "refuted")
    row["verdict"] = "confirmed"
    (tmp_path / "docs" / "verdicts.json").write_text(json.dumps(data))
    (tmp_path / "README.md").write_text("x")
    out = subprocess.run([sys.executable, "-m", "lnrecency.report.readme", str(tmp_path / "README.md"),
                          "--keep-trained", "--claim", "T1"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and "does not follow from what is stored with it" in out.stderr
    assert "Traceback" not in out.stderr


@pytest.mark.parametrize("verdicts, snapshot, words", [
    ("5", None, '"verdicts" must be a list of verdict rows'),
    (None, '{"tests": {"Q1": "x"}}', "test 'Q1' must be an object"),
])
def test_requalify_refuses_malformed_snapshots_in_one_line(tmp_path, verdicts, snapshot, words):
    (tmp_path / "verdicts.json").write_text('{"verdicts": 5}' if verdicts else json.dumps(SNAPSHOT))
    if snapshot:
        (tmp_path / "thesis_text_v2.json").write_text(snapshot)
    out = subprocess.run([sys.executable, "-m", "lnrecency.report.words.requalify", str(tmp_path)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and words in out.stderr and "Traceback" not in out.stderr


def test_a_flipped_verdict_in_an_evidence_store_is_refused_when_read_back(tmp_path):
    """Issue 86, item 1: every ClaimResult is checked when it is made, so one read back from an evidence store
    (report --from, the kept verdicts) whose verdict was flipped against its qualifiers is refused in one line."""
    from lnrecency.files.store import StoreError, dumps, loads
    from lnrecency.inference.evidence import NotRun
    from lnrecency.inference.verdicts import ClaimResult

    row = _row("C2", "refuted")
    result = ClaimResult("C2", row["source"], row["statement"], row["setting"], "refuted", NotRun(reason="a test"),
                         row["finding"], Qualifiers.from_json(row["qualifiers"]))
    text, blob = dumps((result,))
    (tmp_path / "evidence.json").write_text(text.replace('"refuted"', '"confirmed"'))
    (tmp_path / "arrays.npz").write_bytes(blob)
    with pytest.raises(StoreError, match="the C2 row does not follow from what is stored with it: it reads confirmed"):
        loads(tmp_path)
    (tmp_path / "evidence.json").write_text(text)
    assert loads(tmp_path)[0].verdict == "refuted"  # as written, it reads back
