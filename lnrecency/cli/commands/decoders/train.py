"""`lnrecency train TASK`: train a decoder on a task generated here (no download); write a checkpoint folder.

The checkpoint (``--out``) holds model.safetensors, config.json and train_log.json, written into a hidden
staging folder and renamed into place at the end: Ctrl-C leaves no partial checkpoint. Same flags and
seed give byte-identical weights (deterministic kernels, fixed thread count; lnrecency.experiments.decoders.train).
"""
from __future__ import annotations

import argparse
from pathlib import Path

from lnrecency.cli.options import Options, require_extra

NAME = "train"
HELP = ("train a decoder (lnrecency.experiments.decoders; needs the models extra) on induction, repeats, argmax or "
        "lookup, or a language model (lm) on local text")


def add_architecture_arguments(p: argparse.ArgumentParser) -> None:
    """The decoder's architecture flags (lnrecency.experiments.decoders.decoder_config.DecoderConfig)."""
    g = p.add_argument_group("architecture (lnrecency.experiments.decoders.decoder_config.DecoderConfig)")
    g.add_argument("--layers", type=int, default=2, help="number of blocks (default 2)")
    g.add_argument("--heads", type=int, default=4, help="attention heads per block (default 4)")
    g.add_argument("--width", type=int, default=64, help="model width d (default 64)")
    g.add_argument("--vocab", type=int, default=None,
                   help="vocabulary size (default 64; not with task lm, whose corpus tokenizer fixes it)")
    g.add_argument("--context", type=int, default=None, help="context length (default: the training length --n)")
    g.add_argument("--mlp", action="store_true", help="add an MLP to every block (default attention-only)")
    g.add_argument("--norm", default="layernorm", help="none | layernorm | rmsnorm (default layernorm)")
    g.add_argument("--placement", default="pre", help="pre | post (right after attention) | both (default pre)")
    g.add_argument("--positions", default="none", help="learned | none (NoPE) | rotary (default none)")
    g.add_argument("--no-residual", action="store_true", help="h' = block output instead of h + output")


#: the library's names of the flags that set them otherwise (a refusal names the flag: lnrecency.cli.app.flag_named)
PARAMETER_FLAGS = {"d_model": "--width", "n_layers": "--layers", "n_heads": "--heads"}


def decoder_from_args(args: Options, n: int):
    from lnrecency.experiments.decoders.decoder_config import DecoderConfig

    return DecoderConfig(vocab=64 if args.vocab is None else args.vocab, d_model=args.width, n_layers=args.layers,
                         n_heads=args.heads,
                         context=n if args.context is None else args.context, mlp=args.mlp, norm=args.norm,
                         placement=args.placement, positions=args.positions, residual=not args.no_residual)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("task", help="induction | repeats | argmax | lookup (defined in docs/trained-experiments.md), "
                                "or lm: a language model on --corpus")
    add_architecture_arguments(p)
    g = p.add_argument_group("training")
    g.add_argument("--steps", type=int, default=1000, help="optimiser steps (default 1000)")
    g.add_argument("--seed", type=int, default=0, help="seed of the weights and the data (default 0)")
    g.add_argument("--batch", type=int, default=32, help="sequences per step (default 32)")
    g.add_argument("--n", type=int, default=32, help="training sequence length (default 32)")
    g.add_argument("--lr", type=float, default=3e-3, help="AdamW learning rate (default 3e-3)")
    g.add_argument("--eval-every", type=int, default=100, help="held-out evaluation interval (0: none)")
    g.add_argument("--threads", type=int, default=1, help="torch intra-op threads (default 1; recorded)")
    g.add_argument("--corpus", default=None, metavar="DIR",
                   help="with task lm: a folder of text files (default: the running Python's standard library "
                        "source); tokenised by a byte-level BPE trained here and cached")
    g.add_argument("--device", default="cpu", help="cpu (deterministic) | cuda (a GPU: not bit-reproducible)")
    p.add_argument("--out", required=True, help="checkpoint folder to write")
    p.add_argument("--json", action="store_true", help="print the checkpoint's config.json")


def run(args: Options) -> int:
    from lnrecency.experiments.decoders.decoder_config import TrainSettings
    from lnrecency.runtime.arguments import check_choice

    # the flags first, before torch loads (about 2 s): each refusal names its flag (lnrecency.cli.app.flag_named)
    check_choice("--device", args.device, ("cpu", "cuda"))
    if args.corpus is not None and args.task != "lm":
        raise ValueError(f"--corpus goes with task lm; got task {args.task!r}")
    if args.vocab is not None and args.task == "lm":
        raise ValueError(f"--vocab {args.vocab}: task lm takes its vocabulary from the corpus tokenizer; leave "
                         f"--vocab out")
    st = TrainSettings(task=args.task, steps=args.steps, seed=args.seed, batch=args.batch, n=args.n, lr=args.lr,
                       eval_every=args.eval_every, threads=args.threads)
    cfg = decoder_from_args(args, args.n) if args.task != "lm" else None  # lm: its vocabulary is the corpus's
    require_extra()
    from lnrecency.experiments.decoders.train import OUTPUT_NAMES, save, train
    from lnrecency.files.atomic import check_out

    out = Path(args.out)
    check_out(out, OUTPUT_NAMES)  # before the training: the folder, and no user file under our names
    data = None
    if args.task == "lm":
        try:
            import tokenizers  # noqa: F401
        except ImportError:
            raise ValueError("train lm needs the tokenizers package: python3 -m pip install -e '.[models]'") from None
        from lnrecency.experiments.text.corpus import CorpusData, load_corpus

        corpus = load_corpus(args.corpus, progress=None)
        data = CorpusData(corpus)
        from dataclasses import replace

        cfg = replace(decoder_from_args(args, args.n), vocab=corpus.vocab)  # the tokenizer fixes the vocabulary
    if args.device == "cuda":
        import os

        import torch

        if not torch.cuda.is_available():
            raise ValueError("--device cuda: no CUDA device is available to this torch build")
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    if args.device == "cpu":
        from lnrecency.experiments.decoders.train import check_train_time

        check_train_time(cfg, st)  # before any work (the memory check follows in train)
    result = train(cfg, st, progress=None, data=data, device=args.device)
    from lnrecency.experiments.probes.probe_decoder import induction_score

    extra = {"induction_score": induction_score(result.model)[0]} if args.task in ("induction", "lm") else {}
    if args.task == "lm":
        extra.update({"corpus": str(corpus.root), "corpus_key": corpus.key, "corpus_tokens": corpus.tokens,
                      "device": args.device})
    save(result, out, extra={"seconds": result.seconds, **extra})
    if args.json:
        print((out / "config.json").read_text(), end="")
    else:
        held = result.final_heldout
        print(f"trained {cfg.label()} on {st.task} for {st.steps} steps in {result.seconds:.1f} s; final loss "
              f"{result.log[-1]['train_loss']:.4f}" + (f", held-out {held:.4f}" if held is not None else "")
              + (f", induction score {extra['induction_score']:.3f}" if extra else "") + f"; wrote {out}/")
    return 0
