"""Qualifiers for the rows on trained models kept in docs/verdicts.json (issue 75), from the published snapshots of
the runs that decided them (docs/thesis_text.json, thesis_text_v2.json ... v5, wu_icl.json, pretrained.json: typed
decisions, never a finding's prose), by the same functions the claim modules call
(:mod:`lnrecency.claims.trained_qualifiers`):

    python3 -m lnrecency.report.words.requalify [docs]

rewrites each such row's ``qualifiers`` field in docs/verdicts.json; a row whose snapshot is missing keeps what it
has. Then ``python3 -m lnrecency.report.regenerate`` renders the README and the pages from them.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from lnrecency.claims.trained_qualifiers import PLAN_WORDS, SEED_WORDS, matched_stage, plan_qualifiers, row_qualifiers
from lnrecency.claims.trained_rules import MIN_LEARNED, plan_levels
from lnrecency.experiments.plans.declared import plans, test_of

__all__ = ["decisions", "qualify_rows", "main"]

ROOT = Path(__file__).resolve().parents[3]


def _read(path: Path) -> dict | None:
    from lnrecency.files.readers import read_json

    return read_json(path, what=f"the snapshot {path.name}", max_bytes=64 * 2**20, max_depth=16) \
        if path.is_file() else None


def decisions(docs: Path) -> tuple[dict, dict]:
    """(test -> decision JSON or None, test -> extra keyword arguments of plan_qualifiers) from the snapshots; each
    decided test's Holm level in its plan's families (:func:`lnrecency.claims.trained_rules.plan_levels`)."""
    out: dict = {}
    extra: dict = {}
    v1 = _read(docs / "thesis_text.json")
    for r in (v1 or {}).get("verdicts", []):
        ev = r.get("evidence") or {}
        out[ev.get("hypothesis")] = ev.get("decision") or None
    for name in ("thesis_text_v2.json", "thesis_text_v3.json", "thesis_text_v4.json", "thesis_text_v5.json",
                 "wu_icl.json"):
        snap = _read(docs / name) or {}
        tests = snap.get("tests") if isinstance(snap, dict) else None
        if not isinstance(tests or {}, dict):
            raise ValueError(f"{name}: its tests must be an object of test -> decision; got {type(tests).__name__}")
        for key, t in (tests or {}).items():
            if not isinstance(t, dict):
                raise ValueError(f"{name}: test {key!r} must be an object (its decision); got {type(t).__name__}")
            out[key] = t if t.get("interval") is not None else None
        if name == "thesis_text_v4.json" and matched_stage(snap) is not None:
            extra["N1"] = {"tokens_ratio": matched_stage(snap)[0]}
        if name == "thesis_text_v2.json" and snap.get("cells"):
            extra["Q1"] = {"none_slope": snap["cells"]["no bos none"]["slope"][0]}
        if name == "wu_icl.json" and snap.get("cells"):
            from lnrecency.claims.trained.w2_w4_wu_icl import stage_counter, unlearned

            for test in ("P1", "P2", "P3", "P4"):
                extra.setdefault(test, {})["stage"] = stage_counter(test, snap["cells"])
            for test in snap.get("tests") or {}:  # the arms that did not learn, named in the undecided rows' cells
                if unlearned(test, snap["cells"]):
                    extra.setdefault(test, {})["unlearned"] = unlearned(test, snap["cells"])
        if name == "wu_icl.json" and snap.get("published"):
            for k, arm in enumerate(("depth 2", "depth 2", "depth 6", "depth 6", "depth 2 residual",
                                     "depth 2 residual"), start=1):
                extra.setdefault(f"R{k}", {})["theirs"] = (snap["published"][arm][(k - 1) % 2],)
    for s in plans():
        for test, level in plan_levels(s.name, {t.id: out.get(t.id) for t in s.tests}).items():
            if out.get(test) is not None:
                extra.setdefault(test, {})["level"] = level
    return out, extra


#: claim -> its plan test, for claims with one test each (W2-W4 read it from the row's setting "case"): from the
#: plans' declarations (plan v4's TU1, TU2, TN1 included)
TEST_OF = test_of()


def qualify_rows(rows: list[dict], docs: Path) -> int:
    """Set the qualifiers of every trained row of ``rows`` that a snapshot decides; how many were set."""
    found, extra = decisions(docs)
    pretrained = None  # R1's rows from docs/pretrained.json, read when a row needs them
    done = 0
    for r in rows:
        test = TEST_OF.get(r["id"]) or (r.get("setting") or {}).get("case")
        if isinstance(test, str) and test in PLAN_WORDS and test in found:
            why = "" if found[test] is not None else "not learned"
            r["qualifiers"] = plan_qualifiers(test, found[test], why, decisions=found,
                                              **extra.get(test, {})).to_json()
            done += 1
        elif r["id"] in SEED_WORDS:
            r["qualifiers"] = row_qualifiers(r["id"], r, min_learned=MIN_LEARNED,
                                             others=[o for o in rows if o["id"] == r["id"]]).to_json()
            done += 1
        elif r["id"] == "R1" and isinstance((r.get("setting") or {}).get("case"), str):
            from lnrecency.claims.trained.r1_pretrained_decoders import published_qualifiers, qualifiers

            if pretrained is None:
                pretrained = _read(docs / "pretrained.json") or {}
                pretrained = published_qualifiers(pretrained) if pretrained.get("runs") else {}
            q = pretrained.get(r["setting"]["case"]) or qualifiers(r["setting"]["case"], r["verdict"])
            r["qualifiers"] = q.to_json()
            done += 1
    return done


def main(argv: list[str] | None = None) -> int:
    from lnrecency.files.atomic import atomic_write_text
    from lnrecency.runtime.parser import OneLineParser

    p = OneLineParser(prog="python3 -m lnrecency.report.words.requalify", description=__doc__.split("\n")[0])
    p.add_argument("docs", nargs="?", default=str(ROOT / "docs"))
    args = p.parse_args(argv)
    docs = Path(args.docs)
    try:
        data = _read(docs / "verdicts.json")
    except ValueError as exc:
        p.error(str(exc))
    if data is None:
        p.error(f"docs: {str(docs)!r} holds no verdicts.json")
    rows = data.get("verdicts") if isinstance(data, dict) else None
    if not isinstance(rows, list) or not all(isinstance(r, dict) and isinstance(r.get("id"), str) for r in rows):
        p.error(f"docs: {str(docs / 'verdicts.json')!r}: \"verdicts\" must be a list of verdict rows; got "
                f"{type(rows).__name__}")
    try:
        n = qualify_rows(rows, docs)
    except (ValueError, TypeError, KeyError, AttributeError, IndexError) as exc:
        p.error(f"docs: the snapshots in {str(docs)!r} cannot requalify the rows: {type(exc).__name__}: "
                f"{str(exc)[:200]}")
    atomic_write_text(docs / "verdicts.json", json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    print(f"qualified {n} rows of {docs / 'verdicts.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
