"""The report's HTML renders the Markdown spans its sentences use (issue 66: the glossary line showed literal
asterisks): `code`, **bold**, *italic*; an asterisk in arithmetic stays one."""
from __future__ import annotations

from lnrecency.report.html import inline


def test_italic_bold_and_code_spans_render_and_arithmetic_stays():
    line = "Words: *d*: the width; *lam*: the scale; **confirmed**; `verify --claim T1`; 2 * n; x*y; a * b *c"
    out = inline(line)
    assert "<em>d</em>" in out and "<em>lam</em>" in out and "<strong>confirmed</strong>" in out
    assert "<code>verify --claim T1</code>" in out
    assert "2 * n" in out and "x*y" in out and "*" not in out.replace("2 * n", "").replace("x*y", "").replace(
        "a * b *c", "")
