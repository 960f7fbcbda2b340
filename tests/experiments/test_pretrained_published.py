"""R1's published runs (issue 84, item 5): docs/pretrained.json holds the eight probe runs of the default run (two
models, four conditions, each with its per-window, per-layer slopes), R1 is decided again from them alone by the
experiment's rule to the committed rows, verdict and interval, and its counter-row (the random control) is the same
statistic on the control's runs, recomputed here with independent code; changed rows change the verdict."""
from __future__ import annotations

import copy
import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from lnrecency.claims.trained import r1_pretrained_decoders as r1
from lnrecency.inference.qualifiers import Qualifiers

ROOT = Path(__file__).resolve().parents[2]
SNAPSHOT = json.loads((ROOT / "docs" / "pretrained.json").read_text(encoding="utf-8"))
STORED = [r for r in json.loads((ROOT / "docs" / "verdicts.json").read_text(encoding="utf-8"))["verdicts"]
          if r["id"] == "R1"]


def _mean_interval(window_slopes: list) -> tuple[float, float, float]:
    """Independent of the code under test: each window's mean over layers, then a t interval over the windows."""
    x = np.array([sum(w) / len(w) for w in window_slopes])
    half = stats.t.ppf(0.975, len(x) - 1) * x.std(ddof=1) / math.sqrt(len(x))
    return float(x.mean()), float(x.mean() - half), float(x.mean() + half)


def test_the_published_runs_are_the_default_run_s_eight():
    assert SNAPSHOT["experiment"] == "pretrained" and SNAPSHOT["settings"] == {"n": 256, "windows": 16, "seed": 0}
    assert sorted((r["model"], r["condition"]) for r in SNAPSHOT["runs"]) == sorted(
        (m, c) for m in ("smollm2-135m", "gemma3-270m") for c in ("text/on", "text/off", "random/on", "random/off"))
    for r in SNAPSHOT["runs"]:
        assert len(r["window_slopes"]) == 16 and all(len(w) == len(r["layers"]) for w in r["window_slopes"])


def test_r1_is_decided_again_from_the_published_runs_to_the_committed_rows():
    decided = r1.redecide(SNAPSHOT)
    assert [(v, iv) for _, _, v, iv in decided] == [
        (s["verdict"], (s["qualifiers"]["low"], s["qualifiers"]["high"])) for s in STORED]
    for s in STORED:
        q = Qualifiers.from_json(s["qualifiers"])
        runs = {r["condition"]: r for r in SNAPSHOT["runs"] if s["setting"]["case"].startswith(r["name"])}
        mean, lo, hi = _mean_interval(runs["text/off"]["window_slopes"])
        assert (q.estimate, q.low, q.high) == pytest.approx((mean, lo, hi), rel=1e-12)
        cmean, clo, chi = _mean_interval(runs["random/off"]["window_slopes"])
        assert q.counter.label == "random control"
        assert (q.counter.estimate, q.counter.low, q.counter.high) == pytest.approx((cmean, clo, chi), rel=1e-12)
    assert [s["verdict"] for s in STORED] == ["refuted", "confirmed"]


def test_changed_runs_change_the_verdict():
    """SmolLM2's text windows without positions negated: its row turns confirmed; every window made equal: no
    spread, nothing decided."""
    snap = copy.deepcopy(SNAPSHOT)
    for r in snap["runs"]:
        if r["model"] == "smollm2-135m" and r["condition"] == "text/off":
            r["window_slopes"] = [[-x for x in w] for w in r["window_slopes"]]
    assert [v for _, _, v, _ in r1.redecide(snap)] == ["confirmed", "confirmed"]
    for r in snap["runs"]:
        if r["condition"] == "text/off":
            r["window_slopes"] = [r["window_slopes"][0]] * len(r["window_slopes"])
    assert [(v, iv) for _, _, v, iv in r1.redecide(snap)] == [("inconclusive", None)] * 2


def test_the_answer_reads_positions_on_and_the_control_from_the_published_runs():
    from lnrecency.report.words import answer
    from lnrecency.report.words.findings import findings_of

    found = findings_of(STORED)
    line = answer._pretrained(found, SNAPSHOT)
    assert "every layer shows recency (SmolLM2-135M-Instruct 30 of 30, Gemma 3 270M 18 of 18" in line
    assert "perplexity 13x and 20x" in line and "the same sign" in line
    # one layer of SmolLM2 with positions on made flat: no longer "every layer"
    snap = copy.deepcopy(SNAPSHOT)
    run = next(r for r in snap["runs"] if r["model"] == "smollm2-135m" and r["condition"] == "text/on")
    run["layers"][0]["slope"] = 0.0
    assert "layers showing recency (SmolLM2-135M-Instruct 29 of 30" in answer._pretrained(found, snap)
    assert "the same sign" not in answer._pretrained(
        [f if f.qualifiers.counter is None else _flip(f) for f in found], SNAPSHOT)


def _flip(f):
    from dataclasses import replace

    c = f.qualifiers.counter
    return replace(f, qualifiers=replace(f.qualifiers, counter=replace(c, estimate=-c.estimate, low=-c.high,
                                                                       high=-c.low)))
