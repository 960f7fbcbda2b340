"""Wu et al.'s experiment's published data (issue 67, item 1): the snapshot docs/wu_icl.json holds every run's
per-seed row, and the plan's two families are decided again from those rows alone, by the plan's own rule
(:func:`lnrecency.experiments.studies.wu_icl.decide`, which reads only the published fields), to the snapshot's
verdicts and p-values; changed rows change the verdicts (the machinery can say no)."""
from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from lnrecency.experiments.studies import wu_icl

SNAPSHOT = Path(__file__).resolve().parents[2] / "docs" / "wu_icl.json"


@pytest.fixture(scope="module")
def snapshot() -> dict:
    return json.loads(SNAPSHOT.read_text(encoding="utf-8"))


def test_both_families_are_recomputed_from_the_published_seeds(snapshot):
    from lnrecency.claims.trained.w2_w4_wu_icl import label

    st = wu_icl.WuSettings()
    assert snapshot["plan_sha256"] == wu_icl.plan_sha256() and not snapshot["quick"]
    assert len(snapshot["runs"]) == len(st.arms) * len(st.norms) * len(st.seeds)
    assert all(r["learned"] == (r["final"]["plain"] >= wu_icl.GATE) for r in snapshot["runs"])
    decided = wu_icl.decide(snapshot["runs"], st)
    assert list(decided) == list(snapshot["tests"])
    for key, (d, why) in decided.items():
        said = snapshot["tests"][key]
        assert label(key, d, False) == said["verdict"] and why == said["why"], key
        if d is None:
            assert "p_confirm" not in said
            continue
        assert list(d.test.values) == said["values"], key
        assert d.test.p_confirm == said["p_confirm"], key  # same code, same values: same bits
        assert d.test.p_refute == said["p_refute"], key  # same code, same values: same bits


def test_changed_rows_change_the_verdicts(snapshot):
    """Every depth-2 run's gaps negated: R1 and R2 (theirs, reproduced on the published rows) become "the opposite
    shown"; every run below the gate: nothing is decided, each test says why."""
    from lnrecency.claims.trained.w2_w4_wu_icl import label

    st = wu_icl.WuSettings()
    rows = copy.deepcopy(snapshot["runs"])
    for r in rows:
        if r["arm"] == "depth 2" and r["norm"] == "none":
            r["final"]["gaps"] = {k: -v for k, v in r["final"]["gaps"].items()}
    decided = wu_icl.decide(rows, st)
    assert [label(k, decided[k][0], False) for k in ("R1", "R2")] == ["the opposite shown"] * 2
    for r in rows:
        r["final"]["plain"] = 0.0
    decided = wu_icl.decide(rows, st)
    assert all(d is None and "gate" in why for d, why in decided.values())


def test_the_pilots_numbers_on_the_page_are_the_published_ones():
    """Issue 67, item 5: docs/wu-icl.md quotes the pilot of the depth-6 arm; every number it quotes is the pilot's."""
    import json
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    pilot = json.loads((root / "docs" / "wu_icl_pilot.json").read_text(encoding="utf-8"))
    page = " ".join((root / "docs" / "wu-icl.md").read_text(encoding="utf-8").split())  # as read, not as wrapped
    at = {t["step"]: t for t in pilot["trajectory"]}
    for step in (2000, 4000, 8000, 12000):
        assert f"{at[step]['plain_accuracy']:.3f}" in page, step
    for step in (2000, 12000):
        assert f"{at[step]['gaps']['first-last']:+.3f}" in page, step
    assert f"{pilot['seconds']:.0f} s on one core" in page
    assert max(t["plain_accuracy"] for t in pilot["trajectory"]) < pilot["gate"]  # it did not pass the gate
    assert f"about {pilot['seconds'] / pilot['settings']['steps']:.2f} s a step" in page


def test_the_longer_pilot_on_the_page_is_the_published_one():
    """Issue 67, item 5: the second pilot (24,000 steps) repeats the first one's evaluations where they overlap, stays
    below the gate, and every number the page quotes from it is the file's."""
    import json
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    pilot = json.loads((root / "docs" / "wu_icl_pilot.json").read_text(encoding="utf-8"))
    longer = pilot["longer"]
    page = " ".join((root / "docs" / "wu-icl.md").read_text(encoding="utf-8").split())  # as read, not as wrapped
    first = {t["step"]: t for t in pilot["trajectory"]}
    overlap = [t for t in longer["trajectory"] if t["step"] in first]
    assert len(overlap) == len(first) and all(first[t["step"]] == t for t in overlap) and longer["repeats_the_pilot"]
    at = {t["step"]: t for t in longer["trajectory"]}
    assert max(at) == longer["steps"] == 24000
    assert max(t["plain_accuracy"] for t in longer["trajectory"]) < pilot["gate"]
    for step in (20000, 24000):
        assert f"{at[step]['plain_accuracy']:.3f} at {step:,}" in page, step
    assert f"gap {at[24000]['gaps']['first-last']:+.3f}" in page
    assert f"{longer['seconds']:.0f} s on one core" in page
    assert f"about {longer['seconds'] / longer['steps']:.2f} s a step" in page
    hours = 15 * longer["seconds"] / 2 / 3600  # the 15 depth-6 models of 24,000 steps on 2 cores
    assert f"take about {hours:.1f} hours on 2 cores" in page
    rate = (at[24000]["plain_accuracy"] - at[12000]["plain_accuracy"]) / 12000
    assert f"about {rate * 1000:.3f} per 1,000 steps" in page
    assert f"about {round((pilot['gate'] - at[24000]['plain_accuracy']) / rate, -4):,.0f} steps further" in page
