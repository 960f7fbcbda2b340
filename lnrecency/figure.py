"""A rendered figure: a matplotlib Figure with its file stem, title and caption, written atomically.

Kept below the experiments and the report (it imports no matplotlib itself), so that every layer that makes
figures (reproduce, sweep, the report) uses the one record without importing the report.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from lnrecency.atomic import atomic_save

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["ReportFigure"]

# PDF/PNG metadata without dates: the same seed gives the same bytes.
_META = {"pdf": {"CreationDate": None, "ModDate": None}, "png": {}}


@dataclass
class ReportFigure:
    """A figure with its file stem, title and caption (the caption says what it shows)."""

    name: str
    title: str
    caption: str
    figure: Figure
    tight: bool = True  # bbox_inches="tight" when saving

    def write(self, out_dir: str | Path, formats: tuple[str, ...] = ("png", "pdf")) -> list[Path]:
        """Write ``name.png`` / ``name.pdf`` atomically."""
        paths = []
        for fmt in formats:
            path = Path(out_dir) / f"{self.name}.{fmt}"
            atomic_save(path, lambda tmp, f=fmt: self.figure.savefig(
                tmp, format=f, dpi=110, metadata=_META[f], bbox_inches="tight" if self.tight else None))
            paths.append(path)
        return paths
