"""Claims on trained models decided from the per-run rows their experiments publish in docs/ (issue 85, item 2).

A claim module whose experiment publishes its runs names the file (``PUBLISHED``, e.g. "thesis_text_v4.json") and
re-decides its rows from that file alone by the plan's own rule (``redecide(snapshot)`` -> [(claim, statement,
verdict)]). :func:`redecided` reads the file through the one validated JSON reader, runs the rule and labels each row
by whose statement it is (:func:`lnrecency.claims.catalog.label`), so that a fresh report, with nothing cached and
without the models extra, decides these claims as the tests do (tests/experiments/test_v*_published.py). Claims whose
experiments publish no per-run rows (TM1-TM5, S2.x, S3.x) have no ``PUBLISHED``: they need their experiments. R1's
"runs" are its eight probe runs (two models, four conditions), each with its per-window slopes.
"""
from __future__ import annotations

import functools
import importlib
from dataclasses import dataclass
from pathlib import Path

from lnrecency.inference.evidence import Evidence, record

__all__ = ["Published", "PublishedRuns", "redecided", "DOCS", "publishes", "plan_rows"]

#: where the published snapshots are (a source checkout; an installed wheel has none: nothing is decided from them)
DOCS = Path(__file__).resolve().parents[2] / "docs"
#: the largest snapshot read (the largest published one, plan v1's with its trajectories, is about 1.3 MB)
MAX_BYTES = 32 * 2**20


@dataclass(frozen=True)
class Published:
    """A claim's rows re-decided from a published snapshot: the file (relative to the repository), the runs it holds,
    the command that retrains them, and each row's (statement, verdict) in the module's row order."""

    file: str
    runs: int
    command: str
    rows: tuple  # ((statement, verdict), ...)
    intervals: tuple = ()  # each row's interval (low, high) as the rule gives it, or None where it decides nothing

    @property
    def note(self) -> str:
        return (f"verdict and interval re-derived here from the {self.runs} runs published in {self.file} by the "
                f"plan's own rule (the rest of the row as docs/verdicts.json keeps it); retrain with "
                f"`lnrecency {self.command}`")


@record
class PublishedRuns(Evidence):
    """The evidence of a row decided from published per-run rows: the file, how many runs it holds, the command that
    retrains them, and the rule's verdict (the row's own, checked equal before the row is used)."""

    file: str
    runs: int
    command: str
    redecided: str


def plan_rows(decided: dict, pairs, label=None) -> list[tuple]:
    """The rows a module's ``redecide`` returns: for each (claim, statement, test key) of ``pairs``, the claim, the
    statement, the verdict of ``decided[key]`` (a plan's decide result: key -> (SeedDecision or None, why)) as
    ``label(key, decision)`` reads it (default the decision's own verdict; "inconclusive" when undecided) and its
    interval (None when undecided)."""
    out = []
    for cid, statement, key in pairs:
        d = decided[key][0]
        verdict = label(key, d) if label is not None else ("inconclusive" if d is None else d.verdict)
        out.append((cid, statement, verdict, None if d is None else tuple(float(x) for x in d.test.interval())))
    return out


def _module(cid: str):
    from lnrecency.claims.catalog import declared

    return importlib.import_module(f"lnrecency.claims.{declared(cid).module}")


def publishes(cid: str) -> bool:
    """Whether ``cid``'s experiment publishes the per-run rows its verdict is re-decided from (the file present)."""
    name = getattr(_module(cid), "PUBLISHED", None)
    return name is not None and (DOCS / name).is_file()


def _count(runs) -> int:
    if isinstance(runs, dict):
        return sum(len(v) for v in runs.values() if isinstance(v, list))
    return len(runs) if isinstance(runs, list) else 0


@functools.lru_cache(maxsize=None)
def _decided(module: str, name: str) -> tuple[int, tuple]:
    from lnrecency.files.readers import read_json

    path = DOCS / name
    snap = read_json(path, what=f"the published runs docs/{name}", max_bytes=MAX_BYTES, max_depth=16)
    if not isinstance(snap, dict) or "runs" not in snap:
        raise ValueError(f"docs/{name} holds no per-run rows (a JSON object with \"runs\")")
    try:
        rows = importlib.import_module(module).redecide(snap)
    except (KeyError, TypeError, IndexError) as exc:
        raise ValueError(f"docs/{name}: its per-run rows cannot be read by the plan's rule ({type(exc).__name__}: "
                         f"{str(exc)[:120]})") from None
    return _count(snap["runs"]), tuple(rows)


def redecided(cid: str) -> Published | None:
    """``cid``'s rows re-decided from its experiment's published runs; None where it publishes none. ValueError
    naming the file when the file is damaged or its rows cannot be read by the rule."""
    from lnrecency.claims.catalog import declared, label

    mod = _module(cid)
    name = getattr(mod, "PUBLISHED", None)
    if name is None or not (DOCS / name).is_file():
        return None
    runs, rows = _decided(mod.__name__, name)
    mine = tuple((s, label(cid, s, v)) for c, s, v, _ in rows if c == cid)
    intervals = tuple(iv for c, _, _, iv in rows if c == cid)
    return Published(f"docs/{name}", runs, declared(cid).command or "", mine, intervals)
