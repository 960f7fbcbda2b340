"""The documentation site builds with warnings as errors, its generated claim pages are current, and the
README stays short (issue 32: under about 200 lines; everything else lives on the site)."""
from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: the README's line budget (pyproject.toml's size budgets; docs/layout.md, "Size budgets")
README_MAX_LINES = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["lnrecency"][
    "size-budgets"]["readme-lines"]


def test_docs_build_with_warnings_as_errors(tmp_path):
    """sphinx-build -W -E (every page, every docstring of the API reference, the notebooks rendered)."""
    proc = subprocess.run([sys.executable, "-m", "sphinx", "-W", "-E", "-q", "-b", "html", str(ROOT / "docs"),
                           str(tmp_path / "html")], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    html = tmp_path / "html"
    for page in ("index", "getting-started", "model", "claims/index", "claims/P7", "glossary", "api", "cli",
                 "notebooks/01_theorem1_layernorm_recency"):
        assert (html / f"{page}.html").is_file(), page
    # the claim page carries the verdict's reason (P7: the sign typo and that the conclusion survives)
    p7 = (html / "claims" / "P7.html").read_text(encoding="utf-8")
    assert "sign typo" in p7 and "still holds" in p7
    # formulas render as written: no '*' of a formula turned into italics on any claim page
    for page in sorted((html / "claims").glob("*.html")):
        assert "<em>" not in page.read_text(encoding="utf-8"), page.name
    assert "e^(2+a)*(i-1)" in p7.replace("&#8722;", "-") or "e^(2+a)(i-1)" in p7


def test_claim_pages_are_current(tmp_path):
    """docs/claims/ is generated from the registry and docs/verdicts.json and committed (its links work on
    GitHub): regenerating it changes nothing."""
    sys.path.insert(0, str(ROOT / "docs"))
    try:
        import build_pages
    finally:
        sys.path.pop(0)
    before = {p.name: p.read_text(encoding="utf-8") for p in (ROOT / "docs" / "claims").glob("*.md")}
    copy = tmp_path / "docs"
    copy.mkdir()
    (copy / "verdicts.json").write_bytes((ROOT / "docs" / "verdicts.json").read_bytes())
    (copy / "thesis_text_v2.json").write_bytes((ROOT / "docs" / "thesis_text_v2.json").read_bytes())
    (tmp_path / "notebooks").mkdir()
    build_pages.generate(copy)
    after = {p.name: p.read_text(encoding="utf-8") for p in (copy / "claims").glob("*.md")}
    assert after == before, "docs/claims/ is stale: run sphinx-build (conf.py regenerates it) and commit"


def test_readme_is_short_and_links_resolve():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) < README_MAX_LINES
    import re

    for target in re.findall(r"\]\(([^)#]+)\)", text):
        if not target.startswith("http"):
            assert (ROOT / target).exists(), f"README links to a missing {target}"
