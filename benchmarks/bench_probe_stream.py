"""The streamed probe of a transformers model (issue 68): time and peak memory beyond the weights, against the
estimate that refuses work (lnrecency.experiments.probes.probe_costs.probe_seconds, slopes only), and against the
unstreamed path (every layer's output_attentions held at once) in the same run.

Each case runs in a fresh child process: it builds a LLaMA-style model from a config (nothing downloaded), notes its
resident memory (the weights and the interpreter), probes it with ``lnrecency.probe_model`` and reports the peak
resident memory above that baseline (ru_maxrss), the seconds, and the estimate.

    python3 benchmarks/bench_probe_stream.py [--quick] [--json FILE]

Goal (issue 68): 32 layers x 32 heads at n = 1,024 within 2 GiB beyond the weights. Measured 2026-11-28 on this
project's 2-core machine (benchmarks/probe_stream.json): 242 s and 700 MiB beyond the weights for 8 sequences
(estimate 280 s); 16 x 16 at n = 256: 306 MiB streamed against 1,395 MiB with every layer's output_attentions held
(4.5 s each); the estimate within 0.44-1.16 of the real time over the cases.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import textwrap

CHILD = textwrap.dedent("""
    import json, resource, sys, time
    import torch, transformers
    import lnrecency
    from lnrecency.experiments.probes.probe_costs import probe_seconds
    layers, heads, n, sequences, head_dim, stream = json.loads(sys.argv[1])
    torch.manual_seed(0)
    width = heads * head_dim
    model = transformers.LlamaForCausalLM(transformers.LlamaConfig(
        vocab_size=256, hidden_size=width, intermediate_size=2 * width, num_hidden_layers=layers,
        num_attention_heads=heads, num_key_value_heads=heads, max_position_embeddings=max(n, 64)))
    if not stream:  # the unstreamed path: transformers' eager attention and output_attentions
        model._supports_attention_backend = False
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    t = time.perf_counter()
    res = lnrecency.probe_model(model, n=n, sequences=sequences, slopes_only=True, max_seconds=1e6)
    seconds = time.perf_counter() - t
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(json.dumps({"layers": layers, "heads": heads, "n": n, "sequences": sequences, "width": width,
                      "streamed": res.model["streamed"], "seconds": round(seconds, 2),
                      "estimate": round(probe_seconds(layers, heads, n, width, sequences, slopes_only=True), 2),
                      "peak_beyond_weights_mib": round((peak - base) / 2**20), "weights_mib": round(
                          sum(p.numel() * p.element_size() for p in model.parameters()) / 2**20, 1),
                      "slope_layer1": res.layers[0].slope}))
""")

CASES = [  # (layers, heads, n, sequences, head_dim, streamed)
    (32, 32, 1024, 8, 4, True),
    (32, 32, 256, 8, 4, True), (16, 16, 256, 8, 4, True), (16, 16, 256, 8, 4, False),
    (8, 8, 512, 8, 8, True), (4, 4, 128, 32, 8, True), (16, 16, 768, 8, 4, True),
]
QUICK = [(16, 16, 256, 8, 4, True), (16, 16, 256, 8, 4, False), (4, 4, 128, 16, 8, True)]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="small cases only (about a minute)")
    p.add_argument("--json", default=None, help="also write the rows to this file")
    a = p.parse_args()
    rows = []
    print(f"{'layers':>6} {'heads':>5} {'n':>5} {'seq':>4} {'path':>10} {'seconds':>8} {'estimate':>8} {'est/real':>8} "
          f"{'peak MiB':>8}")
    for case in QUICK if a.quick else CASES:
        done = subprocess.run([sys.executable, "-c", CHILD, json.dumps(case)], capture_output=True, text=True)
        if done.returncode != 0:
            print(f"{case}: failed: {done.stderr.strip().splitlines()[-1] if done.stderr.strip() else '?'}")
            continue
        r = json.loads(done.stdout.strip().splitlines()[-1])
        rows.append(r)
        print(f"{r['layers']:>6} {r['heads']:>5} {r['n']:>5} {r['sequences']:>4} "
              f"{'streamed' if r['streamed'] else 'all-layers':>10} {r['seconds']:>8.2f} {r['estimate']:>8.2f} "
              f"{r['estimate'] / r['seconds']:>8.2f} {r['peak_beyond_weights_mib']:>8}", flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
