"""A row is re-decided from the evidence stored with it (issue 86, item 1): a setting whose own record decides the
row (a boundary search, a printed line's check) must give the row's outcome, or the row must be inconclusive; a
flipped label is refused when the row is made and when an evidence store is read back, naming the claim, the setting
and what its evidence decides."""
from __future__ import annotations

import dataclasses

import pytest

from lnrecency.claims.registry import evaluate
from lnrecency.inference.verdicts import evidence_contradiction


@pytest.fixture(scope="module")
def rows():
    return evaluate(["C6", "P7", "T1"], quick=True, progress=False)


@pytest.mark.parametrize("cid, verdict, decided", [("C6", "refuted", "DeeperEvidence"),
                                                   ("P7", "refuted", "DifferenceEvidence"),
                                                   ("T1", "confirmed", "T1Evidence")])
def test_a_flipped_label_is_refused_naming_the_setting(rows, cid, verdict, decided):
    row = next(r for r in rows if r.id == cid and r.verdict == verdict)
    flipped = "refuted" if verdict == "confirmed" else "confirmed"
    with pytest.raises(ValueError, match=rf"the {cid} row does not follow from what is stored with it: it reads "
                                         rf"{flipped} but the evidence of setting 1 \({decided}\) decides {verdict}"):
        dataclasses.replace(row, verdict=flipped, qualifiers=None)


def test_a_decided_setting_may_leave_its_row_undecided_never_the_reverse(rows):
    refuted = next(r for r in rows if r.id == "P7")
    assert evidence_contradiction("inconclusive", refuted.evidence) == ""  # a failed check leaves it undecided
    assert "decides refuted" in evidence_contradiction("confirmed", refuted.evidence)
    assert "decides refuted" in evidence_contradiction("reproduced", refuted.evidence)  # labels read as outcomes


def test_a_record_that_decides_another_question_opts_out():
    """P9's rows each read one unit; its record's own verdict is both units' (inconclusive when they differ), so it
    would contradict them: the rows are made (the opt-out holds) although their records disagree with them."""
    from lnrecency.claims.parameter_free.p8_p9_printed_numeric import WeakensEvidence
    from lnrecency.inference.evidence import SettingGroup

    assert WeakensEvidence.decides_row is False
    rows = [r for r in evaluate(["P9"], quick=True, progress=False) if isinstance(r.evidence, SettingGroup)]
    disagree = [r for r in rows for p in r.evidence.per_setting
                if isinstance(p.evidence, WeakensEvidence) and p.evidence.verdict != r.verdict]
    assert disagree, "P9's records agree with their rows: the opt-out is no longer needed"
