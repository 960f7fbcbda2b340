"""`lnrecency corpus-stats [--corpus DIR] [--json]`: seed 002's premise counted on a local text corpus.

For every token A at position t whose two previous occurrences (in the same file) are p1 < p2 < t, with
B = x[p1+1] != C = x[p2+1]: how often x[t+1] is C (the later continuation) and how often it is B, binned by
d2 = t - p2 and d1 = t - p1, with intervals cluster-robust over files (lnrecency.experiments.text.corpus). The
default
corpus is the running Python's standard library source; the byte-level BPE tokenizer (vocabulary 2048) is
trained locally on the corpus and cached, like the counts. Needs the ``tokenizers`` package (models extra).
``--json``: the counts, the verdict of claim S2.0, and the cached tokenizer and token-id files (so that an
independent count can use the same tokens).
"""
from __future__ import annotations

import argparse
import json

from lnrecency.cli.options import Options

NAME = "corpus-stats"
HELP = "seed 002's premise on real text: later vs earlier continuation of a repeated token (needs tokenizers)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--corpus", default=None, metavar="DIR",
                   help="a folder of text files (default: the running Python's standard library source)")
    p.add_argument("--json", action="store_true", help="the counts as JSON")


def run(args: Options) -> int:
    from lnrecency.experiments.text.corpus import corpus_files

    corpus_files(args.corpus)  # the folder is checked before anything is imported or read
    try:
        import tokenizers  # noqa: F401
    except ImportError:
        raise ValueError("corpus-stats needs the tokenizers package: python3 -m pip install -e '.[models]'") from None
    from lnrecency.experiments.text.corpus import cached_counts, corpus_cache, premise_decision

    counts = cached_counts(args.corpus, progress=None if not args.json else False)
    verdict, reason = premise_decision(counts)
    folder = corpus_cache() / counts["key"]
    if args.json:
        print(json.dumps({**counts, "verdict": {"id": "S2.0", "verdict": verdict, "reason": reason},
                          "tokenizer": str(folder / "tokenizer.json"), "token_ids": str(folder / "ids.npz")},
                         allow_nan=False))
        return 0
    print(f"corpus: {counts['corpus']} ({counts['files']} files, {counts['tokens']} tokens, byte-level BPE "
          f"vocabulary {counts['vocab']})")
    print(f"definition: {counts['definition']}")
    for name, s in counts["subsets"].items():
        if s["events"]:
            print(f"  {name}: {s['events']} events; next = C {100 * s['frac_c']:.1f}%, next = B "
                  f"{100 * s['frac_b']:.1f}%; D = {s['d']:+.4f} [{s['d_interval'][0]:+.4f}, {s['d_interval'][1]:+.4f}]")
    print("by bin (d2 = t - p2, d1 = t - p1):")
    for b in counts["bins"]:
        print(f"  d2 {b['d2']:>8s}, d1 {b['d1']:>8s}: {b['events']:8d} events, C {100 * b['frac_c']:5.1f}%, "
              f"B {100 * b['frac_b']:5.1f}%")
    print(f"[S2.0] {verdict.upper()}: {reason}")
    return 0
