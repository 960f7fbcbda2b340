"""`lnrecency experiments thesis|thesis-text|thesis-text-v2|thesis-text-v3|thesis-text-v4|thesis-text-v5|wu-icl|
seed002|seed003|pretrained [--quick] [--json] [--workers N | --scheduler ADDRESS]`: trained model experiments.

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
(48 models), the sink ablation at the end; prints Q1-Q6 (Holm over them only; claims TV1-TV6, our formulations)
and each cell's summary with the sink theory's fitted share beside the measured one.
``thesis-text-v3``: its third pre-registered plan (lnrecency.experiments.studies.thesis_text_v3, plan
lnrecency/data/thesis_text_plan_v3.md; issue 67): plan v2's 48 models (their weights kept; the no-BOS ones trained
again and checked against their records, about 35 min on 2 cores once), each probed on 320 held-out windows with
layer 2's QK replaced by c I, the BOS value direction removed from the keys, and the per-token scale fixed; prints
A1, B1, C1, A0, C0 (Holm over them only) and each cell's path decomposition of the layer-2 slope.
``thesis-text-v4``: its fourth pre-registered plan (its arms declared in lnrecency.experiments.plans.declared, run by
lnrecency.experiments.plans.text_arms, plan
lnrecency/data/thesis_text_plan_v4.md; issue 76): U1 (BOS, no normalisation, layer 1's first-key share set to the
LayerNorm level), U2 (BOS, LayerNorm, the share clamped to the none level), 8 seeds each, and N1 (no BOS, LayerNorm
against none, 21 seeds each, trained to held-out loss 4.25); prints U1, U2, N1 (Holm over them only; claims TU1,
TU2, TN1) and each cell's mean slope. Estimated 57 min on 2 cores (the plan's budget).
``thesis-text-v5``: its fifth pre-registered plan (lnrecency.experiments.studies.text_v5, plan
lnrecency/data/thesis_text_plan_v5.md; issue 83): F (BOS, LayerNorm, layer 1's share flat at 0 / the LayerNorm level
/ the none level), P (BOS, the LayerNorm profile set, one part of LayerNorm at a time), 5 seeds each, and T (no BOS,
LayerNorm and none, 8 seeds each, probed along training); prints each arm's mean slope and each prediction of the plan
against its outcome (two Holm families). Estimated 65 min on 2 cores (the plan's budget).
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
from lnrecency.experiments.plans.declared import STUDIES, study

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
#: the experiments, in the order declared (lnrecency.experiments.plans.declared: one declaration each, one engine)
EXPERIMENTS = tuple(STUDIES)


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


def _words(plan) -> dict:
    """Each test's statement, word for word from the claim it decides (lnrecency.claims.catalog)."""
    out = {}
    for t in plan.tests:
        c = catalog.declared(t.claim)
        out[t.id] = c.text(t.statement_key) if t.statement_key else c.title
    return out


def _print_tests(tests: dict, words: str, digits: int) -> None:
    """A plan's tests, one line each: its verdict, its ``words`` (a key of the test), its interval and why it was
    not decided."""
    for k, t in tests.items():
        lo, hi = t.get("interval", (None, None))
        span = f" [{lo:+.{digits}f}, {hi:+.{digits}f}]" if lo is not None else ""
        print(f"[{k}] {t['verdict'].upper()}: {t[words]}{span}" + (f" ({t['why']})" if t["why"] else ""))


def _options(args: Options) -> dict:
    return {"use_cache": not args.no_cache, "progress": None if not args.json else False, "workers": args.workers,
            "scheduler": args.scheduler, "models": args.models}


def _plan(args: Options, plan) -> int:
    """A plan decided by its own rule (lnrecency.experiments.plans.engine.run_plan): its tests, each checked against
    its reading, and one line per cell."""
    from lnrecency.experiments.plans.engine import hook, run_plan
    from lnrecency.inference.evidence import strict_json as strict

    snap = run_plan(plan, quick=args.quick, words=_words(plan), **_options(args))
    if args.figure is not None:
        from lnrecency.files.figure_record import ReportFigure

        path = Path(args.figure)
        ReportFigure(path.stem, plan.title, "", hook(plan.figure, plan, "figure")(snap)).write(path.parent, ("png",))
    if args.json:
        print(json.dumps(strict(snap), allow_nan=False))
        return 0
    print(f"{plan.title} (SHA-256 {snap['plan_sha256'][:16]}...), Holm over {', '.join(snap['tests'])} at "
          f"{plan.fwer}" + ("  -- quick run: not decisive" if args.quick else ""))
    _print_tests(snap["tests"], plan.test_words, plan.digits)
    for line in hook(plan.lines, plan, "lines")(snap):
        print(line)
    return 0


def _claims(args: Options, st_) -> int:
    """A study whose claims the registry decides: its runs, then its claims evaluated from the cache."""
    from lnrecency.claims.registry import evaluate
    from lnrecency.experiments.plans.engine import hook, run_study, settings_of
    from lnrecency.inference.evidence import strict_json as strict

    st = settings_of(st_, args.quick)
    settings, summaries = hook(st_.summaries, st_, "summaries")(run_study(st_, st, **_options(args)), st)
    seeds = getattr(st, "primary_seeds", getattr(st, "seeds", None))  # the seeds a verdict reads (pretrained: none)
    seeds = None if seeds is None else len(seeds)
    results = evaluate(list(st_.claims), quick=args.quick, progress=False)
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


def _check_scheduler(args: Options) -> None:
    """--scheduler: 'local' or a Dask scheduler's address, refused by name before torch or Dask load; an address
    goes with an experiment that trains, and without --workers (a cluster's workers are its own)."""
    from lnrecency.experiments.decoders.parallel import LOCAL, check_reachable, check_scheduler

    scheduler = getattr(args, "scheduler", LOCAL)
    try:
        check_scheduler(scheduler)
        if "scheduler" in study(args.experiment).options:
            check_reachable(scheduler)  # before any data work: a dead address is refused in seconds
    except ValueError as exc:
        raise ValueError("--" + str(exc)) from None
    if scheduler == LOCAL:
        return
    if "scheduler" not in study(args.experiment).options:
        raise ValueError(f"--scheduler {scheduler!r}: the {args.experiment} experiment trains nothing; it runs here "
                         f"(--scheduler local)")
    if args.workers is not None:
        raise ValueError(f"--workers {args.workers}: goes with --scheduler local; the cluster at {scheduler} runs "
                         f"its own workers")


def run(args: Options) -> int:
    from lnrecency.runtime.arguments import check_choice

    check_choice("experiment", args.experiment, EXPERIMENTS)
    plan = study(args.experiment)
    _check_scheduler(args)
    if args.workers is not None:
        from lnrecency.experiments.decoders.parallel import check_workers

        check_workers(args.workers)
    if getattr(args, "figure", None) is not None:
        if plan.figure is None:
            raise ValueError(f"--figure goes with {', '.join(s.name for s in STUDIES.values() if s.figure)}")
        png_path("--figure", args.figure)
    if args.models is not None and "models" not in plan.options:
        raise ValueError(f"--models goes with {', '.join(s.name for s in STUDIES.values() if 'models' in s.options)}")
    require_extra(plan.extra)
    return _plan(args, plan) if plan.is_plan else _claims(args, plan)
