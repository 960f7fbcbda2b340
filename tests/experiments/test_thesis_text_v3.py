"""Plan v3's pipeline end to end on a tiny corpus (issue 67): plan v2's runs trained with their weights kept, the
weights of a run retrained from its record equal to the bit (its final held-out loss the record's), plan v3's probes,
the snapshot with the per-seed table, the path decomposition summing to each slope, the theory per cell, and tests
that decide nothing when no run learned. The real run: `lnrecency experiments thesis-text-v3` (docs/thesis-text-v3.md).
"""
from __future__ import annotations

import shutil

import numpy as np
import pytest

pytest.importorskip("torch")

from lnrecency.experiments.studies import thesis_text_v2 as v2  # noqa: E402
from lnrecency.experiments.studies import thesis_text_v3 as v3  # noqa: E402
from lnrecency.experiments.studies import v2_weights  # noqa: E402


@pytest.fixture(scope="module")
def tiny(trained_cache, tmp_path_factory):
    from lnrecency.experiments.studies.thesis_text import TextThesisSettings

    corpus = tmp_path_factory.mktemp("v3corpus")
    rng = np.random.default_rng(1)
    words = ["alpha", "beta", "gamma", "delta", "key", "value", "def", "return", "self", "print"]
    for q in range(30):
        (corpus / f"f{q:02d}.txt").write_text(" ".join(rng.choice(words, size=600)) + "\n")
    base = TextThesisSettings(primary_seeds=(0,), secondary_seeds=(), archs=("attn2",), steps=24, warmup=4,
                              eval_every=12, eval_sequences=16, probe_windows=8, n=16, corpus=str(corpus))
    st = v3.V3Settings(windows=8, v2=v2.V2Settings(seeds=(0,), base=base))
    runs = v3.run_v3(st, progress=False, workers=1)
    return st, runs, v2.cached_v2(st.v2)


def test_the_pipeline_writes_a_snapshot_whose_paths_sum_to_each_slope(tiny):
    st, runs, v2_runs = tiny
    assert len(runs) == len(st.jobs()) == 6 and not v2_weights.missing(st.v2)  # plan v2 kept every weight
    snap = v3.snapshot(runs, v2_runs, st)
    import json

    json.dumps(snap, allow_nan=False)  # no NaN anywhere (one seed per cell: no spread, said as None)
    assert snap["plan_sha256"] == v3.plan_sha256() and set(snap["tests"]) == {"A1", "B1", "C1", "A0", "C0"}
    for rows in snap["runs"].values():
        for r in rows:
            total = sum(p["slope"] for p in r["paths"].values())
            assert total == pytest.approx(r["slope"], abs=1e-12 * max(1.0, abs(r["slope"])))
    if not any(r["learned"] for rows in snap["runs"].values() for r in rows):  # 24 steps learn nothing
        assert {t["verdict"] for t in snap["tests"].values()} == {"inconclusive"}
        assert all("fewer than" in t["why"] for t in snap["tests"].values())


def test_a_retrained_run_equals_its_record_and_a_mismatch_is_refused(tiny):
    st, _, _ = tiny
    folder = v2_weights.weights_path(st.v2, False, "none", 0)
    shutil.rmtree(folder)
    out = v2_weights.train_weights(False, "none", 0, st.v2)
    assert out["loss"] == out["record_loss"]  # the same training, the same bits
    model = v2_weights.load_model(st.v2, False, "none", 0)
    assert model.cfg.norm == "none"
    import json

    meta = folder / "config.json"
    data = json.loads(meta.read_text())
    data["final_heldout_loss"] = data["final_heldout_loss"] + 0.1  # weights of another run
    meta.write_text(json.dumps(data))
    with pytest.raises(ValueError, match="end at held-out loss"):
        v2_weights.load_model(st.v2, False, "none", 0)
