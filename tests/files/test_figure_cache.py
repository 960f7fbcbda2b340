"""The figure cache (lnrecency.files.figure_cache, used by lnrecency.report.figure_list.Drawing): a unit whose inputs
were drawn before is copied, byte for byte, without drawing; anything else (other inputs, other code, a tampered or
linked entry, a unit that read a cached experiment or is not parameter-free) is drawn."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from lnrecency.files.figure_cache import FigureCache, code_fingerprint, unit_key
from lnrecency.files.figure_record import ReportFigure
from lnrecency.report.figure_list import Drawing


def _figure(name: str = "tiny") -> ReportFigure:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(2, 1.5))
    ax = fig.subplots()
    ax.plot([1, 2, 3], [3, 1, 2])
    ax.set_title("a tiny figure", fontsize=9)
    return ReportFigure(name, "Tiny", "A caption.", fig)


class Builder:
    """A drawing unit that counts its calls."""

    def __init__(self):
        self.calls = 0

    def __call__(self, data):
        self.calls += 1
        return [_figure()]


def _drawing(tmp_path: Path, builder, inputs: str = "settings A", pure: bool = True, names=None):
    return Drawing([("tiny unit", builder)], cache=FigureCache(tmp_path / "cache"), inputs=inputs, pure=(pure,),
                   names=names)


def _out(tmp_path: Path, name: str) -> Path:
    out = tmp_path / name
    out.mkdir()
    return out


def _entry(tmp_path: Path) -> Path:
    (entry,) = [p for p in (tmp_path / "cache" / "figures").glob("*/*") if not p.name.startswith(".")]
    return entry


def test_a_unit_drawn_once_is_copied_byte_for_byte(tmp_path):
    builder = Builder()
    first = _drawing(tmp_path, builder).draw(0, None, _out(tmp_path, "a"))
    again = _drawing(tmp_path, builder).draw(0, None, _out(tmp_path, "b"))
    assert builder.calls == 1  # the second came from the cache
    assert [(f.name, f.title, f.caption, f.tight) for f, _ in again] == [(f.name, f.title, f.caption, f.tight)
                                                                        for f, _ in first]
    assert [p.name for p in again[0][1]] == ["tiny.png", "tiny.pdf"]
    assert [p.read_bytes() for p in again[0][1]] == [p.read_bytes() for p in first[0][1]]


@pytest.mark.parametrize("change", ["inputs", "not pure", "names"])
def test_other_inputs_an_impure_unit_or_another_units_names_are_drawn(tmp_path, change):
    builder = Builder()
    _drawing(tmp_path, builder).draw(0, None, _out(tmp_path, "a"))
    if change == "inputs":  # the verifier can say no: another key
        assert unit_key("0:tiny unit", "settings A") != unit_key("0:tiny unit", "settings B")
        drawing = _drawing(tmp_path, builder, inputs="settings B")
    elif change == "not pure":  # a figure of a cached experiment (or saying which runs exist): never cached
        drawing = _drawing(tmp_path, builder, pure=False)
    else:  # an entry whose figure the report does not draw under that name
        drawing = _drawing(tmp_path, builder, names=frozenset({"another"}))
    drawing.draw(0, None, _out(tmp_path, "b"))
    assert builder.calls == 2


def test_code_edited_since_import_is_never_cached(tmp_path, monkeypatch):
    """Files changed since this process imported them: the code that would draw is not the code on disk."""
    import lnrecency.files.figure_cache as fc

    builder = Builder()
    _drawing(tmp_path, builder).draw(0, None, _out(tmp_path, "a"))
    monkeypatch.setattr(fc, "_sources", lambda: "edited")
    _drawing(tmp_path, builder).draw(0, None, _out(tmp_path, "b"))
    assert builder.calls == 2 and not FigureCache(tmp_path / "cache").usable


def _tamper_png(entry: Path) -> None:
    png = entry / "tiny.png"
    data = bytearray(png.read_bytes())
    data[-20] ^= 0xFF
    png.write_bytes(bytes(data))


def _tamper_manifest(entry: Path, change) -> None:
    m = json.loads((entry / "manifest.json").read_text())
    change(m)
    (entry / "manifest.json").write_text(json.dumps(m))


@pytest.mark.parametrize("tamper", [
    _tamper_png,
    lambda e: _tamper_manifest(e, lambda m: m["figures"][0].update(name="../tiny")),
    lambda e: _tamper_manifest(e, lambda m: m["figures"][0].update(extra=1)),
    lambda e: _tamper_manifest(e, lambda m: m["figures"][0]["files"]["png"].update(size=10 ** 12)),
    lambda e: _tamper_manifest(e, lambda m: m.update(key="0" * 64)),
    lambda e: (e / "tiny.pdf").unlink(),
    lambda e: _tamper_manifest(e, lambda m: m["figures"].append(m["figures"][0])),
    lambda e: (e / "manifest.json").rename(e / "m.json") or os.symlink(e / "m.json", e / "manifest.json"),
], ids=["png bytes", "name", "extra field", "size", "key", "missing file", "repeated", "linked manifest"])
def test_a_damaged_entry_is_drawn_again_and_replaced(tmp_path, tamper):
    builder = Builder()
    first = _drawing(tmp_path, builder).draw(0, None, _out(tmp_path, "a"))
    tamper(_entry(tmp_path))
    again = _drawing(tmp_path, builder).draw(0, None, _out(tmp_path, "b"))
    assert builder.calls == 2
    assert [p.read_bytes() for p in again[0][1]] == [p.read_bytes() for p in first[0][1]]
    _drawing(tmp_path, builder).draw(0, None, _out(tmp_path, "c"))
    assert builder.calls == 2  # the entry was replaced by a whole one


def test_nothing_is_read_through_a_link(tmp_path):
    builder = Builder()
    _drawing(tmp_path, builder).draw(0, None, _out(tmp_path, "a"))
    entry = _entry(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    entry.rename(elsewhere)
    os.symlink(elsewhere, entry)
    _drawing(tmp_path, builder).draw(0, None, _out(tmp_path, "b"))
    assert builder.calls == 2 and not entry.is_symlink()  # the link was replaced by an entry
    png = entry / "tiny.png"
    png.unlink()
    os.symlink(elsewhere / "tiny.png", png)
    _drawing(tmp_path, builder).draw(0, None, _out(tmp_path, "c"))
    assert builder.calls == 3


def test_a_unit_that_read_a_cached_experiment_is_not_kept(tmp_path, monkeypatch):
    from lnrecency.experiments import run_cache

    monkeypatch.setattr(run_cache, "READS", [])

    def reading(data):
        run_cache.READS.append({"path": "an experiment already read"})
        return [_figure()]

    _drawing(tmp_path, reading).draw(0, None, _out(tmp_path, "a"))
    assert not (tmp_path / "cache" / "figures").exists() or not list((tmp_path / "cache" / "figures").glob("*/*"))


def test_nothing_is_created_through_a_linked_cache_folder(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (tmp_path / "cache").mkdir()
    os.symlink(outside, tmp_path / "cache" / "figures")
    builder = Builder()
    _drawing(tmp_path, builder).draw(0, None, _out(tmp_path, "a"))
    _drawing(tmp_path, builder).draw(0, None, _out(tmp_path, "b"))
    assert builder.calls == 2 and list(outside.iterdir()) == []


def test_entries_of_other_code_are_removed_when_one_is_written(tmp_path):
    old = tmp_path / "cache" / "figures" / ("0" * 32)
    old.mkdir(parents=True)
    (old / "x").write_text("an older version's entry")
    kept = tmp_path / "cache" / "figures" / "not-a-fingerprint"
    kept.mkdir()
    _drawing(tmp_path, Builder()).draw(0, None, _out(tmp_path, "a"))
    assert not old.exists() and kept.exists()
    assert (tmp_path / "cache" / "figures" / code_fingerprint()[:32]).is_dir()
