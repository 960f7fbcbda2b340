"""The one run cache (lnrecency.experiments.run_cache): entries inside the cache root only, a validated reader that
names the file and the fix, an atomic writer that refuses NaN, the jobs not cached run once; and a damaged cache
reported as damaged by the report's claims (never as "not run", never as a traceback)."""
from __future__ import annotations

import json
import math

import pytest

from lnrecency.experiments import run_cache


@pytest.fixture
def root(tmp_path, monkeypatch):
    monkeypatch.setenv("LNRECENCY_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_entries_stay_inside_the_cache_root(root):
    assert run_cache.entry("runs", "abc.json") == root / "runs" / "abc.json"
    for kind, name in (("elsewhere", "a.json"), ("runs", "../a.json"), ("runs", "a/b.json"), ("runs", ".."),
                       ("runs", ""), ("runs", ".hidden")):
        with pytest.raises(ValueError, match="cache"):
            run_cache.entry(kind, name)


def test_keys_are_stable_and_differ_with_their_parts():
    assert run_cache.key("v1", {"a": 1, "b": [1, 2]}) == run_cache.key("v1", {"b": [1, 2], "a": 1})
    assert run_cache.key("v1", {"a": 1}) != run_cache.key("v2", {"a": 1})
    assert len(run_cache.key()) == 16


def test_written_entries_read_back_and_nan_is_never_cached(root):
    path = run_cache.entry("runs", "x.json")
    assert run_cache.read(path) is None  # not there: not run
    run_cache.write(path, {"seed": 1, "log": [1.5]})
    assert run_cache.read(path, ("seed", "log")) == {"seed": 1, "log": [1.5]}
    with pytest.raises(ValueError):
        run_cache.write(run_cache.entry("runs", "y.json"), {"seed": math.nan})
    assert run_cache.read(run_cache.entry("runs", "y.json")) is None


@pytest.mark.parametrize("text, why", [("{not json", "JSON"), ('{"seed": NaN, "log": []}', "NaN is not a finite"),
                                       ("[1, 2]", "JSON object"), ('{"seed": 1}', "lacks")])
def test_a_damaged_entry_names_its_file_and_the_fix(root, text, why):
    path = run_cache.entry("runs", "bad.json")
    path.parent.mkdir(parents=True)
    path.write_text(text)
    with pytest.raises(run_cache.DamagedCache, match=why) as exc:
        run_cache.read(path, ("seed", "log"))
    assert "bad.json" in str(exc.value) and "delete it" in str(exc.value)


def _double(x):
    return {"x": x, "y": 2 * x}


def test_cached_jobs_run_what_is_missing_once(root):
    path_of = lambda job: run_cache.entry("runs", f"job-{job}.json")  # noqa: E731
    calls = []

    def fn(x):
        calls.append(x)
        return _double(x)
    first = run_cache.cached_jobs(fn, [1, 2, 3], path_of, args_of=lambda j: (j,), workers=1)
    assert first == [_double(x) for x in (1, 2, 3)] and calls == [1, 2, 3]
    again = run_cache.cached_jobs(fn, [3, 1, 4], path_of, args_of=lambda j: (j,), workers=1)
    assert again == [_double(x) for x in (3, 1, 4)] and calls == [1, 2, 3, 4]  # only the new job ran
    assert json.loads(path_of(4).read_text()) == _double(4)


def test_a_damaged_cache_is_reported_as_damaged(root):
    """R1's cache planted damaged: the report's claim list includes R1, its rows say damaged with the file and the
    fix, and the headline names it; with no file at all the claim is simply not run (its legitimate neighbour)."""
    pytest.importorskip("torch")
    from lnrecency.claims import registry
    from lnrecency.experiments.studies.pretrained import PretrainedSettings
    from lnrecency.inference.evidence import Damaged
    from lnrecency.report.headline import headline_markdown

    assert registry.available("R1", quick=True) is False  # nothing cached: not run
    path = run_cache.entry("pretrained", f"pretrained-{PretrainedSettings.preset(True).key()}.json")
    path.parent.mkdir(parents=True)
    path.write_text('{"settings": {}, "models": ')
    assert registry.available("R1", quick=True) is True
    rows = registry.evaluate(["R1"], quick=True, progress=False)
    assert rows and all(isinstance(r.evidence, Damaged) and r.not_run for r in rows)
    assert all(str(path) in r.finding and "delete it" in r.finding for r in rows)
    text = headline_markdown(rows, {}, quick=True)
    assert "**Damaged caches, not counted:** R1:" in text and str(path) in text
