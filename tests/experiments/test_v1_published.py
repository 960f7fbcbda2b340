"""Plan v1's published data (issue 67, item 1): docs/thesis_text.json is the output of `lnrecency experiments
thesis-text --json` (its verdicts TT1-TT4 and every run, seed by seed: gate, final loss, final probes, trajectory);
H1-H4 are decided again from those rows alone by the plan's own rule and agree with the published verdicts; changed
rows change them."""
from __future__ import annotations

import copy
import json
from dataclasses import asdict
from pathlib import Path

import pytest

SNAPSHOT = Path(__file__).resolve().parents[2] / "docs" / "thesis_text.json"


@pytest.fixture(scope="module")
def snapshot() -> dict:
    return json.loads(SNAPSHOT.read_text(encoding="utf-8"))


def _runs(snapshot: dict) -> list:
    """The published rows as the records the rule reads (the final probes whole; the trajectory's layer-2 slope)."""
    return [{"arch": s["arch"], "norm": s["norm"], "seed": s["seed"], "unigram": s["unigram_entropy"],
             "log": [{"heldout_loss": s["final_heldout_loss"]}], "final": s["final"],
             "trajectory": [{"tokens": e["tokens"], "heldout_loss": e["heldout_loss"],
                             "text": [{"layer": 2, "slope": e["layer2_text_slope"]}]} for e in s["trajectory"]]}
            for s in snapshot["runs"]]


def test_h1_to_h4_are_recomputed_from_the_published_runs(snapshot):
    from lnrecency.claims.trained.tt1_tt4_thesis_text import decide
    from lnrecency.claims.trained_rules import reproduction_label
    from lnrecency.experiments.studies.thesis_text import TextThesisSettings, learned, plan_sha256

    st = TextThesisSettings.preset(False)
    assert snapshot["settings"] == {**json.loads(json.dumps(asdict(st))), "plan_sha256": plan_sha256()}
    runs = _runs(snapshot)
    assert [learned(r, st) for r in runs] == [s["learned"] for s in snapshot["runs"]]
    decided = decide(runs, st)
    rows = {v["evidence"]["hypothesis"]: v for v in snapshot["verdicts"]}
    assert set(rows) == set(decided) == {"H1", "H2", "H3", "H4"}
    for key, (d, why) in decided.items():
        said = rows[key]
        assert d is not None and reproduction_label(d.verdict) == said["verdict"], key
        stored = said["evidence"]["decision"]
        assert d.test.p_confirm == stored["p_confirm"], key  # same code, same values: same bits
        assert d.test.p_refute == stored["p_refute"], key  # same code, same values: same bits


def test_changed_runs_change_the_verdicts(snapshot):
    from lnrecency.claims.trained.tt1_tt4_thesis_text import decide
    from lnrecency.experiments.studies.thesis_text import TextThesisSettings

    st = TextThesisSettings.preset(False)
    runs = copy.deepcopy(_runs(snapshot))
    for r in runs:
        if r["norm"] == "layernorm":
            for lay in r["final"]["text"]:
                lay["slope"] = -lay["slope"]
    decided = decide(runs, st)
    assert decided["H1"][0].verdict == "refuted" and decided["H2"][0].verdict == "refuted"
