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
