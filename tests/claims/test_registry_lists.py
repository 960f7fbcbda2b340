"""Claim id lists are derived from the registry: the parser's copy (lnrecency.choices, which must not import the
claims) is written by ``python3 -m lnrecency.report.regenerate`` and equals the registry; the help texts read it."""
from __future__ import annotations

from lnrecency import choices
from lnrecency.claims.registry import CLAIMS, TRAINED
from lnrecency.report import regenerate


def test_the_parser_lists_equal_the_registry():
    assert choices.CLAIM_IDS == tuple(CLAIMS)
    assert choices.TRAINED_CLAIM_IDS == tuple(TRAINED)


def test_the_id_block_is_what_regenerate_writes():
    text = regenerate.CHOICES.read_text(encoding="utf-8")
    assert regenerate.choices_text(text) == text, "run: python3 -m lnrecency.report.regenerate"


def test_a_stale_list_is_detected(monkeypatch):
    text = regenerate.CHOICES.read_text(encoding="utf-8")
    stale = text.replace('("T1", ', '("T1", "X9", ', 1)  # an id the registry does not hold
    assert stale != text and regenerate.choices_text(stale) != stale


def test_id_ranges_round_trip():
    assert choices.id_ranges(("C2", "C3", "C4", "P1", "S2.0", "S2.1", "S3.1")) == "C2..C4, P1, S2.0..S2.1, S3.1"


def test_verify_help_names_every_claim(capsys):
    import pytest

    from lnrecency.cli.app import main

    with pytest.raises(SystemExit):
        main(["verify", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert choices.id_ranges(choices.CLAIM_IDS) in out and "S2.0" in out
