"""lnrecency.inference.evidence: typed records, their one JSON rule, and verdicts that refuse untyped evidence."""
from __future__ import annotations

import dataclasses
import json
import math

import pytest

from lnrecency.inference.evidence import Evidence, PerSetting, SettingGroup, item, jsonable, record
from lnrecency.inference.records import MeanChecks, OrderingTest, OrderingTests, RemainderConstant
from lnrecency.inference.stats import mean_check, ordering_check
from lnrecency.inference.verdicts import ClaimResult


@record
class _Demo(Evidence):
    JSON_PROPERTIES = ("total",)

    a: int
    renamed: str = item(key="not an identifier (x)")
    check: object = item(flatten=True)
    extra: float | None = item(omit_none=True)
    kept_null: float | None = None

    @property
    def total(self) -> int:
        return self.a + 1


def test_json_rule_order_keys_flatten_omit_properties():
    d = _Demo(a=1, renamed="r", check=ordering_check(2.0, 1.0, k=1.5))
    assert d.to_json() == {"a": 1, "not an identifier (x)": "r", "mean": 2.0, "stderr": 1.0, "z": 2.0, "k": 1.5,
                           "verdict": "confirmed", "kept_null": None, "total": 2}
    assert list(d.to_json())[:3] == ["a", "not an identifier (x)", "mean"]
    assert _Demo(a=1, renamed="r", check=ordering_check(0.0, 1.0, k=1.5), extra=float("nan")).to_json()["extra"] is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        d.a = 2
    with pytest.raises(TypeError):  # keyword-only: no positional construction
        _Demo(1, "r", None)


def test_records_read_by_attribute_and_derive_their_verdicts():
    tests = (OrderingTest(i=4, j=3, k_key=2, check=ordering_check(5.0, 1.0, k=3.0)),
             OrderingTest(i=4, j=2, k_key=1, check=ordering_check(-5.0, 1.0, k=3.0)))
    o = OrderingTests(layer=2, d=64, samples=100, seed=1, tests=tests)
    assert [t.verdict for t in o.tests] == ["confirmed", "refuted"] and o.verdict == "refuted"
    assert o.to_json()["verdict"] == "refuted" and o.to_json()["tests"][1]["k_key"] == 1
    const = RemainderConstant(R=2.0, d_ref=256, samples=10, seed=0, k=4.0)
    from lnrecency.inference.records import EntryCheck

    ok = EntryCheck(i=2, j=1, limit=1.0, c=0.5, check=mean_check(1.0, 0.1, 1.0, k=4.0))
    bad = EntryCheck(i=2, j=2, limit=1.0, c=0.5, check=mean_check(3.0, 0.1, 1.0, k=4.0))
    m = MeanChecks(kind="k", quantity="score", layer=1, d=64, samples=10, seed=0, method="gram",
                   remainder_constant=const,
                   remainder_bound=0.0, per_comparison_rate=1e-6, checks=(ok, bad))
    assert not m.passed and m.to_json()["passed"] is False and math.isclose(m.max_abs_z, 20.0)
    assert m.to_json()["remainder_constant"]["R"] == 2.0 and m.to_json()["checks"][0]["prediction"] == 1.0


def test_claim_result_refuses_untyped_evidence_and_serialises_records():
    group = SettingGroup(per_setting=(PerSetting(setting={"lam": 1.0}, evidence=_Demo(
        a=1, renamed="r", check=ordering_check(2.0, 1.0, k=1.5))),), settings_total=1, settings_here=1)
    r = ClaimResult("C6", "our formulation", "S", {"settings": [{"lam": 1.0}]}, "confirmed", group)
    ev = json.loads(json.dumps(r.to_json(), allow_nan=False))["evidence"]
    assert ev["per_setting"][0]["setting"] == {"lam": 1.0} and ev["per_setting"][0]["a"] == 1  # flattened
    with pytest.raises(TypeError, match="evidence must be an lnrecency.inference.evidence record; got dict"):
        ClaimResult("C6", "our formulation", "S", {}, "confirmed", {"passed": True})


def test_jsonable_plain_values():
    assert jsonable({1: (1, 2.5, float("nan"), None, True, "x")}) == {"1": [1, 2.5, None, None, True, "x"]}


def test_boundary_search_verdict_says_where_it_fails():
    from lnrecency.claims.parameter_free.c2_no_normalisation import FailingRow
    from lnrecency.inference.records import BoundarySearch
    from lnrecency.theory.boundary import LayerBoundary

    holds = LayerBoundary(3, "recency", 50, None)
    fails = LayerBoundary(4, "recency", 50, 27, (0.1, -0.2, 0.3))
    undecided = LayerBoundary(5, "recency", 50, None, undecided_from=170)
    assert BoundarySearch(n_max=50, boundary={"3": holds}).verdict == "confirmed"
    assert BoundarySearch(n_max=50, boundary={"3": holds, "4": fails, "5": undecided}).verdict == "refuted"
    assert BoundarySearch(n_max=50, boundary={"3": holds, "5": undecided}).verdict == "inconclusive"
    row = FailingRow(boundary=fails, weight_on_token_1=0.9, largest_weight_where_order_breaks=1e-6,
                     keys_where_order_breaks=[2])
    search = BoundarySearch(n_max=50, boundary={"4": row})
    assert search.verdict == "refuted" and row.first_failing_n == 27
    assert search.to_json()["boundary"]["4"]["first_failing_n"] == 27
    assert search.to_json()["boundary"]["4"]["weight_on_token_1"] == 0.9
    assert "weight_on_token_1" not in BoundarySearch(n_max=50, boundary={"3": FailingRow(boundary=holds)}).to_json(
        )["boundary"]["3"]
