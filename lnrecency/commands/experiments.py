"""`lnrecency experiments thesis [--quick] [--json]`: the paper's thesis in trained decoders (lnrecency.models.thesis):
trains (or reads from the cache) NoPE decoders with LayerNorm / RMSNorm / none, 3 seeds each, probes them at
initialisation, at matched held-out loss and after training, and prints the verdicts TM1-TM5.

Default: 27 models, about 11 min on 2 cores; ``--quick``: 9 models (2-layer attention-only), about 1 min.
Runs are cached by configuration hash (``$LNRECENCY_CACHE`` or ~/.cache/lnrecency); the report reads them.
``--json``: {"experiment", "settings", "verdicts": [ClaimResult JSON + "training_seeds"], "runs": [...]}.
"""
from __future__ import annotations

import argparse
import json

NAME = "experiments"
HELP = "trained-model experiments (thesis: TM1-TM5); needs the models extra"
EXPERIMENTS = ("thesis",)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("experiment", help="thesis")
    p.add_argument("--quick", action="store_true", help="the small version (about 1 min)")
    p.add_argument("--json", action="store_true", help="verdicts and per-run summaries as JSON")
    p.add_argument("--no-cache", action="store_true", help="train again even when the runs are cached")


def _summary(run: dict) -> dict:
    return {"arch": run["arch"], "norm": run["norm"], "seed": run["seed"], "seconds": run["seconds"],
            "final_heldout_loss": run["log"][-1]["heldout_loss"], "induction_score": run["induction_score"],
            "matched_step": run["matched"]["step"],
            "layers": {stage: [{k: lay[k] for k in ("layer", "phase", "slope", "slope_se", "rp", "rp_se")}
                               for lay in run[stage]["layers"]] for stage in ("init", "matched", "final")}}


def run(args: argparse.Namespace) -> int:
    from lnrecency.config import check_choice

    check_choice("experiment", args.experiment, EXPERIMENTS)
    from lnrecency.commands.probe import require_models

    require_models()
    from lnrecency.claims.registry import TRAINED, evaluate
    from lnrecency.commands.verify import strict
    from lnrecency.models.thesis import ThesisSettings, run_thesis

    st = ThesisSettings.preset(args.quick)
    res = run_thesis(st, use_cache=not args.no_cache, progress=not args.json)
    results = evaluate(list(TRAINED), quick=args.quick, progress=False)
    if args.json:
        verdicts = [{**strict(r.to_json()), "training_seeds": len(st.seeds)} for r in results]
        print(json.dumps({"experiment": args.experiment, "settings": res.to_json()["settings"],
                          "verdicts": verdicts, "runs": [_summary(r) for r in res.runs]}, allow_nan=False))
        return 0
    for r in results:
        print(f"[{r.id}] {r.verdict.upper()}  ({r.source}; {len(st.seeds)} training seeds)")
        print(f"  statement: {r.statement}")
        print(f"  setting:   {json.dumps(strict(r.to_json())['setting'])}")
        if r.finding:
            print(f"  finding:   {r.finding}")
        print()
    return 0
