"""Claim id lists are derived from the catalogue (lnrecency.claims.catalog, importable without numpy): the parser,
``verify --list`` and the registry read it; nothing is copied."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from lnrecency import choices
from lnrecency.claims import catalog
from lnrecency.claims.registry import CLAIMS, TRAINED


def test_the_registry_is_the_catalogue():
    assert tuple(CLAIMS) == catalog.ids()
    assert TRAINED == catalog.trained_ids()
    for cid, c in CLAIMS.items():
        assert c.description == catalog.declared(cid).title and c.module.endswith(catalog.declared(cid).module)


def test_the_catalogue_imports_nothing_heavy():
    code = ("import sys; import lnrecency.claims.catalog, lnrecency.cli.commands.verify; "
            "heavy = [m for m in ('numpy', 'sympy', 'scipy', 'torch', 'matplotlib') if m in sys.modules]; "
            "print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]", out


def test_an_undeclared_statement_is_refused():
    """A verdict must decide a statement its claim declares, word for word: the same lookup says no to another."""
    import pytest

    c3 = catalog.declared("C3")
    assert catalog.statement_source("C3", c3.text("keeps")) == catalog.SOURCES["ours"]
    with pytest.raises(ValueError, match="does not declare"):
        catalog.statement_source("C3", c3.text("keeps") + " (reworded)")
    with pytest.raises(KeyError, match="must be one of"):
        catalog.declared("X99")  # a placeholder ID: no real claim can take it


def test_a_declaration_is_checked():
    import pytest

    with pytest.raises(ValueError, match="source must be one of"):
        catalog.S("x", "the paper", "text")
    with pytest.raises(ValueError, match="no statement"):
        catalog.declare("X1", "parameter_free.x", "title")
    with pytest.raises(ValueError, match="twice"):
        catalog.declare("X1", "parameter_free.x", "t", catalog.S("a", "ours", "one"), catalog.S("a", "ours", "two"))


def test_id_ranges_round_trip():
    assert choices.id_ranges(("C2", "C3", "C4", "P1", "S2.0", "S2.1", "S3.1")) == "C2..C4, P1, S2.0..S2.1, S3.1"


def test_verify_help_names_every_claim(capsys):
    import pytest

    from lnrecency.cli.app import main

    with pytest.raises(SystemExit):
        main(["verify", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert choices.id_ranges(catalog.ids()) in out and "S2.0" in out


def test_a_rows_source_is_the_catalogues_and_no_claim_module_names_its_own():
    """Issue 66: every verdict row's source words come from the catalogue's statement (one vocabulary): no claim
    module sets a SOURCE of its own; C8's extension (ours in the catalogue) is counted as ours, its seed-text
    statement as the seed's; a statement the claim does not declare is refused."""
    import re

    from lnrecency.claims.catalog import result_source

    root = Path(catalog.__file__).parent
    for path in sorted(root.glob("*/*.py")):
        assert not re.search(r"^SOURCE\b", path.read_text(encoding="utf-8"), re.M), path.name
    c8 = catalog.declared("C8")
    words = {s.key: result_source("C8", s.text) for s in c8.statements}
    assert {words[s.key] for s in c8.statements if s.source == "ours"} == {"our formulation"}
    assert {words[s.key] for s in c8.statements if s.source != "ours"} == {"seed text"}
    assert result_source("W2", catalog.declared("W2").statements[0].text) == "prior work (Wu et al. 2025)"
    with pytest.raises(ValueError, match="does not declare"):
        result_source("C8", "a statement nobody declared")


def test_the_answer_asks_for_roles_never_for_claim_ids():
    """Issue 66: each claim's part in the plain answer is declared in the catalogue (ANSWER); the answer's code names
    no claim, and every role's rows exist (a declared claim, a filter that picks at least one of its statements)."""
    import ast

    from lnrecency.claims.catalog import ANSWER

    ids = set(catalog.ids())
    root = Path(catalog.__file__).parents[1] / "report"
    for name in ("headline.py", "words/answer.py"):
        tree = ast.parse((root / name).read_text(encoding="utf-8"))
        named = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and n.value in ids}
        assert named == set(), (name, named)
    for role, parts in ANSWER.items():
        for cid, which, _ in parts:
            kind, _, key = (which or ":").partition(":")
            stmts = catalog.declared(cid).statements
            assert which is None or any((s.source if kind == "source" else s.key) == key for s in stmts), (role, cid)
