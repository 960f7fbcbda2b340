"""Robustness round 6 (issue 69), the caches: a cache entry or folder that is a link is refused by the one reader of the
run cache (wu-icl included); a damaged pretrained-model entry is refused by name, never a traceback. Each planted case
beside a neighbour that must keep working."""
from __future__ import annotations

import copy
import json
from dataclasses import asdict

import pytest

from lnrecency.experiments import run_cache


@pytest.fixture
def root(tmp_path, monkeypatch):
    monkeypatch.setenv("LNRECENCY_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


@pytest.mark.parametrize("kind", run_cache.KINDS)
def test_an_entry_that_links_outside_the_cache_is_refused_for_every_kind(root, tmp_path, kind):
    outside = tmp_path / "outside.json"
    outside.write_text(json.dumps({"seed": 1}))
    (root / kind).mkdir(parents=True)
    (root / kind / "a.json").symlink_to(outside)
    with pytest.raises(run_cache.DamagedCache, match="cache file .*a.json.* is a symbolic link"):
        run_cache.read(run_cache.entry(kind, "a.json"))
    # the neighbour: the same record as a plain file is read
    (root / kind / "b.json").write_text(outside.read_text())
    assert run_cache.read(run_cache.entry(kind, "b.json")) == {"seed": 1}


def test_a_kind_folder_that_is_a_link_is_refused_when_read(root, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "x.json").write_text(json.dumps({"seed": 1}))
    root.mkdir()
    (root / "wu-icl").symlink_to(elsewhere)
    with pytest.raises(run_cache.DamagedCache, match="cache folder .*wu-icl.* is a symbolic link"):
        run_cache.read(run_cache.entry("wu-icl", "x.json"))
    # an entry not there behind the link is refused too (never silently "not run")
    with pytest.raises(run_cache.DamagedCache, match="symbolic link"):
        run_cache.read(run_cache.entry("wu-icl", "missing.json"))


def test_wu_icl_reads_its_runs_through_the_checked_reader(root, tmp_path):
    from lnrecency.experiments.studies import wu_icl

    st = wu_icl.WuSettings()
    job = st.jobs()[0]
    path = wu_icl.RUNS.path(st, job)
    path.parent.mkdir(parents=True)
    outside = tmp_path / "planted.json"
    outside.write_text("{}")
    path.symlink_to(outside)
    with pytest.raises(run_cache.DamagedCache, match="symbolic link"):
        wu_icl.cached_wu(st)
    path.unlink()
    assert wu_icl.cached_wu(st) is None  # the neighbour: nothing cached reads as not run


def test_a_link_as_the_cache_root_is_the_users_choice(tmp_path, monkeypatch):
    real = tmp_path / "real"
    (real / "seeds").mkdir(parents=True)
    (real / "seeds" / "a.json").write_text(json.dumps({"x": 1}))
    (tmp_path / "link").symlink_to(real)
    monkeypatch.setenv("LNRECENCY_CACHE", str(tmp_path / "link"))
    assert run_cache.read(run_cache.entry("seeds", "a.json")) == {"x": 1}


# -- the pretrained-model cache: damaged fields refused by name ------------------------------------------------

def _pretrained_record():
    from lnrecency.experiments.studies.pretrained import CONDITIONS, PretrainedSettings

    st = PretrainedSettings()

    def run(off):
        return {"model": {"perplexity": {"on": 12.5, "off": 40.0, "windows": 4} if off else {"on": 12.5, "windows": 4}},
                "gu_sink": 0.25,
                "layers": [{"layer": q, "slope": 0.01 * q, "slope_se": 0.002, "sink": 0.3, "rp": 0.6, "rp_se": 0.01,
                            "sink_se": 0.01, "phase": "x", "rollout_first": 0.5, "rollout_last": 0.1,
                            "rollout_residual_first": 0.4} for q in (1, 2)],
                "window_slopes": [[0.01, 0.02], [0.012, 0.018], [0.009, 0.021], [0.011, 0.019]]}

    return st, {"settings": asdict(st),
                "models": {"smollm2-135m": {"name": "SmolLM2", "sha256": "a" * 64,
                                            "runs": {f"{t}/{'off' if o else 'on'}": run(o) for t, o in CONDITIONS}}}}


def _damage(rec, where, value):
    out = copy.deepcopy(rec)
    node = out["models"]["smollm2-135m"]
    for k in where[:-1]:
        node = node[k]
    if value is KeyError:
        del node[where[-1]]
    else:
        node[where[-1]] = value
    return out


@pytest.mark.parametrize("where,value", [
    (("runs", "text/off", "window_slopes"), None),
    (("runs", "text/off", "window_slopes"), [[0.1], [0.2], [0.3]]),
    (("runs", "text/off", "layers"), []),
    (("runs", "text/off", "layers", 0, "slope"), "0.1"),
    (("runs", "text/off", "layers", 0, "slope_se"), None),
    (("runs", "random/on"), KeyError),
    (("runs", "text/off", "model"), KeyError),
    (("runs", "text/off", "model", "perplexity", "off"), "big"),
    (("runs", "text/on", "gu_sink"), [1]),
])
def test_a_damaged_pretrained_entry_is_refused_by_name(root, where, value):
    from lnrecency.experiments.studies.pretrained import _cache_path, cached

    st, rec = _pretrained_record()
    path = _cache_path(st)
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(rec))
    got = cached(st)
    assert got["models"]["smollm2-135m"]["sha256"] == "a" * 64  # the neighbour: the intact record is read
    path.write_text(json.dumps(_damage(rec, where, value)))
    with pytest.raises(run_cache.DamagedCache, match="pretrained-model cache .*delete it"):
        cached(st)


def test_an_intact_pretrained_record_decides(root):
    from lnrecency.claims.trained.r1_pretrained_decoders import decide

    _, rec = _pretrained_record()
    (verdict, stat, _), = decide(rec).values()
    assert stat["mean"] > 0 and verdict in ("reproduced", "inconclusive")


# -- the premise (corpus) cache: a wrongly typed field refused by name -------------------------------------------

def _summary(events=10):
    return {"events": events, "next_is_c": 6, "next_is_b": 3, "frac_c": 0.6, "frac_b": 0.3, "d": 0.3, "d_se": 0.1,
            "d_interval": [0.1, 0.5], "files": 2}


@pytest.mark.parametrize("field,value", [("events", "10"), ("d_se", "0.1"), ("d_interval", [0.1]),
                                         ("d", [0.3]), ("files", None)])
def test_a_wrongly_typed_premise_field_is_refused_by_name(root, tmp_path, field, value):
    from lnrecency.experiments.text.corpus import cached_counts, premise_cache_path, premise_decision

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "a.txt").write_text("the cat sat on the mat. " * 20)
    decisive = "both earlier [A] within 16 tokens (d1 <= 16; decisive)"
    rec = {"corpus": str(corpus), "files": 1, "tokens": 100, "vocab": 512, "key": "k", "definition": "x",
           "subsets": {"all": _summary(), decisive: _summary()}, "bins": [{"d2": "1-2", "d1": "1-2", **_summary()}]}
    path = premise_cache_path(corpus)
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(rec))
    got = cached_counts(corpus, compute=False)  # the neighbour: the intact record is read and decides
    assert premise_decision(got)[0] in ("reproduced", "inconclusive", "the opposite shown")
    bad = copy.deepcopy(rec)
    bad["subsets"][decisive][field] = value
    path.write_text(json.dumps(bad))
    with pytest.raises(run_cache.DamagedCache, match=f"premise cache .*{field}.*delete it"):
        cached_counts(corpus, compute=False)
