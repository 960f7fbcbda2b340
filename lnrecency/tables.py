"""A report table (title, caption, columns, rows, notes) and its Markdown, CSV, LaTeX and JSON forms.

Cells are numbers (int/float; NaN and None print as empty / "—", infinities as "inf"), strings or bools. CSV and JSON keep
every float at full precision (``repr``); Markdown and LaTeX round to ``digits`` significant digits.
JSON schema of one table file::

    {"name": str, "title": str, "caption": str, "columns": [str, ...],
     "rows": [[cell, ...], ...], "notes": [str, ...]}      # cell: number | string | bool | null
"""
from __future__ import annotations

import csv
import io
import json
import math
import numbers
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from lnrecency.atomic import atomic_write_text

__all__ = ["FORMATS", "Table", "parse_formats"]

FORMATS = ("md", "csv", "tex", "json")


def parse_formats(text: str | Iterable[str]) -> tuple[str, ...]:
    """'md,csv' -> ('md', 'csv'); ValueError naming the unknown format."""
    items = [t.strip() for t in (text.split(",") if isinstance(text, str) else text)]
    items = [t for t in items if t]
    bad = [t for t in items if t not in FORMATS]
    if bad or not items:
        raise ValueError(f"format must be a comma-separated list of {', '.join(FORMATS)}; got {text!r}")
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
        return "—"
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
    rows: tuple[tuple[Any, ...], ...]
    notes: tuple[str, ...] = field(default_factory=tuple)
    digits: int = 6

    def __post_init__(self) -> None:
        object.__setattr__(self, "columns", tuple(self.columns))
        object.__setattr__(self, "rows", tuple(tuple(r) for r in self.rows))
        object.__setattr__(self, "notes", tuple(self.notes))
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

    def to_markdown(self) -> str:
        head = "| " + " | ".join(c.replace("|", "\\|") for c in self.columns) + " |"
        rule = "|" + "|".join("---" for _ in self.columns) + "|"
        body = ["| " + " | ".join(_fmt(c, self.digits).replace("|", "\\|") for c in r) + " |"
                for r in self.rows]
        notes = [f"- {n}" for n in self.notes]
        return "\n".join([f"### {self.title}", "", self.caption, "", head, rule, *body, "",
                          *notes, ""]).rstrip("\n") + "\n"

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
