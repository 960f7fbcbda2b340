"""The report as one self-contained HTML page (``index.html``): the headline first (verdict counts, the
findings that matter), then the verdict table, every table (sortable: click a column head) and every
figure, embedded as a PNG data URI. Nothing is fetched: no script, style or image comes from outside the
file. Numbers are formatted by :meth:`lnrecency.files.table_record.Table.shown`, as in the Markdown (same digits, "n/a",
settings cited by label), so the page and ``index.md`` show the same numbers.

A browser test (tests/test_report_html.py) opens the page in headless Chromium and checks that it loads
with no console error, that every image decodes, and writes a screenshot.
"""
from __future__ import annotations

import base64
import html
import re
from pathlib import Path

from lnrecency.files.table_record import Table
from lnrecency.inference.evidence import VERDICTS
from lnrecency.report.headline import (
    MEASURED,
    Finding,
    answer,
    claim_tables,
    counts_by_source,
    counts_line,
    findings,
    not_run_claims,
    words_line,
)

__all__ = ["render_html"]

STYLE = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;max-width:72rem;margin:1.5rem auto;
padding:0 1rem;line-height:1.45;color:#1b1b1b}
h1{font-size:1.6rem}h2{margin-top:2rem;border-bottom:1px solid #ccc}h3{font-size:1.05rem}
table{border-collapse:collapse;font-size:.85rem;margin:.5rem 0 1rem}
th,td{border:1px solid #d0d0d0;padding:.2rem .4rem;vertical-align:top}
th{background:#f2f2f2;cursor:pointer;position:sticky;top:0}th.sorted-asc::after{content:" \\25B2"}
th.sorted-desc::after{content:" \\25BC"}
.v-confirmed,.v-reproduced{color:#11661f;font-weight:600}.v-refuted,.v-the{color:#a3120f;font-weight:600}
.v-inconclusive,.v-not{color:#8a5a00;font-weight:600}
.wide{overflow-x:auto}figure{margin:1rem 0}figure img{max-width:100%;height:auto;border:1px solid #eee}
figcaption{font-size:.85rem;color:#333}code{background:#f4f4f4;padding:0 .2rem}
li{margin:.3rem 0}.counts{font-size:1.1rem}
details{margin:.4rem 0}summary{cursor:pointer}summary h2{display:inline-block;margin:1rem 0 .3rem;border:0}
nav.toc{background:#f7f7f7;border:1px solid #ddd;padding:.4rem .8rem;margin:1rem 0}nav.toc ul{margin:.2rem 0}
"""

# Sort a table by the clicked column: numbers numerically (n/a last), text alphabetically. A link to a folded
# section (the contents, or a URL's #fragment) opens it.
SCRIPT = """
function openTarget() {
  var el = location.hash ? document.getElementById(location.hash.slice(1)) : null;
  if (el && el.tagName === 'DETAILS') { el.open = true; }
}
window.addEventListener('hashchange', openTarget);
openTarget();
document.querySelectorAll('table.sortable').forEach(function (table) {
  table.querySelectorAll('th').forEach(function (th, col) {
    th.addEventListener('click', function () {
      var body = table.tBodies[0];
      var asc = !th.classList.contains('sorted-asc');
      table.querySelectorAll('th').forEach(function (h) { h.classList.remove('sorted-asc', 'sorted-desc'); });
      th.classList.add(asc ? 'sorted-asc' : 'sorted-desc');
      var rows = Array.prototype.slice.call(body.rows);
      var key = function (row) {
        var text = row.cells[col].textContent.trim();
        var num = parseFloat(text);
        return isNaN(num) || !/^[-+]?[0-9.]/.test(text) ? [1, text] : [0, num];
      };
      rows.sort(function (a, b) {
        var x = key(a), y = key(b);
        if (x[0] !== y[0]) { return x[0] - y[0]; }
        var c = x[0] === 0 ? x[1] - y[1] : String(x[1]).localeCompare(String(y[1]));
        return asc ? c : -c;
      });
      rows.forEach(function (row) { body.appendChild(row); });
    });
  });
});
"""


def inline(text: str) -> str:
    """Escape ``text`` and render its Markdown `code`, **bold** and *italic* spans (an asterisk between words or
    beside a space, as in 2 * n or x*y, stays an asterisk)."""
    out = html.escape(str(text), quote=False)
    out = re.sub(r"`([^`]+)`", r"<code>\1</code>", out)
    out = re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", out)
    return re.sub(r"(?<![\w*])\*([^*\s](?:[^*]*[^*\s])?)\*(?![\w*])", r"<em>\1</em>", out)


def _verdict_class(word: str) -> str:
    return "v-" + word.split()[0]


def table_html(table: Table) -> str:
    """One table, all its columns but ``md_hide`` (a scrolling box), settings cited by label as in Markdown."""
    cols = [k for k, c in enumerate(table.columns) if c not in table.md_hide]

    def cell(k: int, text: str) -> str:
        cls = f' class="{_verdict_class(text)}"' if table.columns[k] == "verdict" else ""
        return f"<td{cls}>{html.escape(text)}</td>"

    head = "".join(f"<th>{html.escape(table.columns[k])}</th>" for k in cols)
    body = "".join("<tr>" + "".join(cell(k, r[k]) for k in cols) + "</tr>" for r in table.shown_rows())
    parts = [f'<h3 id="table-{table.name}">{html.escape(table.title)}</h3>', f"<p>{inline(table.caption)}</p>",
             f'<div class="wide"><table class="sortable"><thead><tr>{head}</tr></thead><tbody>{body}</tbody>'
             f"</table></div>"]
    cited = table.cited_settings()
    if cited:
        rows = "".join(f"<tr><td>{k}</td><td>{html.escape(v)}</td></tr>" for k, v in cited.items())
        parts.append(f"<details open><summary>settings cited by label ({len(cited)})</summary><table><thead><tr>"
                     f"<th>id</th><th>setting</th></tr></thead><tbody>{rows}</tbody></table></details>")
    if table.notes:
        parts.append("<ul>" + "".join(f"<li>{inline(n)}</li>" for n in table.notes) + "</ul>")
    return "\n".join(parts)


def _finding_html(f: Finding, tables: set[str]) -> str:
    verdict = ("split: " if len(f.verdicts) > 1 else "") + ", ".join(
        f'<span class="{_verdict_class(v)}">{html.escape(v)}</span>' for v in f.verdicts)
    stem = f.evidence[:-3] if f.evidence.endswith(".md") else None
    cite = (f'(<a href="#table-{stem}">evidence</a>)' if stem in tables
            else f"(evidence: <code>{html.escape(f.evidence)}</code> in the source tree)")

    def statement(s) -> str:
        words = ", ".join(f'<span class="{_verdict_class(w)}">{html.escape(w)}</span>'
                          + (f" ({n} rows)" if n > 1 else "") for w, n in s.verdicts)
        return f"<em>{html.escape(s.text)}</em> ({html.escape(s.source)}) <strong>{words}:</strong> {inline(s.lead)}"

    head, *rest = f.statements
    more = "<ul>" + "".join(f"<li>{statement(s)}</li>" for s in rest) + "</ul>" if rest else ""
    return f"<li><strong>{html.escape(f.claim)}: {verdict}.</strong> {statement(head)} {cite}{more}</li>"


def _sources_html(results: list) -> str:
    groups = counts_by_source(results)
    words = [v for v in VERDICTS if any(c.get(v) for _, _, c in groups)]
    head = "".join(f"<th>{html.escape(w)}</th>" for w in ["statements from", "claims", *words])
    body = "".join(f"<tr><td>{html.escape(g)}</td><td>{n}</td>" + "".join(f"<td>{c.get(w, 0)}</td>" for w in words)
                   + "</tr>" for g, n, c in groups)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _not_run_html(results: list) -> str:
    missing = not_run_claims(results)
    if not missing:
        return "<p>Every registered claim was evaluated.</p>"
    n = sum(len(v) for v in missing.values())
    items = "; ".join(f"{html.escape(', '.join(ids))} (<code>{html.escape(cmd)}</code>)"
                      for cmd, ids in missing.items())
    return (f"<p><strong>Not run here, not counted: {n} claims</strong> on trained models and real text: {items}. "
            f"Each needs <code>python3 -m pip install -e '.[models]'</code> and minutes of training; the report then "
            f"reads the cached results.</p>")


def _provenance_html(text: str) -> str:
    """The provenance lines (lnrecency.report.build.provenance_lines): paragraphs, and its Markdown table as one."""
    out, rows = [], []
    for line in text.splitlines() + [""]:
        if line.startswith("|"):
            if not set(line) <= set("|-: "):
                rows.append([c.strip() for c in line.strip("|").split("|")])
            continue
        if rows:
            head, *body = rows
            out.append("<table><thead><tr>" + "".join(f"<th>{inline(c)}</th>" for c in head) + "</tr></thead><tbody>"
                       + "".join("<tr>" + "".join(f"<td>{inline(c)}</td>" for c in r) + "</tr>" for r in body)
                       + "</tbody></table>")
            rows = []
        if line.strip():
            out.append(f"<p>{inline(line)}</p>")
    return "".join(out)


def _folded(parts: list[str]) -> list[str]:
    """The page below the answer as folded sections (``<details>``, closed), with a table of contents above them
    whose links open the section they point to."""
    import re

    heads = [q for q, p in enumerate(parts) if p.startswith("<h2>")]
    if not heads:
        return parts
    out, toc = parts[:heads[0]], []
    for q, start in enumerate(heads):
        stop = heads[q + 1] if q + 1 < len(heads) else len(parts)
        title = re.sub(r"<[^>]+>", "", parts[start])
        slug = "section-" + re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")
        toc.append(f'<li><a href="#{slug}">{title}</a></li>')
        out.append(f'<details id="{slug}"><summary>{parts[start]}</summary>' + "\n".join(parts[start + 1:stop])
                   + "</details>")
    return out[:heads[0]] + ['<nav class="toc"><strong>Contents</strong><ul>' + "".join(toc) + "</ul></nav>"] \
        + out[heads[0]:]


def render_html(*, title: str, results: list, tables: list[Table], figures: list[tuple], out: Path,
                settings_line: str, how_to_read: str, quick: bool, provenance: str = "") -> str:
    """The page. ``figures``: (title, caption, png file name in ``out``, or None for figures not run: their
    caption in words); each PNG is embedded."""
    names = {t.name for t in tables}
    items = findings(results, claim_tables(results))
    settled = [f for f in items if f.verdicts[0] in ("confirmed", "reproduced")]
    open_ = [f for f in items if f not in settled]
    first, *questions = answer(results)
    said = " ".join([first, *questions])
    parts = [f"<h1>{html.escape(title)}</h1>",
             f'<p class="answer"><strong>The answer.</strong> {inline(first)}</p>',
             *([f'<ul class="answer">{"".join(f"<li>{inline(q)}</li>" for q in questions)}</ul>'] if questions
               else []),
             *([f'<p class="words">{inline(words_line(said))}</p>'] if words_line(said) else []),
             f'<p class="counts">{inline(counts_line(results, quick=quick))} By the source of the statement each '
             f"verdict decides:</p>", _sources_html(results), _not_run_html(results),
             "<p>Each verdict comes with its reason; <code>lnrecency verify --claim ID</code> prints it whole "
             "(<code>verify --list</code>: every claim with its statement and source). Trained-model verdicts are "
             "decided together at family-wise rate 0.05 (Holm).</p>"]
    if open_:
        parts += ["<h2>What fails, is not reproduced, or is not settled</h2>",
                  "<ul>" + "".join(_finding_html(f, names) for f in open_) + "</ul>"]
    parts += ["<h2>What holds, and where</h2>",
              "<ul>" + "".join(_finding_html(f, names) for f in settled + [MEASURED]) + "</ul>"]
    verdicts = [t for t in tables if t.name == "verdicts"]
    parts += ["<h2>Verdicts</h2>", *(table_html(t) for t in verdicts),
              "<h2>What this report read</h2>", _provenance_html(provenance),
              "<h2>Settings of this report</h2>", f"<p>{inline(settings_line)}</p>", f"<p>{inline(how_to_read)}</p>",
              "<h2>Tables</h2>", *(table_html(t) for t in tables if t.name != "verdicts"), "<h2>Figures</h2>"]
    previous = None
    for fig_title, caption, png in figures:
        if png is None:  # not run: said in words, with its command (no picture)
            parts.append(f'<figure class="not-run"><figcaption><strong>{html.escape(fig_title)}</strong>'
                         f"</figcaption><p>{inline(caption)}</p></figure>")
            previous = None
            continue
        data = base64.b64encode((out / png).read_bytes()).decode("ascii")
        cap = inline(caption) if caption != previous else "(Caption as above.)"
        previous = caption
        parts.append(f'<figure id="figure-{html.escape(Path(png).stem)}"><figcaption><strong>'
                     f"{html.escape(fig_title)}</strong></figcaption>"
                     f'<img alt="{html.escape(fig_title)}" src="data:image/png;base64,{data}">'
                     f"<figcaption>{cap}</figcaption></figure>")
    body = "\n".join(_folded(parts))
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{html.escape(title)}</title><style>{STYLE}</style></head>\n<body>\n{body}\n"
            f"<script>{SCRIPT}</script>\n</body></html>\n")
