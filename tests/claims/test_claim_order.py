"""The order in which the report's verdict workers take the claims (lnrecency.claims.registry.longest_first): the
longest measured evaluation first, from lnrecency/data/claim_seconds.json, read by one checked reader; the results
are collected in registry order whatever the order the workers took."""
from __future__ import annotations

import json

import pytest

from lnrecency.claims.registry import CLAIMS, TRAINED, checked_seconds, longest_first, measured_seconds


def test_the_shipped_times_pass_the_reader_and_name_real_claims():
    for quick in (True, False):
        seconds = measured_seconds(quick)
        assert set(seconds) <= set(CLAIMS)
        assert {cid for cid in CLAIMS if cid not in TRAINED} <= set(seconds)  # every parameter-free claim measured


def test_the_longest_come_first_and_an_unmeasured_claim_before_all():
    text = json.dumps({"quick": {"A": 1.0, "B": 3.0, "C": 2.0, "D": 2.0}, "full": {}})
    from lnrecency.claims import registry

    seconds = checked_seconds(text, True)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(registry, "measured_seconds", lambda quick: seconds)
        assert longest_first(["A", "B", "C", "D", "E"], True) == ["E", "B", "C", "D", "A"]  # ties: given order


@pytest.mark.parametrize("bad", ["not json", json.dumps([1, 2]), json.dumps({"quick": {"T1": -1.0}}),
                                 json.dumps({"quick": {"T1": True}}), json.dumps({"quick": {"T1": "2"}}),
                                 '{"quick": {"T1": NaN}}', json.dumps({"full": {}})])
def test_a_malformed_file_is_refused_naming_it(bad):
    with pytest.raises(ValueError, match="claim_seconds.json: quick must map claim IDs"):
        checked_seconds(bad, True)


def test_workers_in_that_order_give_the_serial_results():
    from lnrecency.claims.registry import evaluate

    ids = ["P1", "P6", "P3"]  # cheap claims, given out of order
    serial = evaluate(ids, quick=True, progress=False, jobs=1)
    assert [r.to_json() for r in evaluate(ids, quick=True, progress=False, jobs=2)] == [r.to_json() for r in serial]
