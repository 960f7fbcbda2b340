"""A report table (title, caption, columns, rows, notes) and its Markdown, CSV, LaTeX and JSON forms.

Cells are numbers (int/float; None and NaN mean "undefined by design" and print as "n/a" in Markdown and
LaTeX, empty in CSV and null in JSON; infinities as "inf"), strings or bools. CSV and JSON keep every column
and every float at full precision (``repr``); Markdown and LaTeX round to ``digits`` significant digits.
The Markdown view is for a person: at most :data:`MD_MAX_COLUMNS` columns per table (a wider table is shown
as several views, each repeating the first ``key`` columns), without the ``md_hide`` columns, and with each
long entry of an ``md_ids`` column (by default "setting") replaced by its label "setting 1", "setting 2", .. (a legend
follows; never "S1", which a reader would take for a claim ID such as S2.1),
spelled out once in a table of settings below.
JSON schema of one table file::

    {"name": str, "title": str, "caption": str, "columns": [str, ...],
     "rows": [[cell, ...], ...], "notes": [str, ...]}      # cell: number | string | bool | null
"""
from __future__ import annotations

import csv
import functools
import io
import json
import math
import numbers
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from lnrecency.files.atomic import atomic_write_text

__all__ = ["FORMATS", "MD_MAX_COLUMNS", "REPORT_FORMATS", "Table", "parse_formats"]

FORMATS = ("md", "csv", "tex", "json")
#: the report's formats: the table formats, and html (one self-contained page, lnrecency.report.html)
REPORT_FORMATS = FORMATS + ("html",)
#: widest Markdown view (issue 32: a person reads at most about 12 columns)
MD_MAX_COLUMNS = 12
NA = "n/a"
#: an ``md_ids`` entry longer than this is cited by its label in the Markdown view
ID_OVER = 32


def parse_formats(text: str | Iterable[str], allowed: tuple[str, ...] = FORMATS) -> tuple[str, ...]:
    """'md,csv' -> ('md', 'csv'); ValueError naming the unknown format (``allowed``: the formats accepted)."""
    items = [t.strip() for t in (text.split(",") if isinstance(text, str) else text)]
    items = [t for t in items if t]
    bad = [t for t in items if t not in allowed]
    if bad or not items:
        raise ValueError(f"format must be a comma-separated list of {', '.join(allowed)}; got {text!r}")
    return tuple(dict.fromkeys(items))


def _plain(x: Any) -> Any:
    """A JSON/CSV-friendly cell: Python int/float/str/bool/None (NaN -> None, +-inf -> "inf"/"-inf")."""
    if x is None or isinstance(x, (str, bool)):
        return x
    if type(x).__name__ == "bool_":
        return bool(x)
    if isinstance(x, numbers.Integral):
        return int(x)
    try:
        f = float(x)
    except (TypeError, ValueError):
        return str(x)
    if math.isnan(f):
        return None
    return f if math.isfinite(f) else ("inf" if f > 0 else "-inf")


def _fmt(x: Any, digits: int) -> str:
    x = _plain(x)
    if x is None:
        return NA
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, int):
        return str(x)
    if isinstance(x, float):
        return f"{x:.{digits}g}"
    return str(x)


_TEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
        "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
        "±": r"$\pm$", "—": "--", "≥": r"$\geq$", "≤": r"$\leq$", "→": r"$\to$", "∞": r"$\infty$",
        "λ": r"$\lambda$", "α": r"$\alpha$", "γ": r"$\gamma$", "√": r"$\surd$", "<": r"$<$", ">": r"$>$",
        "|": r"$|$"}


def _tex(s: str) -> str:
    return "".join(_TEX.get(c, c) for c in s)


@dataclass(frozen=True)
class Table:
    """One table of the report; ``name`` is the file stem (``name.md``, ``name.csv``, ...)."""

    name: str
    title: str
    caption: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str | float | bool | None, ...], ...]  # cells: text, numbers (int, float, Fraction), None
    notes: tuple[str, ...] = field(default_factory=tuple)
    digits: int = 6
    key: int = 1  # leading columns that identify a row, repeated in each Markdown view
    md_hide: tuple[str, ...] = ()  # columns kept in CSV/JSON/LaTeX but not in the Markdown view
    md_ids: tuple[str, ...] = ("setting",)  # columns whose long entries the Markdown view cites by id
    md_groups: tuple[tuple[str, ...], ...] = ()  # explicit Markdown views (each after the key columns)
    md_once: tuple[str, ...] = ()  # columns whose value, repeated on the next row, reads "(as above)" when shown

    def __post_init__(self) -> None:
        object.__setattr__(self, "columns", tuple(self.columns))
        object.__setattr__(self, "rows", tuple(tuple(r) for r in self.rows))
        object.__setattr__(self, "notes", tuple(self.notes))
        object.__setattr__(self, "md_hide", tuple(self.md_hide))
        object.__setattr__(self, "md_ids", tuple(c for c in self.md_ids if c in self.columns))
        object.__setattr__(self, "md_groups", tuple(tuple(g) for g in self.md_groups))
        if any(c not in self.columns for g in self.md_groups for c in g) or any(
                self.key + len(g) > MD_MAX_COLUMNS for g in self.md_groups):
            raise ValueError(f"md_groups must name columns, at most {MD_MAX_COLUMNS} - key per group; got "
                             f"{self.md_groups}")
        if not 0 <= self.key < MD_MAX_COLUMNS or any(c not in self.columns for c in self.md_hide):
            raise ValueError(f"key must be in [0, {MD_MAX_COLUMNS}) and md_hide must name columns; got key="
                             f"{self.key}, md_hide={self.md_hide}")
        if len(set(self.columns)) != len(self.columns):
            raise ValueError(f"columns must be distinct; got {self.columns}")
        for k, row in enumerate(self.rows):
            if len(row) != len(self.columns):
                raise ValueError(f"rows[{k}] has {len(row)} cells; the table has {len(self.columns)} "
                                 f"columns {self.columns}")

    def column(self, name: str) -> list[Any]:
        """The (plain) values of one column."""
        if name not in self.columns:
            raise ValueError(f"column must be one of {self.columns}; got {name!r}")
        k = self.columns.index(name)
        return [_plain(r[k]) for r in self.rows]

    def markdown_views(self) -> list[list[int]]:
        """Column indices of each Markdown view: the shown columns (not ``md_hide``) in groups of at most
        :data:`MD_MAX_COLUMNS`, each group led by the first ``key`` shown columns."""
        shown = [k for k, c in enumerate(self.columns) if c not in self.md_hide]
        keys, rest = shown[:self.key], shown[self.key:]
        if self.md_groups:
            return [keys + [self.columns.index(c) for c in g] for g in self.md_groups]
        step = MD_MAX_COLUMNS - len(keys)
        return [keys + rest[i:i + step] for i in range(0, max(len(rest), 1), step)]

    @functools.cached_property
    def _setting_labels(self) -> dict[str, str]:
        """text -> "setting 1", "setting 2", ... for the long ``md_ids`` entries, in order of first appearance."""
        idx = [self.columns.index(c) for c in self.md_ids]
        out: dict[str, str] = {}
        for r in self.rows:
            for k in idx:
                text = _fmt(r[k], self.digits)
                if len(text) > ID_OVER and text not in out:
                    out[text] = f"setting {len(out) + 1}"
        return out

    def cited_settings(self) -> dict[str, str]:
        """{label: text} of the long ``md_ids`` entries ("setting 1", "setting 2", ... in order of first appearance: a
        table's legend reads short names, never hashes)."""
        return {label: text for text, label in self._setting_labels.items()}

    def shown(self, k: int, x: Any) -> str:
        """Cell ``x`` of column ``k`` as a person reads it (Markdown, HTML): rounded, "n/a", a long ``md_ids``
        entry as its label in the table's legend."""
        text = _fmt(x, self.digits)
        if self.columns[k] in self.md_ids and len(text) > ID_OVER:
            text = self._setting_labels[text]
        return text

    def shown_rows(self) -> list[list[str]]:
        """Every row as shown (:meth:`shown`), an ``md_once`` cell equal to the one above it as "(as above)"."""
        out, previous = [], None
        for r in self.rows:
            row = [self.shown(k, x) for k, x in enumerate(r)]
            if previous is not None:
                for k, c in enumerate(self.columns):
                    if c in self.md_once and r[k] == previous[k]:
                        row[k] = "(as above)"
            out.append(row)
            previous = r
        return out

    def _markdown_grid(self, cols: list[int]) -> list[str]:
        head = "| " + " | ".join(self.columns[k].replace("|", "\\|") for k in cols) + " |"
        rule = "|" + "|".join("---" for _ in cols) + "|"
        return [head, rule, *("| " + " | ".join(r[k].replace("|", "\\|").replace("\n", " ") for k in cols) + " |"
                              for r in self.shown_rows())]

    def to_markdown(self) -> str:
        views = self.markdown_views()
        body: list[str] = []
        for v, cols in enumerate(views, 1):
            if len(views) > 1:
                body += [f"*View {v} of {len(views)}* (the CSV and JSON hold every column in one table)", ""]
            body += self._markdown_grid(cols) + [""]
        cited = self.cited_settings()
        if cited:
            body += ["Settings cited above by label:", "", "| label | setting |", "|---|---|",
                     *("| " + k + " | " + v.replace("|", "\\|") + " |" for k, v in cited.items()), ""]
        notes = [f"- {n}" for n in self.notes]
        return "\n".join([f"### {self.title}", "", self.caption, "", *body, *notes, ""]).rstrip("\n") + "\n"

    def to_csv(self) -> str:
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(self.columns)
        for r in self.rows:
            w.writerow(["" if v is None else (repr(v) if isinstance(v, float) else v)
                        for v in map(_plain, r)])
        return buf.getvalue()

    def _numeric(self, k: int) -> bool:
        values = [_plain(r[k]) for r in self.rows]
        return all(v is None or (isinstance(v, (int, float)) and not isinstance(v, bool)) for v in values)

    def to_latex(self) -> str:
        spec = "".join("r" if self._numeric(k) else "l" for k in range(len(self.columns)))
        lines = [rf"% lnrecency report table {self.name}: needs \usepackage{{booktabs}}; for a wide table wrap",
                 r"% the tabular in \resizebox{\linewidth}{!}{...} (\usepackage{graphicx}).",
                 r"\begin{table}[ht]", r"\centering", r"\small",
                 rf"\caption{{{_tex(self.title)}. {_tex(self.caption)}}}",
                 rf"\label{{tab:{self.name}}}", rf"\begin{{tabular}}{{{spec}}}", r"\toprule",
                 " & ".join(_tex(c) for c in self.columns) + r" \\", r"\midrule"]
        lines += [" & ".join(_tex(_fmt(c, self.digits)) for c in r) + r" \\" for r in self.rows]
        lines += [r"\bottomrule", r"\end{tabular}"]
        if self.notes:
            lines.append(r"\par\smallskip\footnotesize " + " ".join(_tex(n) for n in self.notes))
        lines.append(r"\end{table}")
        return "\n".join(lines) + "\n"

    def to_json_obj(self) -> dict:
        return {"name": self.name, "title": self.title, "caption": self.caption,
                "columns": list(self.columns), "rows": [[_plain(c) for c in r] for r in self.rows],
                "notes": list(self.notes)}

    def to_json(self) -> str:
        obj = self.to_json_obj()
        dump = lambda v: json.dumps(v, ensure_ascii=False, allow_nan=False)  # noqa: E731
        rows = ",\n".join("  " + dump(r) for r in obj["rows"])
        head = ",\n".join(f" {dump(k)}: {dump(v)}" for k, v in obj.items() if k != "rows")
        return "{\n" + head + ',\n "rows": [\n' + rows + "\n ]\n}\n"

    def render(self, fmt: str) -> str:
        writers = {"md": self.to_markdown, "csv": self.to_csv, "tex": self.to_latex, "json": self.to_json}
        if fmt not in writers:
            raise ValueError(f"fmt must be one of {FORMATS}; got {fmt!r}")
        return writers[fmt]()

    def write(self, out_dir: str | Path, formats: Iterable[str] = FORMATS) -> list[Path]:
        """Write ``out_dir/name.<fmt>`` for each format, each file atomically; return the paths."""
        out = Path(out_dir)
        return [atomic_write_text(out / f"{self.name}.{fmt}", self.render(fmt))
                for fmt in parse_formats(formats)]

    def _repr_markdown_(self) -> str:  # Jupyter display
        return self.to_markdown()
