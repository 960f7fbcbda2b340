"""The evidence store (lnrecency.files.store) and the report rendered from it: `lnrecency verify --out DIR` writes
the evidence of every verdict and every number the report reads; `lnrecency report --from DIR` renders
the same report from it alone (byte for byte the report built directly), computes nothing, and refuses
a folder that holds anything but our records."""
from __future__ import annotations

import json
from fractions import Fraction

import numpy as np
import pytest

from lnrecency.cli.app import main
from lnrecency.files.store import FORMAT, StoreError, dumps, loads
from lnrecency.model.config import ModelConfig
from lnrecency.report.data import ReportData
from lnrecency.report.figure_list import PURE_UNITS, drawing_units
from lnrecency.report.settings import ReportSettings


def _roundtrip(tmp_path, obj):
    text, blob = dumps(obj)
    (tmp_path / "evidence.json").write_text(text)
    (tmp_path / "arrays.npz").write_bytes(blob)
    return loads(tmp_path)


def test_records_round_trip(tmp_path):
    from lnrecency.numerics import simulate_scores

    sim = simulate_scores(4, 2, 16, 50, seed=1, method="gram", progress=False)
    obj = {("k", ModelConfig(lam=2.0), 3): [sim, Fraction(1, 3), float("-inf"), (1, "a", None, True)]}
    back = _roundtrip(tmp_path, obj)
    (key, value), = back.items()
    assert key == ("k", ModelConfig(lam=2.0), 3)
    s2, frac, inf, tup = value
    assert np.array_equal(s2.mean, sim.mean, equal_nan=True) and s2.config == sim.config and s2.seed == sim.seed
    assert frac == Fraction(1, 3) and inf == float("-inf") and tup == (1, "a", None, True)
    # a NaN scalar is written (the store encodes what it is given) but refused when read: nothing is decided
    # or rendered from it
    (tmp_path / "nan").mkdir()
    with pytest.raises(StoreError, match="non-finite number 'nan'"):
        _roundtrip(tmp_path / "nan", [1.0, float("nan")])


@pytest.mark.parametrize("record", ["os:system", "builtins:eval", "lnrecency.model.config:check_int",
                                    "lnrecency.model.config:ModelConfig.__init__", "numpy:ndarray",
                                    "lnrecency.experiments.sweep:matplotlib.font_manager.FontEntry",
                                    "lnrecency.files.store:dataclasses.dataclass",
                                    "lnrecency.model.config:_FROM_LAYERS"])
def test_a_folder_cannot_name_anything_but_our_records(tmp_path, record):
    (tmp_path / "evidence.json").write_text(json.dumps(
        {"format": FORMAT, "data": {"__record__": record, "fields": {}}}))
    np.savez(tmp_path / "arrays.npz")
    with pytest.raises(StoreError):
        loads(tmp_path)


def test_pickled_arrays_are_refused(tmp_path):
    (tmp_path / "evidence.json").write_text(json.dumps({"format": FORMAT, "data": {"__array__": 0}}))
    np.savez(tmp_path / "arrays.npz", np.array([object()], dtype=object))
    with pytest.raises(StoreError):
        loads(tmp_path)


def test_not_a_store(tmp_path):
    with pytest.raises(StoreError, match="no readable evidence"):
        loads(tmp_path)
    (tmp_path / "evidence.json").write_text(json.dumps({"format": "other", "data": None}))
    np.savez(tmp_path / "arrays.npz")
    with pytest.raises(StoreError, match="format"):
        loads(tmp_path)
    assert main(["report", "--from", str(tmp_path), "--out", str(tmp_path / "r")]) == 2


@pytest.fixture
def evidence(quick_evidence_session):
    """The session's quick evidence store (conftest.py: written once, with an empty experiment cache; the direct
    report below uses one too: what this machine has trained or counted is not part of the comparison)."""
    return quick_evidence_session


@pytest.mark.slow
def test_report_from_evidence_equals_the_direct_report(evidence, quick_report_session, tmp_path, monkeypatch):
    """Rendered from the store with every computing entry point disabled: the same files, byte for byte,
    as the quick report built directly (same seed: the session's, conftest.py, which is what `lnrecency report
    --quick` builds). Trained-model experiments and corpus counts are not part of the stored evidence (their
    sections say "not run" from a store), so both are built with an empty experiment cache, whatever this machine
    has cached."""
    monkeypatch.setenv("LNRECENCY_CACHE", str(tmp_path / "empty-cache"))
    import lnrecency.claims.registry as registry
    import lnrecency.numerics as numerics
    import lnrecency.report.data as data_mod
    import lnrecency.theory.limit as limit
    from lnrecency.report.views.shared import LN

    direct, _ = quick_report_session

    def forbidden(*a, **k):
        raise AssertionError("report --from computed something")

    for mod, name in ((registry, "evaluate"), (numerics, "simulate_scores"), (limit, "limit_trajectory")):
        monkeypatch.setattr(mod, name, forbidden)
    # every computing function the report's data object calls, under the names it calls them by
    computing = ("evaluate_claims", "simulate_scores", "limit_trajectory", "convergence_in_d", "finite_width",
                 "run_panels", "sweep", "bias_profile", "evaluate_closed_form")
    for name in computing:
        monkeypatch.setattr(data_mod, name, forbidden)
    fresh = ReportData(ReportSettings.make(quick=True))  # the patches bite: a data object that computes fails
    for ask in (lambda: fresh.limit(LN), lambda: fresh.sim(LN, 64), lambda: fresh.verdicts(["C7"]),
                lambda: fresh.closed_form("h", LN, 1, 2)):
        with pytest.raises(AssertionError, match="computed"):
            ask()
    rendered = tmp_path / "rendered"
    assert main(["report", "--from", str(evidence), "--out", str(rendered)]) == 0
    files = sorted(p.name for p in direct.iterdir())
    assert files == sorted(p.name for p in rendered.iterdir())
    differ = [n for n in files if (direct / n).read_bytes() != (rendered / n).read_bytes()]
    assert differ == [], differ
    # again on the same cache root: every figure copied from the figure cache (lnrecency.files.figure_cache), the
    # same bytes; the cache holds one entry per parameter-free drawing unit
    entries = list((tmp_path / "empty-cache" / "figures").glob("*/*"))
    assert len(entries) == sum(PURE_UNITS) < len(drawing_units())
    again = tmp_path / "again"
    assert main(["report", "--from", str(evidence), "--out", str(again)]) == 0
    assert [n for n in files if (direct / n).read_bytes() != (again / n).read_bytes()] == []
    # no wall-clock bound: a recompute is caught by the patches above, whatever the machine's load (this test's
    # render at load 7-17 takes several times its 20 s; its time is benchmarks/bench_report.py's to measure)


def test_report_evidence_out_writes_what_verify_out_writes(tmp_path, monkeypatch, capsys):
    """`report --evidence-out E` (the session's evidence, written beside its quick report) and `verify --out E`
    write the same three files, byte for byte, on a reduced report: two claims, their tables and the verdict
    table, two figures (the two writers differ only in who draws the figures, not in what they store)."""
    import lnrecency.report.build as build
    from lnrecency.report import figure_list as figures
    from lnrecency.report import table_list as claim_tables

    monkeypatch.setenv("LNRECENCY_CACHE", str(tmp_path / "empty-cache"))
    monkeypatch.setattr(build, "CLAIMS", {cid: build.CLAIMS[cid] for cid in ("C7", "P7")})
    monkeypatch.setattr(claim_tables, "TABLES", [t for t in claim_tables.TABLES
                                                 if t.stem in ("verdicts", "verdict_means", "c7_output_norm")])
    monkeypatch.setattr(figures, "FIGURES", [f for f in figures.FIGURES if f.stems in (("h_of_j",), ("gap_vs_alpha",))])
    assert main(["verify", "--quick", "--out", str(tmp_path / "verify")]) == 0
    assert main(["report", "--quick", "--out", str(tmp_path / "report"), "--evidence-out",
                 str(tmp_path / "kept")]) == 0
    assert f"wrote its evidence to {tmp_path / 'kept'}" in capsys.readouterr().out
    for name in ("evidence.json", "arrays.npz", "verdicts.json"):
        assert (tmp_path / "verify" / name).read_bytes() == (tmp_path / "kept" / name).read_bytes(), name
    assert {r["id"] for r in json.loads((tmp_path / "kept" / "verdicts.json").read_text())} == {"C7", "P7"}
    assert (tmp_path / "report" / "h_of_j.png").is_file() and (tmp_path / "report" / "c7_output_norm.md").is_file()
    # the same machinery tells a different computation apart: another seed's evidence is not these bytes
    assert main(["report", "--quick", "--seed", "1", "--format", "json", "--out", str(tmp_path / "r1"),
                 "--evidence-out", str(tmp_path / "seed1")]) == 0
    assert (tmp_path / "seed1" / "arrays.npz").read_bytes() != (tmp_path / "kept" / "arrays.npz").read_bytes()


@pytest.mark.parametrize("extra, message", [
    (["--from", "EV"], "--from renders stored evidence and computes none; drop --evidence-out"),
    (["--evidence-out-is-out"], "is the report's --out; the evidence needs a folder of its own"),
    (["--evidence-user-file"], "--evidence-out: "),
])
def test_evidence_out_refusals_name_the_flag(tmp_path, capsys, extra, message):
    out, kept = tmp_path / "r", tmp_path / "kept"
    argv = ["report", "--quick", "--out", str(out), "--evidence-out", str(kept)]
    if extra == ["--from", "EV"]:
        argv = ["report", "--from", str(tmp_path / "ev"), "--out", str(out), "--evidence-out", str(kept)]
    elif extra == ["--evidence-out-is-out"]:
        argv[-1] = str(out)
    else:  # a file of the user's under one of the evidence's names is kept, and the run refused before any work
        kept.mkdir()
        (kept / "evidence.json").write_text("mine")
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err, err
    assert not out.exists()


def test_verdicts_json_is_the_stored_evidence(evidence):
    data = json.loads((evidence / "verdicts.json").read_text())
    stored = loads(evidence)
    assert [r["id"] for r in data] == [r.id for r in stored.verdicts]
    assert [r["verdict"] for r in data] == [r.verdict for r in stored.verdicts]
