"""The glossary both ways (issue 75, item 6): every term the README and the documentation pages use is defined in
lnrecency.report.words.glossary (and so on docs/glossary.md, generated from it), and every term defined there is
used on some page. The vocabulary checked is the project's: a list of the words a reader could not know, each with
the pattern that finds it."""
from __future__ import annotations

import re
from pathlib import Path

from lnrecency.report.words import glossary

ROOT = Path(__file__).resolve().parents[2]
#: the pages a reader is sent to the glossary from: the README and every documentation page but the glossary
PAGES = [ROOT / "README.md"] + sorted(p for p in (ROOT / "docs").rglob("*.md") if p.name != "glossary.md"
                                      and "_build" not in p.parts)
#: the project's vocabulary: a term -> the pattern that finds its use (the words a reviewer asked for, issue 75,
#: and the statistics the findings print)
VOCABULARY = {
    "d": r"\bd = \d", "lam": r"\blam\b", "logit per key": r"logit per key", "BOS": r"\bBOS\b",
    "rollout": r"\brollout\b", "row": r"\brow \d", "split": r"\bsplit:", "none": r"\bnone alone\b|\(none:",
    "decided by a hair": r"decided by a hair", "secondary": r"\bsecondary\b", "RP": r"\bRP\b", "SE": r"\bSE\b",
    "NoPE": r"\bNoPE\b", "Holm": r"\bHolm\b", "matched loss": r"matched loss", "equal tokens": r"equal tokens",
    "sqrt(d) scaling": r"sqrt\(d\)", "alpha": r"\balpha\b", "residual": r"\bresidual\b",
    "reproduced": r"\breproduced\b", "the opposite shown": r"the opposite shown", "inconclusive": r"\binconclusive\b",
    "confirmed": r"\bconfirmed\b", "refuted": r"\brefuted\b", "our formulation": r"our formulation",
    "printed derivation": r"printed derivation", "family-wise rate": r"family-wise", "limit": r"d -> infinity",
    "per-layer factor": r"per-layer factor", "recency bias": r"\brecency bias\b", "c/d": r"\bc/d\b",
}


def _text() -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in PAGES)


def test_every_term_a_page_uses_is_defined():
    text = _text()
    used = [term for term, pattern in VOCABULARY.items() if re.search(pattern, text)]
    assert used, "the scan reads the pages"
    missing = []
    for term in used:
        try:
            glossary.term(term)
        except KeyError:
            missing.append(term)
    assert missing == []


def test_every_defined_term_is_used_on_a_page():
    text = _text()
    unused = [t.names[0] for t in glossary.TERMS if not re.search(t.pattern, text)]
    assert unused == []


def test_the_glossary_page_is_generated_from_the_terms():
    page = (ROOT / "docs" / "glossary.md").read_text(encoding="utf-8")
    assert page == glossary.page()
    for t in glossary.TERMS:
        assert ", ".join(t.names) in page


def test_the_checks_can_say_no():
    """A term no page uses, and a page word with no term, are both caught by the same code."""
    planted = glossary.Term(("zorbiness",), r"\bzorbiness\b", "", "Planted.")
    assert not re.search(planted.pattern, _text())
    try:
        glossary.term("zorbiness")
    except KeyError as exc:
        assert "glossary term must be one of" in str(exc)
    else:
        raise AssertionError("an undefined term was found")
