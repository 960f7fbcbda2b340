"""Every claim's statements and their sources, as a file shipped with the package (lnrecency/data/statements.json)
so that ``lnrecency verify --list`` shows them without evaluating anything. Written with the README's headline
(``python3 -m lnrecency.report.readme --trained``, which evaluates every claim); a test checks it names every
registered claim."""
from __future__ import annotations

import json
from pathlib import Path

from lnrecency.inference.verdicts import ClaimResult

__all__ = ["PATH", "statements", "write_statements"]

PATH = Path(__file__).resolve().parents[1] / "data" / "statements.json"


def statements(path: Path = PATH) -> dict[str, list[tuple[str, str]]]:
    """Claim id -> [(statement, source group)], in report order ({} when the file is missing)."""
    from lnrecency.files.readers import read_json

    if not path.is_file():
        return {}
    data = read_json(path, what="the claims' statements", max_bytes=2**20, max_depth=6)
    return {cid: [(s["statement"], s["source"]) for s in rows] for cid, rows in data["claims"].items()}


def write_statements(results: list[ClaimResult], path: Path = PATH) -> Path:
    """Write the statements of ``results`` (every claim, not-run rows included: they carry the statement)."""
    from lnrecency.files.atomic import atomic_write_text
    from lnrecency.report.headline import source_of

    claims: dict[str, list[dict]] = {}
    for r in results:
        text = " ".join(r.statement.split())
        rows = claims.setdefault(r.id, [])
        if all(s["statement"] != text for s in rows):
            rows.append({"statement": text, "source": source_of(r)})
    return atomic_write_text(path, json.dumps({"claims": claims}, indent=1, ensure_ascii=False) + "\n")
