"""The getting-started page's first commands, run verbatim: each exits 0, check-formula's example says "equal:
yes", and `verify --list` shows every claim's statements with their sources. check-formula names the flags
under which a differing formula equals the derivation."""
from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def first_steps() -> list[str]:
    text = (ROOT / "docs" / "getting-started.md").read_text(encoding="utf-8")
    block = text.split("## First steps", 1)[1].split("```bash", 1)[1].split("```", 1)[0]
    return [line.split("  #", 1)[0].strip() for line in block.strip().splitlines() if line.strip()]


def run(command: str) -> subprocess.CompletedProcess:
    args = shlex.split(command)
    assert args[0] == "lnrecency", command
    return subprocess.run([sys.executable, "-m", "lnrecency.cli.app", *args[1:]], capture_output=True, text=True,
                          timeout=300, cwd=ROOT)


@pytest.mark.parametrize("command", first_steps())
def test_each_first_step_runs_as_written(command):
    proc = run(command)
    assert proc.returncode == 0, (command, proc.stderr[-2000:])
    if "check-formula" in command:
        assert re.search(r"equal:\s+yes", proc.stdout), proc.stdout


def test_verify_list_shows_every_claims_statements_and_sources():
    from lnrecency.claims.catalog import CATALOG

    out = run("lnrecency verify --list").stdout
    flat = " ".join(out.split())
    for c in CATALOG:
        assert re.search(rf"^{re.escape(c.id)}\s", out, re.M), c.id
        for s in c.statements:
            assert f"{s.text} ({s.group})" in flat, (c.id, s.key)
    assert " ".join(out.split()).count("(the paper's printed derivation (v1))") >= 9  # lines are wrapped
    assert "ceiling" in out


def test_check_formula_names_the_flags_under_which_a_formula_is_equal():
    p2 = "2*(2*a*e + e^a*(1 + a*(2*i-3))) / (e+(i-1)*e^a)"  # the printed P2, stated for l2 with residual
    proc = run(f"lnrecency check-formula g '{p2}'")
    assert proc.returncode == 1 and "equal under:   --norm layernorm --residual --lam 1 --gamma 1" in proc.stdout
    wrong = run("lnrecency check-formula g '2*(2*a*e + e^a*(1 + a*(2*i-2))) / (e+(i-1)*e^a)'")
    assert wrong.returncode == 1 and "equal under:   none of the other flags tried" in wrong.stdout
    helptext = run("lnrecency check-formula --help").stdout
    for quantity in ("p_diag", "p_off", "g", "h", "h2", "score"):
        assert f"{quantity}:" in helptext or f"{quantity} =" in helptext
    assert "stays symbolic" in helptext


def test_verify_claim_ceiling_states_the_measured_finding():
    proc = run("lnrecency verify --claim ceiling")
    assert proc.returncode == 0 and "[ceiling] MEASURED" in proc.stdout and "lnrecency reproduce" in proc.stdout


def test_every_documented_command_line_names_flags_that_exist(capsys):
    """Every `lnrecency COMMAND ...` line in the README, the docs and the package's docstrings parses without an
    unknown flag (the parser takes no abbreviations: a renamed or removed flag in a page is caught here). Lines
    with placeholders (N, PATH, ...) that the parser refuses are skipped."""
    from lnrecency.cli.app import build_parser

    parser = build_parser()
    files = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")), *sorted((ROOT / "lnrecency").rglob("*.py"))]
    checked, unknown = 0, []
    for path in files:
        for m in re.finditer(r"lnrecency ([a-z][a-z-]+(?: [^`\n\"|;&)]*)?)", path.read_text(encoding="utf-8")):
            try:
                argv = shlex.split(m.group(1))
            except ValueError:
                continue
            if argv[0] not in parser.commands:
                continue
            try:
                _, extra = parser.parse_known_args(argv)
            except SystemExit:  # a placeholder where a value goes
                continue
            checked += 1
            unknown += [f"{path.relative_to(ROOT)}: lnrecency {m.group(1)}"
                        for flag in extra if flag.startswith("--")][:1]
    capsys.readouterr()
    assert checked > 100 and unknown == [], unknown
