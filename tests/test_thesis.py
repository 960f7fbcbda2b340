"""The thesis experiment (lnrecency.models.thesis) and its verdicts TM1-TM5 (lnrecency.claims.trained).

* The quick experiment end to end, in a temporary cache: every verdict rests on >= 3 training seeds, each
  verdict agrees with the intervals in its own evidence, the cache makes a second run train nothing, and the
  command's JSON lists the verdicts with their number of training seeds. TM4 (the derived random-W theory at
  initialisation) must be confirmed.
* The verdict rules on synthetic results: each TM verdict is refuted when the numbers say so.
"""
from __future__ import annotations

import json
import time

import pytest

pytest.importorskip("torch")

from lnrecency.claims import trained  # noqa: E402
from lnrecency.claims.registry import CLAIMS  # noqa: E402
from lnrecency.cli import main  # noqa: E402
from lnrecency.models.thesis import ThesisResults, ThesisSettings, is_cached, run_thesis  # noqa: E402


@pytest.fixture(scope="module")
def cache(temp_cache):
    return temp_cache


@pytest.fixture(scope="module")
def quick(cache):
    st = ThesisSettings.preset(True)
    assert not is_cached(st)
    res = run_thesis(st)
    assert is_cached(st)
    return res


def test_quick_experiment_and_cache(quick, cache):
    st = quick.settings
    assert len(quick.runs) == len(st.archs) * len(st.norms) * len(st.seeds) and len(st.seeds) >= 3
    for r in quick.runs:
        assert r["matched"]["step"] <= r["log"][-1]["step"]
        assert r["matched"]["target_loss"] >= r["log"][-1]["heldout_loss"] - 1e-12
    start = time.perf_counter()
    again = run_thesis(st)  # every run from the cache: no training
    assert time.perf_counter() - start < 5.0
    assert json.dumps(again.to_json(), sort_keys=True) == json.dumps(quick.to_json(), sort_keys=True)


def test_cache_key_reads_the_probe_settings():
    from dataclasses import asdict

    from lnrecency.models.thesis_config import probe_fields

    for quick_mode in (True, False):
        st = ThesisSettings.preset(quick_mode)
        assert probe_fields(st) == asdict(st.probing())


def test_verdicts_follow_their_evidence(quick):
    results = trained.evaluate(quick=True)
    assert {r.id for r in results} == set(trained.STATEMENTS)
    for r in results:
        assert r.source == trained.SOURCE and "seeds" in r.setting.scale
        for ps in r.evidence.per_setting:
            ev = ps.evidence
            intervals = [ev.slope] if hasattr(ev, "slope") else []
            for si in intervals:
                assert len(si.values) >= 3 and si.low <= si.mean <= si.high
            if r.id == "TM1":
                assert r.verdict == {"positive": "confirmed", "negative": "refuted",
                                     "includes 0": "inconclusive"}[ev.slope.sign]
    # the init theory is derived, not observed: it must hold in every setting
    assert [r.verdict for r in results if r.id == "TM4"] == ["confirmed"]


def test_experiments_command_json(quick, capsys):
    assert main(["experiments", "thesis", "--quick", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["experiment"] == "thesis" and out["verdicts"]
    assert all(v["training_seeds"] >= 3 for v in out["verdicts"])
    assert {v["id"] for v in out["verdicts"]} == {"TM1", "TM2", "TM3", "TM4", "TM5"}
    assert len(out["runs"]) == 9 and {"init", "matched", "final"} <= set(out["runs"][0]["layers"])


# ------------------------------------------------------------------------------------------------------
# The verdict rules on synthetic results: they can say no
# ------------------------------------------------------------------------------------------------------
def _fake(slopes: dict, matched: dict | None = None, ratio: float = 1.0) -> ThesisResults:
    """Results with layer-2 slopes ``slopes[norm]`` (one per seed) at the final stage (``matched`` at the
    matched stage, default the same), flat layer 1 and init stage."""
    st = ThesisSettings(archs=("attn2",), steps=10)
    runs = []
    for norm, values in slopes.items():
        for seed, v in enumerate(values):
            m = (matched or slopes)[norm][seed]

            def stage(s2, extra=None):
                return {"layers": [{"layer": 1, "slope": 1e-4 * (seed - 1), "phase": "flat", "rp": 0.5},
                                   {"layer": 2, "slope": s2, "phase": "recency" if s2 > 0 else "earlier", "rp": 0.5}],
                        **(extra or {})}
            runs.append({"arch": "attn2", "norm": norm, "seed": seed, "induction_score": 0.1,
                         "log": [{"step": 0, "heldout_loss": 4.1}, {"step": 10, "heldout_loss": 3.0}],
                         "init": stage(1e-4 * (seed - 1), {"second_moment_ratio": [[ratio + 0.01 * (seed - 1)] * 4] * 2}),
                         "final": stage(v), "matched": stage(m, {"step": 10, "target_loss": 3.0})})
    return ThesisResults(st, runs)


def _verdicts(monkeypatch, res, cid):
    monkeypatch.setattr(trained, "_results", lambda quick, progress: (res, ""))
    return {r.verdict for r in CLAIMS[cid].evaluate(quick=True)}


def test_tm1_tm2_refuted_by_the_opposite_sign(monkeypatch):
    res = _fake({"layernorm": [-0.05, -0.06, -0.04], "rmsnorm": [0.05, 0.06, 0.04], "none": [0.05, 0.06, 0.05]})
    assert _verdicts(monkeypatch, res, "TM1") == {"refuted"}
    assert _verdicts(monkeypatch, res, "TM2") == {"refuted"}
    assert _verdicts(monkeypatch, res, "TM3") == {"refuted"}  # opposite signs
    noisy = _fake({"layernorm": [-0.05, 0.06, 0.01], "rmsnorm": [0.05, 0.06, 0.04], "none": [0.0, 0.0, 0.0]})
    assert _verdicts(monkeypatch, noisy, "TM1") == {"inconclusive"}


def test_tm3_refuted_when_the_sizes_differ(monkeypatch):
    res = _fake({"layernorm": [0.05, 0.051, 0.049], "rmsnorm": [0.20, 0.21, 0.19], "none": [0.0, 0.01, -0.01]})
    assert _verdicts(monkeypatch, res, "TM3") == {"refuted"}
    same = _fake({"layernorm": [0.05, 0.06, 0.04], "rmsnorm": [0.05, 0.061, 0.041], "none": [0.0, 0.01, -0.01]})
    assert _verdicts(monkeypatch, same, "TM3") == {"confirmed"}


def test_tm4_refuted_by_a_wrong_second_moment(monkeypatch):
    flat = {"layernorm": [0.05, 0.06, 0.04], "rmsnorm": [0.05, 0.06, 0.04], "none": [0.0, 0.01, -0.01]}
    assert _verdicts(monkeypatch, _fake(flat, ratio=1.0), "TM4") == {"confirmed"}
    assert _verdicts(monkeypatch, _fake(flat, ratio=0.7), "TM4") == {"refuted"}


def test_tm5_refuted_when_the_difference_vanishes_at_matched_loss(monkeypatch):
    final = {"layernorm": [0.10, 0.11, 0.09], "rmsnorm": [0.1, 0.1, 0.1], "none": [0.01, 0.02, 0.0]}
    matched = {"layernorm": [0.01, 0.02, 0.0], "rmsnorm": [0.1, 0.1, 0.1], "none": [0.01, 0.02, 0.0]}
    assert _verdicts(monkeypatch, _fake(final, matched), "TM5") == {"refuted"}
    assert _verdicts(monkeypatch, _fake(final), "TM5") == {"confirmed"}
