"""``regenerate --claim ID`` (issue 66): one claim evaluated, every other claim's rows from the last full run kept in
the cache, read back through the store's validated reader; without a kept run it says what to run, exit 2."""
from __future__ import annotations

import pytest

from lnrecency.experiments import run_cache
from lnrecency.report import kept_verdicts


def test_one_claim_afresh_the_others_kept(quick_verdicts, tmp_path):
    ids, results = quick_verdicts
    asked = []

    def evaluate(wanted, *, quick):  # stands in for the registry: C3's rows, marked so that they can be told apart
        asked.append((list(wanted), quick))
        return [r for r in results if r.id in wanted]
    with run_cache.using_root(tmp_path):
        with pytest.raises(ValueError, match="--claim needs the verdicts of a full regeneration"):
            kept_verdicts.kept(quick=True)
        kept_verdicts.keep(results, quick=True)
        back = kept_verdicts.kept(quick=True)
        assert [(r.id, r.verdict, r.finding) for r in back] == [(r.id, r.verdict, r.finding) for r in results]
        lines = []

        class Sink:
            def write(self, s):
                lines.append(s)

            def flush(self):
                pass
        out = kept_verdicts.with_claims(["C3"], quick=True, evaluate=evaluate, progress=Sink())
        assert asked == [(["C3"], True)]
        assert [r.id for r in out] == [r.id for r in results]  # catalogue order kept
        assert any(s.startswith("C3: ") and "quick settings" in s for s in lines)
        (tmp_path / "regenerate" / "quick" / "arrays.npz").write_bytes(b"not a zip")
        with pytest.raises(ValueError, match="cannot be read"):
            kept_verdicts.kept(quick=True)
    # a link where the kept verdicts live is never read through, nor written through
    outside = tmp_path / "outside"
    (outside / "quick").mkdir(parents=True)
    root = tmp_path / "linked"
    root.mkdir()
    (root / "regenerate").symlink_to(outside)
    with run_cache.using_root(root):
        with pytest.raises(ValueError, match="symbolic link"):
            kept_verdicts.kept(quick=True)
        with pytest.raises(ValueError, match="symbolic link"):
            kept_verdicts.keep(results, quick=True)
    assert list((outside / "quick").iterdir()) == []


def test_the_command_refuses_a_claim_it_does_not_evaluate(capsys):
    from lnrecency.report.readme import main

    for argv in (["--claim", "T9"], ["--claim", "TV1"], ["--claim", "C3", "--trained"]):
        with pytest.raises(SystemExit) as exc:
            main(["README.md", *argv])
        assert exc.value.code == 2
        err = capsys.readouterr().err
        assert "--claim" in err and argv[1] in err and "\n" == err[-1] and err.count("\n") == 1


def _row(cid: str = "T1"):
    from lnrecency.inference.evidence import NotRun
    from lnrecency.inference.verdicts import ClaimResult

    return ClaimResult(cid, "seed text", "a statement", {}, "confirmed", NotRun(reason="a row made for the test"))


def test_a_link_in_place_of_any_file_a_kept_result_reads_is_refused(tmp_path):
    """Issue 78, item 1: arrays.npz beside evidence.json is read through the same link check; nothing outside the
    cache is opened. The valid neighbour: the same files, plain, read back."""
    with run_cache.using_root(tmp_path / "cache"):
        where = kept_verdicts.keep([_row()], quick=True)
        assert [r.id for r in kept_verdicts.kept(quick=True)] == ["T1"]
        for name in kept_verdicts.READS:
            outside = tmp_path / f"outside_{name}"
            (where / name).rename(outside)
            (where / name).symlink_to(outside)
            with pytest.raises(ValueError, match=f"{name}' is a symbolic link"):
                kept_verdicts.kept(quick=True)
            (where / name).unlink()
            (outside).rename(where / name)
        assert [r.id for r in kept_verdicts.kept(quick=True)] == ["T1"]


def test_the_store_reader_opens_no_file_through_a_link(tmp_path):
    """Issue 78, item 1, for every stored result (``report --from``): arrays.npz or evidence.json as a link is
    refused by the store's reader itself."""
    from lnrecency.files.store import StoreError, dumps, loads

    text, arrays = dumps((1.5, "x"))
    for name in ("arrays.npz", "evidence.json"):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "evidence.json").write_text(text)
        (folder / "arrays.npz").write_bytes(arrays)
        assert loads(folder) == (1.5, "x")
        (tmp_path / f"real_{name}").write_bytes((folder / name).read_bytes())
        (folder / name).unlink()
        (folder / name).symlink_to(tmp_path / f"real_{name}")
        with pytest.raises(StoreError, match="symbolic link"):
            loads(folder)


@pytest.mark.parametrize("rows,message", [
    ((1, 2, 3), "row 0 holds int '1', not a verdict"),
    ((_row("ZZ9<script>"),), "ZZ9<script>', which is not in the catalogue"),
    ((_row("R1"),), "'R1', which is on trained or real models"),
])
def test_forged_kept_rows_are_refused(tmp_path, rows, message):
    """Issue 78, items 5 and 7: a kept store whose rows are not verdicts, name a claim outside the catalogue, or a
    trained claim keep() never stores, is refused in one line naming the fix; keep() refuses to write them too. The
    valid neighbour: a row of a kept claim (the test above)."""
    from lnrecency.files.atomic import atomic_write_bytes, atomic_write_text
    from lnrecency.files.store import dumps

    with run_cache.using_root(tmp_path):
        where = kept_verdicts.keep([_row("C3")], quick=False)
        text, arrays = dumps(tuple(rows))
        atomic_write_bytes(where / "arrays.npz", arrays)
        atomic_write_text(where / "evidence.json", text)
        with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")) as exc:
            kept_verdicts.kept(quick=False)
        assert "regenerate once without --claim" in str(exc.value)
        with pytest.raises(ValueError, match="not a verdict|not in the catalogue|on trained or real models"):
            kept_verdicts.keep(list(rows), quick=False)
