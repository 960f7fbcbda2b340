"""Everything derived from the claim catalogue, written in one command after a claim is added or changed:

    python3 -m lnrecency.report.regenerate [--check] [--trained | --refresh ID ...] [--claim ID ...]

* the reviewer notebooks (``notebooks/make_notebooks.py``: each claim's declared cells);
* the README's verdict block and docs/verdicts.json (:mod:`lnrecency.report.readme`): the claims the report
  evaluates are evaluated afresh (default and ``--quick`` settings, about two minutes); the rows of the claims
  on trained and real models, and the README's paragraph on them, are kept as they are unless ``--trained``
  (which evaluates them from their cached experiments, training what is not cached);
* the documentation's claim pages (docs/claims/, docs/build_pages.py), from the catalogue and docs/verdicts.json;
* docs/glossary.md, from :mod:`lnrecency.report.words.glossary`.

The parser's ID lists and ``verify --list`` read :mod:`lnrecency.claims.catalog` directly: nothing is copied.
``--check`` writes nothing and exits 1 when the notebooks or the claim pages are out of date (it evaluates nothing).
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from lnrecency.runtime.parser import OneLineParser

ROOT = Path(__file__).resolve().parents[2]

__all__ = ["main", "claim_pages", "glossary_page"]


def claim_pages(*, check: bool) -> bool:
    """Write docs/claims/ from the catalogue and docs/verdicts.json (``check``: write nothing); whether they were
    current. Needs a source checkout (docs/build_pages.py)."""
    import shutil
    import tempfile

    sys.path.insert(0, str(ROOT / "docs"))
    try:
        import build_pages
    finally:
        sys.path.pop(0)
    docs = ROOT / "docs"
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "docs"
        copy.mkdir()
        shutil.copyfile(docs / "verdicts.json", copy / "verdicts.json")
        if (docs / "thesis_text_v2.json").is_file():  # plan v2's run: the TT pages say which setting they need
            shutil.copyfile(docs / "thesis_text_v2.json", copy / "thesis_text_v2.json")
        (Path(tmp) / "notebooks").mkdir()
        build_pages.generate(copy)
        new = {p.name: p.read_text(encoding="utf-8") for p in (copy / "claims").glob("*.md")}
    old = {p.name: p.read_text(encoding="utf-8") for p in (docs / "claims").glob("*.md")}
    if new == old or check:
        return new == old
    for name in set(old) - set(new):
        (docs / "claims" / name).unlink()
    for name, text in new.items():
        if old.get(name) != text:
            (docs / "claims" / name).write_text(text, encoding="utf-8")
    return False


def glossary_page(*, check: bool) -> bool:
    """Write docs/glossary.md from :mod:`lnrecency.report.words.glossary` (``check``: write nothing); whether it was
    current."""
    from lnrecency.files.atomic import atomic_write_text
    from lnrecency.report.words.glossary import page

    path = ROOT / "docs" / "glossary.md"
    current = path.is_file() and path.read_text(encoding="utf-8") == page()
    if not current and not check:
        atomic_write_text(path, page())
    return current


def main(argv: list[str] | None = None) -> int:
    p = OneLineParser(prog="python3 -m lnrecency.report.regenerate", description=__doc__.split("\n")[0])
    p.add_argument("--check", action="store_true", help="write nothing; exit 1 if the notebooks or the claim pages "
                                                        "are out of date (evaluates nothing)")
    p.add_argument("--trained", action="store_true", help="also the verdicts on trained and real models (from "
                                                          "their cached experiments; uncached ones are trained)")
    p.add_argument("--refresh", nargs="+", default=(), metavar="ID",
                   help="without --trained: these claims on trained models evaluated afresh from their cached "
                        "experiments, the other trained rows kept")
    p.add_argument("--claim", nargs="+", default=(), metavar="ID",
                   help="evaluate only these claims (progress per claim and setting); every other claim's rows come "
                        "from the last full regeneration (kept in the cache)")
    args = p.parse_args(argv)
    if args.refresh and (args.trained or args.check):
        p.error("--refresh goes without --trained and --check")
    if args.claim and (args.trained or args.check):
        p.error("--claim goes without --trained and --check")
    stale = []
    if not args.check:
        from lnrecency.report import readme

        readme.main([str(ROOT / "README.md")] + (["--trained"] if args.trained else ["--keep-trained"])
                    + (["--refresh", *args.refresh] if args.refresh else [])
                    + (["--claim", *args.claim] if args.claim else []), prog="python3 -m lnrecency.report.regenerate")
        # the generated blocks of every docs page that holds one (the counts by source, measured times, the plans'
        # results from their snapshots): found by their markers, not listed by hand (a page left out went stale)
        for page in readme.filled_pages(ROOT / "docs"):
            readme.update_fills(page)
    maker = ROOT / "notebooks" / "make_notebooks.py"
    if maker.is_file():  # a source checkout (an installed wheel has no notebooks)
        cmd = [sys.executable, str(maker)] + (["--check"] if args.check else [])
        if subprocess.run(cmd, cwd=ROOT).returncode != 0:
            stale.append("notebooks/")
    if (ROOT / "docs" / "build_pages.py").is_file() and not claim_pages(check=args.check):
        stale.append("docs/claims/")
    if (ROOT / "docs").is_dir() and not glossary_page(check=args.check):
        stale.append("docs/glossary.md")
    if args.check:
        if stale:
            print("out of date: " + ", ".join(stale) + "; run: python3 -m lnrecency.report.regenerate",
                  file=sys.stderr)
            return 1
        print("up to date")
        return 0
    print("regenerated the README block, docs/verdicts.json, the notebooks and the claim pages")
    return 0


if __name__ == "__main__":
    from lnrecency.runtime.signals import run_stoppable

    sys.exit(run_stoppable("regenerate", main, "each file it regenerated before the stop was written whole, the "
                                               "rest are as they were"))
