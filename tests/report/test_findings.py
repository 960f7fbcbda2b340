"""Findings as data (issue 66, item 1): one typed Finding per verdict row, from which the README's counts, labels and
plain words and docs/verdicts.json's plain words are rendered; each plain sentence is whole and short; an interval's
side is read from its numbers."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from lnrecency.claims import catalog
from lnrecency.report.words.findings import PLAIN_WORDS, claim_rows, finding_of, findings_of

ROOT = Path(__file__).resolve().parents[2]
SNAPSHOT = json.loads((ROOT / "docs" / "verdicts.json").read_text(encoding="utf-8"))


def test_every_row_of_the_snapshot_is_a_finding_with_its_plain_sentence():
    for row in SNAPSHOT["verdicts"]:
        f = finding_of(row)
        assert (f.claim, f.verdict, f.reason) == (row["id"], row["verdict"], row["finding"])
        assert f.statement_key == row["statement_key"] and f.plain == row["plain"], row["id"]
        assert f.source == catalog.statement_source(row["id"], row["statement"], stored=True)
        assert len(f.plain.split()) <= PLAIN_WORDS and not f.plain.endswith("..."), (row["id"], f.plain)


def test_every_declared_title_fits_a_plain_sentence():
    """A lead that does not fit gives way to the claim's title: the titles must fit, so no cell is ever cut."""
    long = {d.id: len(d.title.split()) for d in catalog.CATALOG if len(d.title.split()) > PLAIN_WORDS}
    assert long == {}


def _row(cid: str, interval, finding: str = "Secondary (an interval, not a verdict): more.") -> dict:
    return {"id": cid, "statement": catalog.declared(cid).statements[0].text, "verdict": "secondary",
            "finding": finding, "interval": interval}


@pytest.mark.parametrize("interval, side", [([0.1, 0.2], "above"), ([-0.2, -0.1], "below"), ([-0.1, 0.2], "across")])
def test_an_intervals_side_is_read_from_its_numbers(interval, side):
    assert finding_of(_row("TM2", interval)).qualifiers.side == side


def test_the_sides_come_from_the_numbers_not_the_words():
    """A finding whose words say "above" while its numbers lie across 0 is counted across: the data decides."""
    rows = [_row("TM2", [-0.1, 0.2], "Secondary (an interval, not a verdict): its interval lies above 0. More."),
            _row("TM2", [0.1, 0.2], "Secondary (an interval, not a verdict): its interval lies above 0. More.")]
    ((_, _, label, said),) = claim_rows(findings_of(rows))
    assert (label, said) == ("secondary", "2 intervals: 1 across 0, 1 above 0")


def test_a_row_deciding_an_undeclared_statement_is_refused():
    two = next(d for d in catalog.CATALOG if len({s.group for s in d.statements}) > 1)  # a claim with two sources
    with pytest.raises(ValueError, match="does not declare"):
        finding_of({"id": two.id, "statement": "A statement nobody declared.", "verdict": "confirmed",
                    "finding": ""})
