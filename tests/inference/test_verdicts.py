"""lnrecency.inference.verdicts.select (results by claim id, statement and setting) and the claims' declarations behind
the registry, the report lists and the notebooks."""
from __future__ import annotations

import pytest

from lnrecency.inference.evidence import SettingGroup
from lnrecency.inference.verdicts import ClaimResult, select

NONE = SettingGroup(per_setting=(), settings_total=0, settings_here=0)
A = ClaimResult("C6", "our formulation", "S", {"norm": "layernorm", "settings": [
    {"residual": True, "lam": 1.0}, {"residual": False, "lam": 1.0}]}, "refuted", NONE)
B = ClaimResult("C6", "our formulation", "T", {"settings": [{"residual": True, "lam": 8.0}]}, "confirmed", NONE)


def test_select_by_id_statement_verdict_and_setting():
    assert [st for _, st in select([A, B], "C6", residual=True)] == [
        {"norm": "layernorm", "residual": True, "lam": 1.0}, {"residual": True, "lam": 8.0}]
    assert [r.statement for r, _ in select([A, B], "C6", statement="T")] == ["T"]
    assert select([A, B], "C6", verdict="refuted", lam=8.0) == []
    assert select([A, B], "C5") == []
    assert len(select([A, B], "C6", norm="layernorm")) == 2  # base setting keys match too


def test_registry_report_and_notebooks_derive_from_the_claims_declarations():
    from lnrecency.claims.registry import CATALOG, CLAIMS, MODULES
    from lnrecency.report import figure_list as figures
    from lnrecency.report import table_list as claim_tables
    from lnrecency.report.views.registry import VIEW_LIST

    assert list(CLAIMS) == [c.id for c in CATALOG] and all(c.evaluate is not None for c in CATALOG)
    assert {c.module for c in CATALOG} == {f"lnrecency.claims.{m}" for m in MODULES}
    own = [t.stem for t in claim_tables.REPORT_TABLES]
    assert [t.stem for t in claim_tables.TABLES] == own + [t.stem for v in VIEW_LIST for t in v.tables]
    assert figures.FIGURES == [f for v in VIEW_LIST for f in v.figures]
    stems = [t.stem for t in claim_tables.TABLES]
    assert len(stems) == len(set(stems))  # one owner per output
    # each claim's builders live in its view module (or in the views' shared helpers), on the report floor
    for v in VIEW_LIST:
        for out in (*v.tables, *v.figures):
            assert out.build.__module__.startswith("lnrecency.report.views."), (v.id, out.build)


def test_registry_refuses_unknown_id():
    from lnrecency.claims.registry import CLAIMS, check_ids

    assert CLAIMS["C6"].module == "lnrecency.claims.parameter_free.c6_deeper_layers"
    with pytest.raises(ValueError, match="X42"):  # a placeholder ID: no real claim can take it
        check_ids(["X42"])


def test_parallel_evaluation_is_the_same_as_serial():
    """evaluate(jobs=2): the same results (JSON bytes) and the same false-alarm registrations as jobs=1."""
    import json

    from lnrecency.claims.registry import evaluate
    from lnrecency.inference.stats import BUDGET

    ids = ["C7", "C8", "P8"]
    suite = BUDGET.snapshot()  # the session's registrations are restored after
    try:
        BUDGET.clear()
        serial = [json.dumps(r.to_json(), sort_keys=True) for r in evaluate(ids, quick=True, progress=False)]
        registered = BUDGET.snapshot()
        BUDGET.clear()
        parallel = [json.dumps(r.to_json(), sort_keys=True)
                    for r in evaluate(ids, quick=True, progress=False, jobs=2)]
        # the same entries and the same families (a worker's family is still one decision here)
        assert parallel == serial and BUDGET.snapshot() == registered and registered[0] and registered[1]
    finally:
        BUDGET.merge(suite)


def test_settings_are_typed_records():
    """A verdict's setting is a frozen Setting read by attribute; a mapping is converted, a key that is not
    a field is refused, and the JSON lists the fields that are set (cases under "settings")."""
    import dataclasses

    from lnrecency.inference.verdicts import ClaimResult, Setting

    r = ClaimResult("C5", "seed text", "s", {"norm": "layernorm", "settings": [{"lam": 1.0}, {"lam": 8.0, "n": 9}]},
                    "refuted", NONE)
    assert isinstance(r.setting, Setting) and r.setting.norm == "layernorm" and r.setting.residual is None
    assert [c.lam for c in r.setting.settings] == [1.0, 8.0] and r.setting.settings[1].n == 9
    assert r.to_json()["setting"] == {"norm": "layernorm", "settings": [{"lam": 1.0}, {"lam": 8.0, "n": 9}]}
    assert r.setting.cases() == [{"norm": "layernorm", "lam": 1.0}, {"norm": "layernorm", "lam": 8.0, "n": 9}]
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.setting.norm = "l2"
    with pytest.raises(ValueError, match="unknown keys \\['lamda'\\]"):
        ClaimResult("C5", "seed text", "s", {"lamda": 1.0}, "refuted", NONE)
    with pytest.raises(TypeError, match="Setting or a mapping"):
        Setting.of([("lam", 1.0)])


def test_the_verdict_ladder_is_written_once_and_says_each_word():
    """issue 66: one ladder (lnrecency.inference.evidence.ladder); no claim module writes its own."""
    import re
    from pathlib import Path

    from lnrecency.inference.evidence import ladder

    assert [ladder(True), ladder(False), ladder(False, opposite=False), ladder(True, opposite=True)] == [
        "confirmed", "refuted", "inconclusive", "confirmed"]
    root = Path(__file__).resolve().parents[2] / "lnrecency" / "claims"
    inline = [str(p.relative_to(root)) for p in root.rglob("*.py")
              if re.search(r'"confirmed" if .+ else', p.read_text(encoding="utf-8"))]
    assert inline == []
