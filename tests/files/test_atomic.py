"""Output folders (lnrecency.files.atomic): checked before the work, never losing, moving or overwriting a file
lnrecency did not write, whatever a file in the folder claims; never written through a symbolic link; a failed
publish undone; a killed run's staging folder removed by the next run; workers dying with their parent."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lnrecency.cli.app import main
from lnrecency.files.atomic import MANIFEST, OutputRefused, check_out, owned_names, publish, staged_directory


def _write(out, files: dict[str, str], names=()):
    """One output run writing ``files`` into ``out``."""
    with staged_directory(out, names) as stage:
        for name, text in files.items():
            (stage / name).write_text(text)
        publish(stage, out)


def _tree(folder: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted(folder.iterdir()) if p.is_file()}


def test_a_new_folder_gets_the_files_and_a_manifest(tmp_path):
    _write(tmp_path / "new" / "out", {"a.md": "1", "b.csv": "2"})
    out = tmp_path / "new" / "out"
    assert sorted(_tree(out)) == [MANIFEST, "a.md", "b.csv"]
    assert owned_names(out) == {"a.md", "b.csv"}
    assert [p.name for p in (tmp_path / "new").iterdir()] == ["out"]  # no staging folder left


def test_a_rerun_replaces_its_own_files_and_keeps_the_users(tmp_path):
    out = tmp_path / "out"
    _write(out, {"a.md": "old", "stale.png": "old"})
    (out / "thesis.tex").write_text("mine")
    _write(out, {"a.md": "new", "b.md": "new"})
    assert _tree(out) | {MANIFEST: ""} == {"a.md": "new", "b.md": "new", "thesis.tex": "mine", MANIFEST: ""}


def test_a_users_file_that_claims_to_list_ours_deletes_nothing(tmp_path):
    """The issue's case: a user's sweep.json listing thesis.tex. The sweep's own name is the user's, so the
    sweep is refused before the work, and thesis.tex and sweep.json stay as they were."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "thesis.tex").write_text("mine")
    (out / "sweep.json").write_text(json.dumps({"files": ["thesis.tex"]}))
    before = _tree(out)
    assert main(["sweep", "--out", str(out), "--lam", "1", "--alpha", "0", "--residual", "off", "--layers", "2",
                 "--n-max", "4"]) == 2
    assert _tree(out) == before
    # a manifest in our format that lists thesis.tex (with another content's hash) makes it ours neither
    (out / MANIFEST).write_text(json.dumps({"tool": "lnrecency", "files": {
        "thesis.tex": {"sha256": "0" * 64, "size": 4}}}))
    (out / "sweep.json").unlink()
    _write(out, {"x.md": "1"})
    assert _tree(out)["thesis.tex"] == "mine"


@pytest.mark.parametrize("name", ["index.md", "phase_diagram.csv"])
def test_a_users_file_under_an_output_name_is_refused_before_the_work(tmp_path, name):
    out = tmp_path / "out"
    out.mkdir()
    (out / name).write_text("mine")
    with pytest.raises(OutputRefused, match=name):
        check_out(out, [name, "other.md"])
    with pytest.raises(OutputRefused, match=name):  # a name known only at publish: refused then, unchanged
        _write(out, {name: "ours", "z.md": "ours"})
    assert _tree(out) == {name: "mine"}


def test_a_file_we_wrote_and_the_user_changed_is_the_users(tmp_path):
    out = tmp_path / "out"
    _write(out, {"a.md": "ours"})
    (out / "a.md").write_text("edited by hand")
    with pytest.raises(OutputRefused, match="a.md"):
        _write(out, {"a.md": "new"})
    assert (out / "a.md").read_text() == "edited by hand"


def test_a_symlinked_folder_is_refused_and_nothing_is_written_through_it(tmp_path):
    target = tmp_path / "real"
    target.mkdir()
    (target / "mine.txt").write_text("mine")
    link = tmp_path / "link"
    link.symlink_to(target)
    with pytest.raises(OutputRefused, match="symbolic link.*give the folder itself"):
        _write(link, {"a.md": "1"})
    assert link.is_symlink() and _tree(target) == {"mine.txt": "mine"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link", "real"]
    assert main(["train", "induction", "--out", str(link), "--steps", "1"]) == 2  # a checkpoint too
    assert _tree(target) == {"mine.txt": "mine"}


@pytest.mark.parametrize("bad", ["", ".", "..", "/", "x/..", "dangling", "a_file"])
def test_bad_destinations_are_refused_at_once(tmp_path, monkeypatch, bad):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    (tmp_path / "a_file").write_text("x")
    with pytest.raises(OutputRefused):
        check_out(bad)
    t0 = time.perf_counter()  # the report checks its folder before any work
    assert main(["report", "--quick", "--out", bad]) == 2
    assert time.perf_counter() - t0 < 5
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a_file", "dangling"]


def test_long_names(tmp_path):
    _write(tmp_path / ("n" * 240), {"a.md": "1"})  # a valid name is accepted
    assert (tmp_path / ("n" * 240) / "a.md").exists()
    with pytest.raises(OutputRefused, match="255"):
        check_out(tmp_path / ("n" * 256))


def test_a_failed_publish_is_undone(tmp_path, monkeypatch):
    """The third rename fails (e.g. a full disk): the two done are undone; the folder is as it was."""
    out = tmp_path / "out"
    _write(out, {"a.md": "old a", "b.md": "old b", "c.md": "old c"})
    (out / "mine.txt").write_text("mine")
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    real, calls = os.replace, []

    def flaky(src, dst):
        if str(dst).endswith("c.md") and Path(dst).parent == out and not calls:
            calls.append(dst)  # once: the undo's renames succeed
            raise OSError(28, "No space left on device")
        return real(src, dst)

    monkeypatch.setattr(os, "replace", flaky)
    with pytest.raises(OSError, match="space"):
        _write(out, {"a.md": "new", "b.md": "new", "c.md": "new"})
    monkeypatch.setattr(os, "replace", real)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def test_a_killed_runs_staging_folder_is_removed_by_the_next_run(tmp_path):
    out = tmp_path / "out"
    _write(out, {"a.md": "1"})
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = out / f".lnrecency-stage-{dead.pid}-abc"
    stale.mkdir()
    (stale / "half.png").write_text("x")
    _write(out, {"a.md": "2"})
    assert not stale.exists() and (out / "a.md").read_text() == "2"


_CHILD = r"""
import sys, time
from lnrecency.report.views.outputs import FigureOutput
from lnrecency.report import figure_list as figures
def slow(data):  # the verdict workers and the figure helper run meanwhile (this runs in one of them)
    print("drawing", flush=True)
    time.sleep(120)
figures.FIGURES = [FigureOutput("slow", slow, ("slow",))]
from lnrecency.cli.app import main
sys.exit(main(["report", "--quick", "--format", "json", "--out", sys.argv[1]]))
"""


def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (Linux /proc)."""
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            if int(stat.read_text().split(")")[-1].split()[1]) == pid:
                out.append(int(stat.parent.name))
        except (OSError, ValueError, IndexError):
            pass  # a process that ended meanwhile
    return out


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_the_verdict_worker_dies_with_a_killed_report(tmp_path):
    proc = subprocess.Popen([sys.executable, "-c", _CHILD, str(tmp_path / "rep")], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    assert proc.stdout.readline().strip() == "drawing"
    workers = _children(proc.pid)  # the verdict workers and the figure helper
    assert len(workers) >= 2
    proc.kill()
    proc.wait()
    deadline = time.time() + 10
    alive = workers
    while alive and time.time() < deadline:
        alive = [p for p in workers if Path(f"/proc/{p}").exists()
                 and Path(f"/proc/{p}/stat").read_text().split(")")[-1].split()[0] != "Z"]
        time.sleep(0.1)
    assert alive == []
    _write(tmp_path / "rep", {"a.md": "1"})  # and the next run cleans the staging folder it left
    assert [p.name for p in tmp_path.iterdir()] == ["rep"] and sorted(_tree(tmp_path / "rep")) == [MANIFEST, "a.md"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_a_read_only_folder_is_refused_before_the_work_and_kept(tmp_path):
    out = tmp_path / "ro"
    out.mkdir()
    (out / "mine.txt").write_text("mine")
    out.chmod(0o555)
    try:
        with pytest.raises(OutputRefused, match="not writable"):
            check_out(out)
        assert sorted(p.name for p in out.iterdir()) == ["mine.txt"]
        assert sorted(p.name for p in tmp_path.iterdir()) == ["ro"]
    finally:
        out.chmod(0o755)


# -- fuzz: random folder layouts, never a user file lost ---------------------------------------------------
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

NAMES = ["a.md", "b.md", "index.md", "thesis.tex", MANIFEST, "sub"]
MANIFESTS = st.sampled_from(["none", "garbage", "old format", "lists everything", "lists nothing"])


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=40)
@given(user=st.sets(st.sampled_from(NAMES)), manifest=MANIFESTS, link=st.booleans(), earlier=st.booleans(),
       outputs=st.sets(st.sampled_from(["a.md", "b.md", "index.md", "c.md"]), min_size=1))
def test_random_layouts_never_lose_a_user_file(tmp_path_factory, user, manifest, link, earlier, outputs):
    root = tmp_path_factory.mktemp("layout")
    real = root / "real"
    real.mkdir()
    if earlier:  # an earlier output of ours
        _write(real, {"a.md": "ours a", "c.md": "ours c"})
    for name in user:
        if name == "sub":
            (real / "sub").mkdir(exist_ok=True)
            (real / "sub" / "x").write_text("user sub")
        elif name != MANIFEST:
            (real / name).write_text(f"user {name}")
    if manifest != "none" and (MANIFEST in user or not earlier):
        listed = {n: {"sha256": "0" * 64, "size": 0} for n in NAMES}
        text = {"garbage": "{not json", "old format": json.dumps({"files": NAMES}),
                "lists everything": json.dumps({"tool": "lnrecency", "files": listed}),
                "lists nothing": json.dumps({"tool": "lnrecency", "files": {}})}[manifest]
        (real / MANIFEST).write_text(text)
    theirs = {p.relative_to(real): p.read_bytes() for p in real.rglob("*")
              if p.is_file() and p.read_bytes().startswith(b"user")}
    before = {p.relative_to(real): p.read_bytes() for p in real.rglob("*") if p.is_file()}
    out = real
    if link:
        out = root / "link"
        out.symlink_to(real)
    try:
        _write(out, {n: f"new {n}" for n in outputs})
        refused = False
    except OutputRefused:
        refused = True
    after = {p.relative_to(real): p.read_bytes() for p in real.rglob("*") if p.is_file()}
    if refused:
        assert after == before
    assert refused or not link  # nothing is written through a link
    for rel, data in theirs.items():
        assert after.get(rel) == data, rel
    assert not link or out.is_symlink()
    assert not [p for p in root.rglob(".lnrecency-stage-*")]


def test_second_run_on_a_locked_folder_is_refused(tmp_path):
    """While one run writes an output folder (holding its lock), a second run on the same folder is refused
    with one line instead of silently replacing the first's output; the lock is gone afterwards, a run on
    another folder is not blocked, and a user's file in the lock's place is never removed."""
    import subprocess
    import sys
    import time

    from lnrecency.files.atomic import OutputRefused, output_lock, staged_directory

    out = tmp_path / "out"
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sys, time; from pathlib import Path; from lnrecency.files.atomic import staged_directory\n"
        f"with staged_directory({str(out)!r}) as stage:\n"
        "    print('holding', flush=True); time.sleep(30)\n")], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "holding"
        with pytest.raises(OutputRefused, match="another lnrecency run is writing"):
            with staged_directory(out):
                pass
        with staged_directory(tmp_path / "other"):  # another folder: not blocked
            pass
    finally:
        holder.kill()
        holder.wait()
    time.sleep(0.1)
    with staged_directory(out):  # the killed holder's lock died with it
        pass
    assert not list(tmp_path.glob(".*lnrecency-lock"))
    import hashlib

    mine = tmp_path / f".{hashlib.sha1(b'mine').hexdigest()[:16]}.lnrecency-lock"
    mine.write_text("my notes")
    with pytest.raises(OutputRefused, match="in the way"):
        with output_lock(tmp_path / "mine"):
            pass
    assert mine.read_text() == "my notes"


def test_unwritable_output_is_refused_before_the_work():
    """/proc accepts os.access(W_OK) for root but no folder can be made there: refused by a real write."""
    from lnrecency.files.atomic import OutputRefused, check_out

    with pytest.raises(OutputRefused, match="cannot create a folder"):
        check_out("/proc/lnrecency-out")


# ---- a forged manifest cannot reach outside the folder (issue: a listed '../victim.txt' was removed) ----------
def _sha(text: str) -> dict:
    import hashlib

    return {"sha256": hashlib.sha256(text.encode()).hexdigest(), "size": len(text.encode())}


@pytest.mark.parametrize("name", ["../victim.txt", "../../victim.txt", "/tmp/victim.txt", "sub/victim.txt", "..",
                                  ".", "", "a\x00b"])
def test_a_manifest_naming_anything_outside_the_folder_is_refused_and_moves_nothing(tmp_path, name):
    out = tmp_path / "out"
    out.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("the user's file")
    (out / MANIFEST).write_text(json.dumps({"tool": "lnrecency", "files": {name: _sha("the user's file")}}))
    before = _tree(out)
    with pytest.raises(OutputRefused, match="not a file inside the folder|not a manifest"):
        _write(out, {"a.md": "1"})
    assert victim.read_text() == "the user's file" and _tree(out) == before


def test_the_cli_refuses_a_forged_manifest_with_one_line(tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("the user's file")
    (out / MANIFEST).write_text(json.dumps({"tool": "lnrecency", "files": {"../victim.txt": _sha("the user's file")}}))
    assert main(["sweep", "--out", str(out), "--lam", "1", "--alpha", "0", "--residual", "off", "--layers", "2",
                 "--n-max", "4"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "victim.txt" in err and "Traceback" not in err
    assert victim.read_text() == "the user's file"


@pytest.mark.parametrize("text", ["[" * 100_000 + "]" * 100_000, '{"tool": "lnrecency", "files": {"a": {"size": NaN}}}',
                                  '{"tool": "lnrecency", "files": ' + "{" * 20 + "}" * 20 + "}"])
def test_a_hostile_manifest_is_refused_not_a_traceback(tmp_path, text):
    out = tmp_path / "out"
    out.mkdir()
    (out / MANIFEST).write_text(text)
    with pytest.raises(OutputRefused, match="not a manifest"):
        _write(out, {"a.md": "1"})


def test_the_legitimate_neighbour_still_replaces_its_own_files(tmp_path):
    out = tmp_path / "out"
    _write(out, {"a.md": "old", "b.md": "old"})
    _write(out, {"a.md": "new"})
    assert _tree(out) | {MANIFEST: ""} == {"a.md": "new", MANIFEST: ""}


@settings(max_examples=60, deadline=None)
@given(name=st.text(alphabet=st.sampled_from(list("ab./\\\x00 ")), min_size=0, max_size=8))
def test_any_manifest_name_is_plain_or_refused_and_nothing_outside_moves(tmp_path_factory, name):
    """The family of names a forged manifest can hold: a plain name inside the folder is accepted (and the
    publish goes through); anything else is refused with nothing moved; a file beside the folder never changes."""
    from lnrecency.files.atomic import plain_name

    base = tmp_path_factory.mktemp("m")
    out = base / "out"
    out.mkdir()
    victim = base / "victim.txt"
    victim.write_text("the user's file")
    (out / MANIFEST).write_text(json.dumps({"tool": "lnrecency", "files": {name: _sha("the user's file")}}))
    if plain_name(out, name):
        assert not any(c in name for c in ("/", "\\", "\x00")) and name not in ("", ".", "..")
        _write(out, {"a.md": "1"})
        assert (out / "a.md").read_text() == "1"
    else:
        with pytest.raises(OutputRefused):
            _write(out, {"a.md": "1"})
        assert not (out / "a.md").exists()
    assert victim.read_text() == "the user's file"
