"""docs/cli.md from one source (issue 85, item 3): its command reference is the parser's, every reference a help text
makes (a page, a module, a file, a README section) exists, and the claim pages' notebook links resolve in a checkout."""
from __future__ import annotations

import argparse
import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _texts() -> list[tuple[str, str]]:
    """(where, text) of every help text, description and epilog the parser holds."""
    from lnrecency.cli.app import build_parser

    parser = build_parser()
    out = [("lnrecency", parser.description or "")]
    for name, (_, sub, _) in parser.commands.items():
        out += [(name, sub.description or ""), (name, sub.epilog or "")]
        out += [(f"{name} {'/'.join(a.option_strings) or a.dest}", a.help or "") for a in sub._actions
                if a.help and a.help != argparse.SUPPRESS]
    return out


def test_the_reference_is_the_parsers():
    from lnrecency.cli.reference import PAGE, page_with_reference

    page = PAGE.read_text(encoding="utf-8")
    assert page_with_reference(page) == page, "docs/cli.md is stale: run python3 -m lnrecency.cli.reference"


def test_every_command_and_flag_is_in_the_reference():
    from lnrecency.cli.app import build_parser
    from lnrecency.cli.reference import reference

    text = reference()
    for name, (_, sub, _) in build_parser().commands.items():
        assert f"### lnrecency {name}" in text
        for a in sub._actions:
            for flag in a.option_strings:
                if flag not in ("-h", "--help"):
                    assert f"`{flag}" in text or f"/ {flag}" in text, (name, flag)


def test_a_stale_reference_is_caught(tmp_path, monkeypatch):
    """The same check says no: a page whose reference lacks a flag is not the parser's."""
    from lnrecency.cli import reference as ref

    page = ref.PAGE.read_text(encoding="utf-8").replace("| `--fwer FWER` |", "| `--fwerr FWER` |")
    stale = tmp_path / "cli.md"
    stale.write_text(page, encoding="utf-8")
    monkeypatch.setattr(ref, "PAGE", stale)
    assert ref.main(["--check"]) == 1
    assert ref.main([]) == 0 and ref.main(["--check"]) == 0  # written again, it is current


def _headings(path: Path) -> set[str]:
    return {line.lstrip("#").strip() for line in path.read_text(encoding="utf-8").splitlines()
            if line.startswith("#")}


def _resolves(dotted: str) -> bool:
    parts = dotted.rstrip(".").split(".")
    for k in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:k]))
        except ImportError:
            continue
        for attr in parts[k:]:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


def _references(text: str) -> list[tuple[str, str]]:
    refs = [("page", m) for m in re.findall(r"\bdocs/[\w./-]+\.md\b", text)]
    refs += [("file", m) for m in re.findall(r"\blnrecency/[\w./-]+\.(?:py|md|json)\b", text)]
    refs += [("module", m) for m in re.findall(r"\blnrecency(?:\.[a-z_][\w]*)+", text)]
    refs += [("readme", m) for m in re.findall(r"README(?:'s)?,? (?:section )?'([^']+)'", text)]
    if re.search(r"\b(?:see|in) the README\b(?!,? '|'s)", text):
        refs.append(("readme", ""))  # "see the README" without a section: refused
    return refs


def test_every_reference_in_a_help_text_exists():
    readme = _headings(ROOT / "README.md")
    bad = []
    for where, text in _texts():
        for kind, ref in _references(text):
            ok = {"page": lambda r: (ROOT / r).is_file(), "file": lambda r: (ROOT / r).is_file(),
                  "module": _resolves, "readme": lambda r: bool(r) and r in readme}[kind](ref)
            if not ok:
                bad.append(f"{where}: {kind} {ref!r}")
    assert bad == []


@pytest.mark.parametrize("text, kind", [
    ("defined in the README, 'Trained decoders'", "readme"),
    ("see the README", "readme"),
    ("(docs/nowhere.md)", "page"),
    ("lnrecency.experiments.nothing_here", "module"),
])
def test_a_broken_reference_is_caught(text, kind):
    readme = _headings(ROOT / "README.md")
    refs = _references(text)
    assert refs and refs[0][0] == kind
    ok = {"page": lambda r: (ROOT / r).is_file(), "module": _resolves,
          "readme": lambda r: bool(r) and r in readme}[kind](refs[0][1])
    assert not ok


def test_the_claim_pages_notebook_links_resolve_in_a_checkout():
    links = []
    for page in sorted((ROOT / "docs" / "claims").glob("*.md")):
        for target in re.findall(r"\]\(([^)#]+\.ipynb)\)", page.read_text(encoding="utf-8")):
            links.append(target)
            assert (page.parent / target).resolve().is_file(), (page.name, target)
    assert len(links) >= 10
