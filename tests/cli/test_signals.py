"""The whole process group of a real run, signalled: the command exits 143 (SIGTERM) or 130 (SIGINT) with one line,
no process of the group is left 5 s later, no half-written folder remains and the output lock is free.

Each run starts in its own session (a new process group, as a shell job would be) and is signalled once it has
started working: its worker processes are running (report, verify) or it has printed its first progress line.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lnrecency.files.atomic import LOCK_SUFFIX, output_lock


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
        return True
    except ProcessLookupError:
        return False


def _children(pid: int) -> int:
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True).stdout
    return len(out.split())


def _run_and_signal(argv: list, sig: int, env: dict, workers: int) -> tuple[int, str]:
    proc = subprocess.Popen([sys.executable, "-m", "lnrecency.cli.app", *argv], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, start_new_session=True, env=env)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None and _children(proc.pid) < workers:
        time.sleep(0.2)
    assert proc.poll() is None, "the run ended before it could be signalled"
    time.sleep(1.0)
    os.killpg(proc.pid, sig)
    try:
        _, err = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        raise
    gone = time.monotonic() + 5  # the group must be empty within 5 s of the exit: polled, not slept (no process
    while time.monotonic() < gone and _group_alive(proc.pid):  # is left to start a new one once it is empty)
        time.sleep(0.1)
    assert not _group_alive(proc.pid), "a process of the group outlived the run by 5 s"
    return proc.returncode, err


CASES = [
    ("report", signal.SIGTERM, 143), ("report", signal.SIGINT, 130),
    ("verify", signal.SIGTERM, 143), ("experiments", signal.SIGTERM, 143),
]


@pytest.mark.slow
@pytest.mark.parametrize("command, sig, code", CASES, ids=[f"{c}-{s.name}" for c, s, _ in CASES])
def test_a_signalled_group_stops_cleanly(tmp_path, command, sig, code):
    env = {**os.environ, "LNRECENCY_CACHE": str(tmp_path / "cache"), "PYTHONWARNINGS": ""}
    out = tmp_path / "rep"
    argv = {"report": ["report", "--quick", "--out", str(out)],
            "verify": ["verify", "--claim", "TM1", "--quick", "--train"],
            "experiments": ["experiments", "thesis", "--quick"]}[command]
    workers = {"report": 2, "verify": 1, "experiments": 1}[command]
    rc, err = _run_and_signal(argv, sig, env, workers)
    assert rc == code, err[-2000:]  # an exit status, not death by the signal (Popen's -15 / -2)
    assert err.strip().splitlines()[-1].startswith(f"lnrecency {command}: stopped by"), err[-2000:]
    assert "Traceback" not in err and err.count("stopped by") == 1 and "Warning" not in err
    # no half-written folder: the output does not exist (it did not before), no staging folder beside it
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []
    with output_lock(out):  # the lock is free (a held lock is refused at once)
        pass
    assert not list(Path(tmp_path).glob(f"*{LOCK_SUFFIX}"))


@pytest.mark.parametrize("raised, code, words", [(KeyboardInterrupt, 130, "SIGINT (Ctrl-C)"), ("term", 143, "SIGTERM")])
def test_a_module_command_line_stops_in_one_line(raised, code, words, capsys):
    """``python3 -m lnrecency.report.readme`` / ``.regenerate`` (run_stoppable): a stop is one line naming the
    command and what it leaves, exit 130 or 143, no traceback; the same wrapper passes a normal exit through."""
    from lnrecency.runtime.signals import Terminated, run_stoppable

    def main():
        raise Terminated() if raised == "term" else raised()

    assert run_stoppable("readme", main) == code
    assert capsys.readouterr().err == f"readme: stopped by {words}; nothing was written\n"
    assert run_stoppable("readme", lambda: 3) == 3
