"""`lnrecency experiments thesis|thesis-text|thesis-text-v2|thesis-text-v3|thesis-text-v4|wu-icl|seed002|seed003|
pretrained [--quick] [--json] [--workers N | --scheduler ADDRESS]`: trained model experiments.

``thesis``: the paper's thesis in trained decoders (lnrecency.experiments.studies.thesis): trains (or reads from the
cache)
NoPE decoders with LayerNorm / RMSNorm / none to a convergence rule, 5 seeds each, probes them on their
training distribution (random tokens beside it) along training, and prints the verdicts TM1-TM5. Default: 45
models; ``--quick``: 9 models (2-layer attention-only, at most 400 steps), a smoke test whose verdicts are
never decisive.
``seed002``: seed 002's induction-head experiments (lnrecency.experiments.studies.seed002; verdicts S2.1-S2.7): 3
seeds of a
2-layer attention-only decoder.
``seed003``: seed 003's vanishing variance and post-attention LayerNorm (lnrecency.experiments.studies.seed003;
verdicts
S3.1-S3.3): 2 tasks x 3 placements x 3 seeds.
``thesis-text``: the thesis on text (lnrecency.experiments.studies.thesis_text; verdicts TT1-TT4, decided by the
pre-registered plan lnrecency/data/thesis_text_plan.md, whose SHA-256 the JSON carries): NoPE language models with
LayerNorm, RMSNorm and none on the default corpus, 3M tokens each (33 models; measured time in
lnrecency/data/costs.json; ``--quick``: 9 models for 120 steps, a smoke test).
``thesis-text-v2``: its second pre-registered plan (lnrecency.experiments.studies.thesis_text_v2, plan
lnrecency/data/thesis_text_plan_v2.md; issue 50): BOS first / no BOS x LayerNorm / RMSNorm / none, attn2, 8 seeds
(48 models), the sink ablation at the end; prints Q1-Q6 (Holm over them only; our formulation, no claim of the
registry yet) and each cell's summary with the sink theory's fitted share beside the measured one.
``thesis-text-v3``: its third pre-registered plan (lnrecency.experiments.studies.thesis_text_v3, plan
lnrecency/data/thesis_text_plan_v3.md; issue 67): plan v2's 48 models (their weights kept; the no-BOS ones trained
again and checked against their records, about 35 min on 2 cores once), each probed on 320 held-out windows with
layer 2's QK replaced by c I, the BOS value direction removed from the keys, and the per-token scale fixed; prints
A1, B1, C1, A0, C0 (Holm over them only) and each cell's path decomposition of the layer-2 slope.
``thesis-text-v4``: its fourth pre-registered plan (lnrecency.experiments.studies.text_v4, plan
lnrecency/data/thesis_text_plan_v4.md; issue 76): U1 (BOS, no normalisation, layer 1's first-key share set to the
LayerNorm level), U2 (BOS, LayerNorm, the share clamped to the none level), 8 seeds each, and N1 (no BOS, LayerNorm
against none, 21 seeds each, trained to held-out loss 4.25); prints U1, U2, N1 (Holm over them only; no claim of the
registry yet) and each cell's mean slope. Estimated 57 min on 2 cores (the plan's budget).
``wu-icl``: Wu et al.'s in-context classification experiment (ICML 2025, their Fig. 2) reproduced and extended with
LayerNorm and RMSNorm inserted (lnrecency.experiments.studies.wu_icl, plan lnrecency/data/wu_icl_plan.md; issue 51):
depth 2, depth 6, depth 2 with residual x none / LayerNorm / RMSNorm, 5 seeds (45 models); prints R1-R6 (their
published directions, Holm over the six) and P1-P6 (ours, Holm over the six) with each cell's gaps beside theirs.
``pretrained``: real pretrained decoders read from local GGUF wheels (lnrecency.experiments.studies.pretrained;
verdict R1): SmolLM2-135M and Gemma 3 270M, whichever ``--models DIR`` holds, each probed on text and on the
neutral random control with positions on and off (n = 256, 16 windows; ``--quick``: n = 64, 8 windows).
Independent trainings run in ``--workers`` processes (default 2), with the same bytes as serially; the README
states the measured times. ``--scheduler tcp://HOST:PORT`` runs each training as one task on an existing Dask cluster
instead (lnrecency.experiments.decoders.parallel), with the same bytes.

Runs are cached by configuration hash (``$LNRECENCY_CACHE`` or ~/.cache/lnrecency); the report reads them.
``--json``: {"experiment", "settings", "verdicts": [ClaimResult JSON + "training_seeds"], "runs": [...]}.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from lnrecency.claims import catalog
from lnrecency.cli.options import Options, png_path, require_extra

NAME = "experiments"


def _claims_by_experiment() -> str:
    """Each experiment's claims, from the catalogue (first-last where there are more than two)."""
    by: dict[str, list[str]] = {}
    for c in catalog.CATALOG:
        if c.command and c.command.startswith("experiments "):
            by.setdefault(c.command.split()[1], []).append(c.id)
    def span(ids: list) -> str:  # "TC1-TC5", never "TU1-TN1" (one letter family only)
        same = len({catalog.id_parts(c)[0] for c in ids}) == 1
        return f"{ids[0]}-{ids[-1]}" if len(ids) > 2 and same else ", ".join(ids)
    return "; ".join(f"{e}: {span(ids)}" for e, ids in by.items())


HELP = f"trained-model experiments ({_claims_by_experiment()}); needs the models extra (pretrained: the hf extra)"
EXPERIMENTS = ("thesis", "thesis-text", "thesis-text-v2", "thesis-text-v3", "thesis-text-v4", "wu-icl", "seed002",
               "seed003", "pretrained")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("experiment", help=", ".join(EXPERIMENTS))
    p.add_argument("--quick", action="store_true", help="the small version (1-2 min)")
    p.add_argument("--json", action="store_true", help="verdicts and per-run summaries as JSON")
    p.add_argument("--no-cache", action="store_true", help="train again even when the runs are cached")
    p.add_argument("--models", default=None, metavar="DIR",
                   help="pretrained: the folder of downloaded model wheels (default $LNRECENCY_MODELS, else ./models)")
    p.add_argument("--figure", default=None, metavar="FILE.png",
                   help="thesis-text-v2: draw each BOS cell's layer-1 share of attention to BOS by query beside the "
                        "sink theory's at its fitted bonus (lnrecency.theory.sink) into this PNG")
    p.add_argument("--workers", type=int, default=None,
                   help="trainings at once in worker processes (default min(2, CPUs); same bytes as 1)")
    p.add_argument("--scheduler", default="local",
                   help="'local' (worker processes here, default) or the address of a running Dask scheduler "
                        "(tcp://HOST:PORT; the dask extra): each training one task on that cluster, progress per "
                        "run, the same bytes as local workers; a run whose worker is lost is run again, one that "
                        "still fails is named after the others finish")


def _summary(res, run: dict) -> dict:
    stages = ("init", "quarter", "half", "final", "matched")
    return {"arch": run["arch"], "norm": run["norm"], "seed": run["seed"], "seconds": run["seconds"],
            "stopped": run["stopped"], "final_step": run["log"][-1]["step"],
            "final_heldout_loss": run["log"][-1]["heldout_loss"], "learned": res.learned(run),
            "induction_score": run["induction_score"], "matched": {k: v for k, v in res.matched(run).items()
                                                                 if k not in ("task", "random")},
            "layers": {stage: {tokens: [{k: lay.get(k) for k in ("layer", "slope", "slope_se", "rp", "sink")}
                                        for lay in res.stage(run, stage, tokens)["layers"]]
                               for tokens in ("task", "random")} for stage in stages}}


def _seed_summary(run: dict) -> dict:
    """A seed002 / seed003 run without its large arrays (attention maps, per-head profiles)."""
    skip = ("settings", "log", "attention_short", "attention_long", "ablated_map", "mechanism", "induction_scores")
    out = {k: v for k, v in run.items() if k not in skip and k != "stages"}
    out["final_heldout_loss"] = run["log"][-1]["heldout_loss"]
    return out


#: plan v2's tests in words: each is claim TVk's title (lnrecency.claims.catalog; ours, Holm over Q1-Q6 only)
V2_TESTS = {f"Q{k}": catalog.declared(f"TV{k}").title for k in range(1, 7)}


def _print_tests(tests: dict, words: str, digits: int) -> None:
    """A plan's tests, one line each: its verdict, its ``words`` (a key of the test), its interval and why it was
    not decided."""
    for k, t in tests.items():
        lo, hi = t.get("interval", (None, None))
        span = f" [{lo:+.{digits}f}, {hi:+.{digits}f}]" if lo is not None else ""
        print(f"[{k}] {t['verdict'].upper()}: {t[words]}{span}" + (f" ({t['why']})" if t["why"] else ""))


def _decision(d) -> dict:
    """A plan's decided test as its snapshot publishes it: the decision and the per-seed values it was decided on
    (issue 67: every verdict recomputed from the snapshot); {} when not decided."""
    from lnrecency.inference.evidence import strict_json

    if d is None:
        return {}
    other = None if d.test.other is None else list(d.test.other)
    return strict_json({**d.to_json(), "values": list(d.test.values), "other": other})


def _thesis_text_v2(args: Options) -> int:
    """Plan v2 (issue 50): train or read its runs, decide Q1-Q6, print them with each cell's summary."""
    from dataclasses import asdict

    from lnrecency.claims.trained_rules import reproduction_label
    from lnrecency.experiments.studies.thesis_text_v2 import (
        V2Settings,
        decide,
        plan_sha256,
        run_v2,
        seed_table,
        summary,
        theory_shares,
    )
    from lnrecency.inference.evidence import strict_json as strict

    st = V2Settings.preset(args.quick)
    runs = run_v2(st, use_cache=not args.no_cache, progress=None if not args.json else False, workers=args.workers,
                  scheduler=args.scheduler)
    decided = decide(runs, st)
    # a quick run decides nothing: its rows say so instead of a verdict (the interval stays, as a number)
    # each test with the per-seed values it was decided on (issue 67: every verdict recomputed from the snapshot)
    tests = {k: {**_decision(d), "statement": V2_TESTS[k], "verdict": "not decisive (quick run)" if args.quick else
                 ("inconclusive" if d is None else reproduction_label(d.verdict)), "why": why}
             for k, (d, why) in decided.items()}
    cells = summary(runs, st)
    for name, c in cells.items():  # the sink theory beside each measured first-key share (lnrecency.theory.sink)
        c["theory"] = theory_shares(c["first_share_rows"]) if c["first_share_rows"] else None
    if args.figure is not None:
        from lnrecency.experiments.studies.thesis_text_v2 import sink_figure
        from lnrecency.files.figure_record import ReportFigure

        path = Path(args.figure)
        ReportFigure(path.stem, "BOS share and the sink theory", "", sink_figure(cells)).write(path.parent, ("png",))
    if args.json:
        print(json.dumps(strict({"experiment": "thesis-text-v2", "plan_sha256": plan_sha256(), "quick": args.quick,
                                 "settings": asdict(st), "tests": tests, "cells": cells,
                                 "runs": seed_table(runs, st)}), allow_nan=False))
        return 0
    print(f"plan v2 (SHA-256 {plan_sha256()[:16]}...), {len(st.seeds)} seeds per cell"
          + ("  -- quick run: not decisive" if args.quick else ""))
    _print_tests(tests, "statement", 4)
    for name, c in cells.items():
        def f(pair):
            return "n/a" if pair[0] is None else f"{pair[0]:+.4f} (SE {pair[1]:.4f})"
        print(f"  {name}: layer-2 slope {f(c['slope'])}, keys >= 8 {f(c['late'])}, ablated {f(c['ablated'])}, "
              f"seeds {c['seeds']}" + (f", not learned {c['not_learned']}" if c["not_learned"] else ""))
    return 0


def _thesis_text_v3(args: Options) -> int:
    """Plan v3 (issue 67): read or make its runs, decide A1-C0, print them with each cell's path decomposition."""
    from lnrecency.experiments.studies.thesis_text_v2 import cached_v2
    from lnrecency.experiments.studies.thesis_text_v3 import V3Settings, plan_sha256, run_v3, snapshot
    from lnrecency.inference.evidence import strict_json as strict

    st = V3Settings.preset(args.quick)
    runs = run_v3(st, use_cache=not args.no_cache, progress=None if not args.json else False,
                  workers=args.workers or 2, scheduler=args.scheduler)
    snap = snapshot(runs, cached_v2(st.v2), st)
    if args.quick:  # a quick run decides nothing: its rows say so instead of a verdict
        for t in snap["tests"].values():
            t["verdict"] = "not decisive (quick run)"
    if args.json:
        print(json.dumps(strict({**snap, "quick": args.quick}), allow_nan=False))
        return 0
    print(f"plan v3 (SHA-256 {plan_sha256()[:16]}...), {len(st.v2.seeds)} seeds per cell, {st.windows} windows"
          + ("  -- quick run: not decisive" if args.quick else ""))
    _print_tests(snap["tests"], "statement", 4)
    for cell, rows in snap["runs"].items():
        mean = {k: sum(r[k] for r in rows) / len(rows) for k in ("slope", "qk_identity", "bos_direction",
                                                                   "scale_fixed")}
        paths = ", ".join(f"{p} {sum(r['paths'][p]['slope'] for r in rows) / len(rows):+.4f}"
                          for p in ("own", "bos", "other", "bias"))
        print(f"  {cell}: layer-2 slope {mean['slope']:+.4f}; QK = cI {mean['qk_identity']:+.4f}, BOS direction "
              f"removed {mean['bos_direction']:+.4f}, scale fixed {mean['scale_fixed']:+.4f}; paths: {paths}")
    return 0


def _thesis_text_v4(args: Options) -> int:
    """Plan v4 (issue 76): train or read its runs, decide U1, U2, N1, print them with each cell's mean slope."""
    from lnrecency.experiments.studies.text_v4.thesis_text_v4 import V4Settings, run_v4, snapshot
    from lnrecency.experiments.studies.text_v4.v4_plan import plan_sha256
    from lnrecency.inference.evidence import strict_json as strict

    st = V4Settings.preset(args.quick)
    snap = snapshot(run_v4(st, use_cache=not args.no_cache, progress=None if not args.json else False,
                           workers=args.workers or 2, scheduler=args.scheduler), st)
    if args.quick:  # a quick run decides nothing: its rows say so instead of a verdict
        for t in snap["tests"].values():
            t["verdict"] = "not decisive (quick run)"
    if args.json:
        print(json.dumps(strict({**snap, "quick": args.quick}), allow_nan=False))
        return 0
    print(f"plan v4 (SHA-256 {plan_sha256()[:16]}...), {st.windows} windows"
          + ("  -- quick run: not decisive" if args.quick else ""))
    _print_tests(snap["tests"], "statement", 4)
    for cell, rows in snap["runs"].items():
        mean = sum(r["slope"] for r in rows) / len(rows)
        print(f"  {cell}: layer-2 slope {mean:+.4f}, {len(rows)} seeds, probe SE / seed SD "
              f"{snap['noise'][cell]['ratio'] or float('nan'):.2f}")
    if snap["missed_target"]:
        print(f"  did not reach the target loss: {', '.join(snap['missed_target'])}")
    return 0


def _wu_icl(args: Options) -> int:
    """Wu et al.'s experiment (issue 51): train or read its runs, decide both families, print them and the cells."""
    from dataclasses import asdict

    from lnrecency.experiments.studies.wu_icl import (
        PUBLISHED,
        WuSettings,
        decide,
        plan_sha256,
        run_wu,
        seed_rows,
        summary,
    )
    from lnrecency.experiments.wu.icl_task import PAIRS
    from lnrecency.inference.evidence import strict_json as strict

    st = WuSettings.preset(args.quick)
    runs = run_wu(st, use_cache=not args.no_cache, progress=None if not args.json else False, workers=args.workers,
                  scheduler=args.scheduler)
    from lnrecency.claims.trained.w2_w4_wu_icl import STATEMENTS, label, short

    decided = decide(runs, st)
    tests = {k: {**_decision(d), "statement": STATEMENTS[k], "test": short(k),
                 "verdict": "not decisive (quick run)" if args.quick else label(k, d, False), "why": why}
             for k, (d, why) in decided.items()}
    cells = summary(runs, st)
    if args.json:
        print(json.dumps(strict({"experiment": "wu-icl", "plan_sha256": plan_sha256(), "quick": args.quick,
                                 "settings": asdict(st), "published": PUBLISHED, "tests": tests, "cells": cells,
                                 "runs": seed_rows(runs)}),
                         allow_nan=False))
        return 0
    print(f"Wu et al.'s experiment, plan {plan_sha256()[:16]}..., {len(st.seeds)} seeds per cell, {st.steps} steps"
          + ("  -- quick run: not decisive" if args.quick else ""))
    _print_tests(tests, "test", 3)
    names = [f"{a}-{b}" for a, b in PAIRS]
    for c in cells.values():
        def f(pair, sign="+"):
            return "n/a" if pair[0] is None else f"{pair[0]:{sign}.3f} ({pair[1]:.3f})"
        pub = " / ".join(f"{v:+.3f}" for v in PUBLISHED[c["arm"]]) if c["norm"] == "none" else ""
        print(f"  {c['arm']}, {c['norm']}: gaps " + " / ".join(f(c["gaps"][g]) for g in names)
              + (f" (Wu et al.: {pub})" if pub else "") + f"; in-context accuracy {f(c['plain'], '')}; seeds "
              f"{c['seeds']}" + (f", not learned {c['not_learned']}" if c["not_learned"] else ""))
    return 0


def _check_scheduler(args: Options) -> None:
    """--scheduler: 'local' or a Dask scheduler's address, refused by name before torch or Dask load; an address
    goes with an experiment that trains, and without --workers (a cluster's workers are its own)."""
    from lnrecency.experiments.decoders.parallel import LOCAL, check_reachable, check_scheduler

    scheduler = getattr(args, "scheduler", LOCAL)
    try:
        check_scheduler(scheduler)
        if args.experiment != "pretrained":
            check_reachable(scheduler)  # before any data work: a dead address is refused in seconds
    except ValueError as exc:
        raise ValueError("--" + str(exc)) from None
    if scheduler == LOCAL:
        return
    if args.experiment == "pretrained":
        raise ValueError(f"--scheduler {scheduler!r}: the pretrained experiment trains nothing; it runs here "
                         f"(--scheduler local)")
    if args.workers is not None:
        raise ValueError(f"--workers {args.workers}: goes with --scheduler local; the cluster at {scheduler} runs "
                         f"its own workers")


def run(args: Options) -> int:
    from lnrecency.runtime.arguments import check_choice

    check_choice("experiment", args.experiment, EXPERIMENTS)
    _check_scheduler(args)
    if args.workers is not None:
        from lnrecency.experiments.decoders.parallel import check_workers

        check_workers(args.workers)

    if getattr(args, "figure", None) is not None:
        if args.experiment != "thesis-text-v2":
            raise ValueError("--figure goes with thesis-text-v2")
        png_path("--figure", args.figure)
    if args.models is not None and args.experiment != "pretrained":
        raise ValueError("--models goes with the pretrained experiment")
    require_extra("hf" if args.experiment == "pretrained" else "models")
    if args.experiment == "thesis-text-v2":
        return _thesis_text_v2(args)
    if args.experiment == "thesis-text-v3":
        return _thesis_text_v3(args)
    if args.experiment == "thesis-text-v4":
        return _thesis_text_v4(args)
    if args.experiment == "wu-icl":
        return _wu_icl(args)
    from lnrecency.claims.registry import evaluate
    from lnrecency.inference.evidence import strict_json as strict

    if args.experiment == "pretrained":
        from dataclasses import asdict

        from lnrecency.experiments.studies.pretrained import PretrainedSettings, run_pretrained

        st = PretrainedSettings.preset(args.quick)
        data = run_pretrained(args.models, st, use_cache=not args.no_cache, progress=not args.json)
        ids, settings = ["R1"], asdict(st)
        summaries = [{"model": k, "sha256": v["sha256"],
                      "layers": {c: [{q: lay[q] for q in ("layer", "slope", "slope_se", "sink")}
                                     for lay in r["layers"]] for c, r in v["runs"].items()},
                      "perplexity": {c: r["model"]["perplexity"] for c, r in v["runs"].items()}}
                     for k, v in data["models"].items()]
    elif args.experiment == "thesis-text":
        from dataclasses import asdict

        from lnrecency.claims.trained.tt1_tt4_thesis_text import STATEMENTS as text_ids
        from lnrecency.experiments.studies.thesis_text import TextThesisSettings, learned, plan_sha256, run_thesis_text

        st = TextThesisSettings.preset(args.quick)
        runs = run_thesis_text(st, use_cache=not args.no_cache, progress=None if not args.json else False,
                               workers=args.workers, scheduler=args.scheduler)
        ids, settings = list(text_ids), {**asdict(st), "plan_sha256": plan_sha256()}
        summaries = [{"arch": r["arch"], "norm": r["norm"], "seed": r["seed"], "seconds": r["seconds"],
                      "final_heldout_loss": r["log"][-1]["heldout_loss"], "unigram_entropy": r["unigram"],
                      "learned": learned(r, st), "final": r["final"],
                      "trajectory": [{k: e[k] for k in ("tokens", "heldout_loss")} | {
                          "layer2_text_slope": next(lay["slope"] for lay in e["text"] if lay["layer"] == 2)}
                          for e in r["trajectory"]]} for r in runs]
        seeds = len(st.primary_seeds)
    elif args.experiment == "thesis":
        from lnrecency.claims.trained.tm1_tm5_trained_decoders import STATEMENTS as ids
        from lnrecency.experiments.studies.thesis import ThesisSettings, run_thesis

        st = ThesisSettings.preset(args.quick)
        res = run_thesis(st, use_cache=not args.no_cache, progress=None if not args.json else False,
                         workers=args.workers, scheduler=args.scheduler)
        settings, summaries = res.to_json()["settings"], [_summary(res, r) for r in res.runs]
    else:
        from dataclasses import asdict

        from lnrecency.claims.trained.s2_s3_seed_experiments import S2, S3
        from lnrecency.experiments.studies.seeds import run_experiment
        from lnrecency.experiments.studies.seeds_config import EXPERIMENTS as SETTINGS

        st = SETTINGS[args.experiment].preset(args.quick)
        ids = S2 if args.experiment == "seed002" else S3
        runs = run_experiment(args.experiment, st, use_cache=not args.no_cache,
                              progress=None if not args.json else False, workers=args.workers,
                              scheduler=args.scheduler)
        settings, summaries = asdict(st), [_seed_summary(r) for r in runs]
    if args.experiment in ("thesis", "seed002", "seed003"):
        seeds = len(st.seeds)
    elif args.experiment == "pretrained":
        seeds = None  # pretrained models have no training seeds
    results = evaluate(list(ids), quick=args.quick, progress=False)
    if args.json:
        verdicts = [{"training_seeds": seeds, **strict(r.to_json())} for r in results]
        print(json.dumps({"experiment": args.experiment, "settings": settings,
                          "verdicts": verdicts, "runs": summaries}, allow_nan=False))
        return 0
    for r in results:
        print(f"[{r.id}] {r.verdict.upper()}  ({r.source}; "
              + (f"{seeds} training seeds)" if seeds is not None else "pretrained weights, intervals over windows)")
              + ("  -- quick run: not decisive" if args.quick else ""))
        print(f"  statement: {r.statement}")
        print(f"  setting:   {json.dumps(strict(r.to_json())['setting'])}")
        if r.finding:
            print(f"  finding:   {r.finding}")
        print()
    return 0
