"""The false-alarm budget is one ledger per process: a run split over pytest-xdist workers is refused with the
reason (issue 54), instead of the ledger switching off silently."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_a_run_split_over_xdist_workers_is_refused(tmp_path):
    env = {**os.environ, "PYTEST_XDIST_WORKER": "gw0"}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--co",
                           str(ROOT / "tests" / "inference" / "test_xdist_refused.py")],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 4, proc.stdout + proc.stderr  # pytest's usage error
    assert "false-alarm budget" in proc.stdout + proc.stderr
