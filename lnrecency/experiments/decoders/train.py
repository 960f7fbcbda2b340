"""Training on CPU, deterministic: the same configuration and seed give byte-identical weight files.

Determinism: initial weights from ``torch.manual_seed(seed)``; training batches from
numpy ``Generator(PCG64(SeedSequence([seed, 1])))`` drawn in step order; the held-out set from a fixed
seed shared by every model (so held-out losses of different models are comparable); deterministic
torch kernels (``torch.use_deterministic_algorithms``) and a fixed number of intra-op threads
(``TrainSettings.threads``, recorded with the checkpoint).

Optimiser: AdamW (betas 0.9, 0.98), linear warm-up over ``warmup`` steps then constant learning rate,
gradient norm clipped at 1. Loss: cross-entropy of the next token at the task's target positions.

A checkpoint is a folder: ``model.safetensors`` (weights), ``config.json`` (decoder configuration,
training settings, final losses, the files it owns) and ``train_log.json`` (losses per evaluation). It is
written into a hidden staging folder and renamed into place, so an interrupted run leaves no partial one.
"""
from __future__ import annotations

import copy
import json
import math
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Iterator

import numpy as np
import torch

from lnrecency.experiments.decoders.decoder import Decoder, build
from lnrecency.experiments.decoders.decoder_config import HELDOUT_SEED, MAX_TOKENS, DecoderConfig, TrainSettings
from lnrecency.experiments.decoders.tasks import batch
from lnrecency.files.atomic import publish, staged_directory

__all__ = ["TrainSettings", "TrainResult", "train", "save", "load", "HELDOUT_SEED", "deterministic",
           "heldout_loss", "MAX_TOKENS"]

@dataclass
class TrainResult:
    model: Decoder
    settings: TrainSettings
    log: list = field(default_factory=list)  # [{"step", "train_loss", "heldout_loss"}]
    snapshots: list = field(default_factory=list)  # [(step, heldout_loss, state_dict)] when asked for
    seconds: float = 0.0
    stopped: str = "cap"  # "converged" (the convergence rule), "target" (``stop``) or "cap" (st.steps reached)

    @property
    def final_heldout(self) -> float | None:
        vals = [e["heldout_loss"] for e in self.log if e.get("heldout_loss") is not None]
        return vals[-1] if vals else None


@contextmanager
def deterministic(threads: int) -> Iterator[None]:
    """Deterministic torch kernels and a fixed intra-op thread count, restored afterwards."""
    old_threads, old_det = torch.get_num_threads(), torch.are_deterministic_algorithms_enabled()
    torch.set_num_threads(threads)
    torch.use_deterministic_algorithms(True)
    try:
        yield
    finally:
        torch.set_num_threads(old_threads)
        torch.use_deterministic_algorithms(old_det)


def _loss(model: Decoder, tokens: np.ndarray, targets: np.ndarray) -> torch.Tensor:
    device = next(model.parameters()).device
    logits, _ = model(torch.from_numpy(tokens).to(device))
    return torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                             torch.from_numpy(targets).reshape(-1).to(device), ignore_index=-1)


def heldout_set(cfg: DecoderConfig, st: TrainSettings, data=None) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([HELDOUT_SEED])))
    if data is not None:
        return data.heldout(st.n, st.eval_sequences, rng)
    return batch(st.task, st.n, st.eval_sequences, cfg.vocab, rng)


def heldout_loss(model: Decoder, data: tuple[np.ndarray, np.ndarray]) -> float:
    was = model.training
    model.eval()
    with torch.no_grad():
        out = float(_loss(model, *data))
    model.train(was)
    return out


#: the window of the convergence rule: the improvement is measured since the evaluation at (1 - WINDOW) t
CONVERGE_WINDOW = 0.2


#: a run whose held-out loss is within this fraction of its first evaluation's has not started learning: the
#: convergence rule does not stop it (issue: no-norm runs "converged" at step 200 at their initial loss)
MIN_PROGRESS = 0.05


def converged(log: list, st: TrainSettings) -> bool:
    """The convergence rule at the last evaluation of ``log`` (step t): t >= min_steps, the held-out loss is at
    least :data:`MIN_PROGRESS` (relative) below the first evaluation's (a run still at its initial loss has not
    started learning, and is never stopped there), and it improved by less than ``st.converge`` (relative) since
    the last evaluation at or before (1 - WINDOW) t."""
    if st.converge <= 0 or not log:
        return False
    t, now = log[-1]["step"], log[-1]["heldout_loss"]
    if t < max(st.min_steps, 1) or now is None:
        return False
    first = next((e["heldout_loss"] for e in log if e["heldout_loss"] is not None), now)
    if now > (1.0 - MIN_PROGRESS) * first:  # a plateau at the initial loss is not convergence: it trains on
        return False
    then = [e["heldout_loss"] for e in log if e["step"] <= (1.0 - CONVERGE_WINDOW) * t][-1]
    return (then - now) < st.converge * abs(then)


#: memory a training run may take (weights, AdamW state, activations kept for the backward pass)
MAX_TRAIN_BYTES = 4 * 2**30


def train_bytes(cfg: DecoderConfig, st: TrainSettings) -> int:
    """An upper estimate of a training run's memory (float32): weights, gradients and AdamW's two moments
    (4 x parameters), plus the activations the backward pass keeps per step: per layer about 16 (B, n, d)
    tensors and 4 (B, H, n, n) attention maps, and the output logits (3 x B n vocab)."""
    d, n, b = cfg.d_model, st.n, st.batch
    params = cfg.vocab * d * 2 + cfg.context * d + cfg.n_layers * (4 * d * d + 2 * cfg.mlp_ratio * d * d * cfg.mlp
                                                                   + 8 * d)
    acts = cfg.n_layers * b * (16 * n * d + 4 * cfg.n_heads * n * n) + 3 * b * n * cfg.vocab
    return 4 * (4 * params + acts)


#: the time model of a CPU training run on one thread, fitted by benchmarks/bench_estimates.py --fit on this
#: project's 2-core machine (8 runs, 1-6 layers, d = 32..256, n = 16..256, batch 8-128; a per-step constant
#: fitted to 0): seconds = LOAD_MARGIN x (steps x (LAYER x layers + tokens x FLOPs per token / RATE)
#: + evaluations x EVAL x held-out tokens x FLOPs per token / RATE)
TRAIN_COST = {"LAYER": 7.05e-4, "RATE": 8.51e10, "EVAL": 0.413}
#: an interactive answer for `lnrecency train` (the experiments' own runs are not limited); --max-seconds raises it
MAX_TRAIN_SECONDS = 3600.0


def train_flops_per_token(cfg: DecoderConfig, n: int) -> float:
    """Model FLOPs per token of one training step (benchmarks/bench_train.py): 6 x the weights of every linear
    map (attention, MLP, unembedding) plus 6 x layers x n x d for the causal attention products."""
    d = cfg.d_model
    linear = cfg.n_layers * (4 * d * d + 2 * cfg.mlp_ratio * d * d * cfg.mlp) + cfg.vocab * d
    return 6.0 * linear + 6.0 * cfg.n_layers * n * d


def train_seconds(cfg: DecoderConfig, st: TrainSettings) -> float:
    """Estimated time of :func:`train` on the CPU (:data:`TRAIN_COST`), when it runs to ``st.steps``."""
    from lnrecency.theory.limit import LOAD_MARGIN

    c = TRAIN_COST
    f = train_flops_per_token(cfg, st.n)
    per_step = c["LAYER"] * cfg.n_layers + st.batch * st.n * f / c["RATE"]
    evals = (st.steps // st.eval_every + 2) if st.eval_every else 0
    return LOAD_MARGIN * (st.steps * per_step + evals * c["EVAL"] * st.eval_sequences * st.n * f / c["RATE"])


def check_train_time(cfg: DecoderConfig, st: TrainSettings) -> None:
    """Refuse (ValueError, before any work) a run estimated above MAX_TRAIN_SECONDS (``--max-seconds``)."""
    from lnrecency.runtime.timelimit import refusal, time_limit

    seconds = train_seconds(cfg, st)
    if seconds > time_limit(MAX_TRAIN_SECONDS):
        raise refusal(f"training {cfg.label()} for --steps {st.steps} at --batch {st.batch}, --n {st.n}", seconds,
                      time_limit(MAX_TRAIN_SECONDS), "lower --steps, --batch, --n, --width or --layers")


def train(cfg: DecoderConfig, st: TrainSettings, *, progress: bool | None = False, snapshots: bool = False,
          on_eval=None, data=None, device: str = "cpu", first_share: dict | None = None, stop=None) -> TrainResult:
    """Train a decoder of ``cfg`` on ``st.task``; ``snapshots``: keep a copy of the weights at every
    held-out evaluation; ``on_eval(step, model, entry)``: called at every held-out evaluation (the model in
    eval mode; it must not change the model). With ``st.converge`` > 0 training stops at the first
    evaluation where :func:`converged` holds (``result.stopped`` = "converged"), else at ``st.steps``
    ("cap"). ``data``: the batches of task "lm" (lnrecency.experiments.text.corpus.CorpusData: ``train(n, size,
    rng)``
    and ``heldout(n, size, rng)``). ``device``: "cpu" (deterministic, byte-identical) or "cuda" (for the scale
    where induction heads form on text; CUDA kernels are not bit-reproducible, so a GPU run is not).
    ``first_share``: {layer index: each query row's share of the first key}, set in those layers for the whole
    training (:func:`lnrecency.experiments.decoders.decoder.impose_first_share`; plan v4's U1 and U2). ``stop(entry)``:
    called with each held-out evaluation's log entry; training stops there when it returns True (``result.stopped``
    = "target"; plan v4's N1 stops at a held-out loss)."""
    if st.task == "lm" and data is None:
        raise ValueError("task 'lm' trains on a corpus: give --corpus DIR")
    if cfg.is_identity:
        raise ValueError("the identity decoder has no parameters to train")
    if st.n > cfg.context:
        raise ValueError(f"n must be <= the model's context {cfg.context}; got n={st.n}")
    need = train_bytes(cfg, st)
    if need > MAX_TRAIN_BYTES:
        raise ValueError(f"training {cfg.label()} with --batch {st.batch} at n = {st.n} needs about "
                         f"{need / 2**30:.1f} GiB, above the limit {MAX_TRAIN_BYTES / 2**30:.0f} GiB; lower --batch, "
                         f"--n, --width or --layers")
    start = time.perf_counter()
    with deterministic(st.threads):
        model = build(cfg, st.seed).to(device)
        if first_share:
            from lnrecency.experiments.decoders.decoder import impose_first_share

            impose_first_share(model, first_share)
        model.train()
        opt = torch.optim.AdamW(model.parameters(), lr=st.lr, betas=(0.9, 0.98), weight_decay=st.weight_decay)
        warm = max(st.warmup, 1)
        sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda t: min(1.0, (t + 1) / warm))
        rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([st.seed, 1])))
        held = heldout_set(cfg, st, data) if st.eval_every else None
        result = TrainResult(model, st)

        def evaluate(step: int, train_loss: float | None) -> None:
            entry = {"step": step, "train_loss": train_loss,
                     "heldout_loss": heldout_loss(model, held) if held is not None else None}
            result.log.append(entry)
            if snapshots:
                result.snapshots.append((step, entry["heldout_loss"], copy.deepcopy(model.state_dict())))
            if on_eval is not None:
                was = model.training
                model.eval()
                on_eval(step, model, entry)
                model.train(was)

        evaluate(0, None)
        from lnrecency.runtime.progress import Progress

        bar = Progress(st.steps, f"train {st.task}", "steps", enabled=progress)
        for step in range(1, st.steps + 1):
            tokens, targets = (data.train(st.n, st.batch, rng) if data is not None
                               else batch(st.task, st.n, st.batch, cfg.vocab, rng))
            loss = _loss(model, tokens, targets)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            value = loss.item()
            if not math.isfinite(value):
                raise ValueError(f"training diverged at step {step} (loss {value}); lower --lr")
            bar.update(1, f"loss {value:.3f}")
            if st.eval_every and (step % st.eval_every == 0 or step == st.steps):
                evaluate(step, value)
                if stop is not None and stop(result.log[-1]):
                    result.stopped = "target"
                    break
                if converged(result.log, st):
                    result.stopped = "converged"
                    break
            elif step == st.steps:
                result.log.append({"step": step, "train_loss": value, "heldout_loss": None})
        bar.close()
        model.eval()
        if device != "cpu":
            model.to("cpu")
    result.seconds = time.perf_counter() - start
    return result


MANIFEST = "config.json"
OUTPUT_NAMES = ("model.safetensors", "config.json", "train_log.json")  # checked before the work


def save(result: TrainResult, out: str | Path, *, extra: dict | None = None) -> Path:
    """Write the checkpoint folder ``out`` (staged, then renamed into place)."""
    from safetensors.torch import save_file

    out = Path(out)
    with staged_directory(out, OUTPUT_NAMES) as stage:
        state = {k: v.detach().contiguous() for k, v in result.model.state_dict().items()}
        try:
            save_file(state, str(stage / "model.safetensors"), metadata={"format": "pt"})
        except OSError:
            raise
        except Exception as exc:  # safetensors' own error type (e.g. the disk filled up): one line, nothing left
            raise OSError(f"cannot write the checkpoint into {str(out)!r}: {str(exc).splitlines()[0][:200]}") from None
        (stage / "train_log.json").write_text(json.dumps(result.log, indent=1) + "\n")
        meta = {"format": "lnrecency-decoder-1", "decoder": result.model.cfg.as_dict(),
                "training": asdict(result.settings), "final_heldout_loss": result.final_heldout,
                **(extra or {}), "files": ["model.safetensors", "config.json", "train_log.json"]}
        imposed = interventions_of(result.model)
        if imposed:  # part of the model: restored by load (issue 82: an imposed share never lost without a word)
            meta["interventions"] = imposed
        (stage / MANIFEST).write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n")
        publish(stage, out)
    return out


#: the interventions a checkpoint records (config.json's "interventions"), each restored by :func:`load`
INTERVENTIONS = ("imposed_first_share",)


def interventions_of(model) -> dict:
    """What is imposed on ``model`` beyond its weights, as config.json records it: {"imposed_first_share": {layer
    index (0-based, as text): the share of each query row}} ({} when nothing is)."""
    shares = {str(q): [float(x) for x in b.attn.imposed.tolist()] for q, b in enumerate(model.blocks)
              if getattr(b.attn, "imposed", None) is not None}
    return {"imposed_first_share": shares} if shares else {}


def _restore_interventions(model, meta: dict, where: str) -> None:
    """The interventions ``meta`` records, checked field by field and set on ``model`` (an unknown one refused by
    name: a checkpoint never loads as a model it is not)."""
    from lnrecency.experiments.decoders.decoder import impose_first_share

    recorded = meta.get("interventions")
    if recorded is None:
        return
    if not isinstance(recorded, dict) or set(recorded) - set(INTERVENTIONS):
        raise ValueError(f"{where}: 'interventions' must be an object with keys among {', '.join(INTERVENTIONS)}; "
                         f"got {str(recorded)[:80]!r}")
    shares = recorded.get("imposed_first_share") or {}
    if not isinstance(shares, dict) or not all(
            isinstance(k, str) and k.isdigit() and isinstance(v, list) and len(v) <= 1 << 16
            and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v) for k, v in shares.items()):
        raise ValueError(f"{where}: interventions.imposed_first_share must map layer indices (text) to lists of "
                         f"shares; got {str(shares)[:80]!r}")
    try:
        impose_first_share(model, {int(k): v for k, v in shares.items()})
    except ValueError as exc:
        raise ValueError(f"{where}: interventions.imposed_first_share: {exc}") from None


#: checkpoint limits: config.json size and nesting, and the float32 weights a probe may load (the probe's
#: activations come on top; issue 33: a damaged or oversized input is refused within 1 GiB)
MAX_CONFIG_BYTES = 2**20
MAX_CONFIG_DEPTH = 8
MAX_MODEL_BYTES = 256 * 2**20


def read_checkpoint_config(path: Path) -> tuple[dict, DecoderConfig]:
    """A checkpoint's config.json as data: (the record, its decoder configuration), each field checked."""
    from lnrecency.experiments.decoders.tasks import TASKS
    from lnrecency.files.readers import read_json

    where = f"checkpoint configuration {str(path)!r}"
    meta = read_json(path, what="checkpoint configuration", max_bytes=MAX_CONFIG_BYTES, max_depth=MAX_CONFIG_DEPTH)
    if meta.get("format") != "lnrecency-decoder-1":
        raise ValueError(f"{where} is not an lnrecency checkpoint (format {meta.get('format')!r:.60}, expected "
                         f"'lnrecency-decoder-1')")
    if "decoder" not in meta:
        raise ValueError(f"{where} lacks 'decoder' (the model's configuration)")
    training = meta.get("training")
    if not isinstance(training, dict) or training.get("task") not in TASKS + ("lm",):
        raise ValueError(f"{where}: 'training' must be an object whose 'task' is one of {', '.join(TASKS)}, lm; got "
                         f"{training!r:.100}")
    try:
        cfg = DecoderConfig.from_dict(meta["decoder"])
    except TypeError as exc:  # a field of the wrong kind that a check did not name
        raise ValueError(f"{where}: the decoder configuration is malformed ({exc})") from None
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None
    return meta, cfg


def load(model_dir: str | Path) -> tuple[Decoder, dict]:
    """A checkpoint folder written by :func:`save`: (model in eval mode, its config.json). Everything is
    checked before the model is built or a weight is read: the configuration (:func:`read_checkpoint_config`),
    the model's size (counted on torch's meta device, at most MAX_MODEL_BYTES), the safetensors header
    against the file and against the model's own tensor names and shapes (lnrecency.files.readers); after
    loading, every weight must be finite. Each refusal is a ValueError naming the file."""
    from safetensors.torch import load_file

    from lnrecency.files.readers import safetensors_header

    path = Path(model_dir)
    if not path.is_dir() or not (path / MANIFEST).exists() or not (path / "model.safetensors").exists():
        raise ValueError(f"MODEL_DIR must be a checkpoint folder written by `lnrecency train` (config.json and "
                         f"model.safetensors); got {str(model_dir)!r}")
    meta, cfg = read_checkpoint_config(path / MANIFEST)
    names = {torch.float32: "F32", torch.float64: "F64", torch.float16: "F16", torch.bfloat16: "BF16",
             torch.int64: "I64", torch.int32: "I32", torch.bool: "BOOL"}
    with torch.device("meta"):  # names, dtypes and shapes without allocating
        tensors = {k: (names.get(v.dtype, str(v.dtype)), tuple(v.shape), v.element_size())
                   for k, v in Decoder(cfg).state_dict().items()}
    shapes = {k: (t[0], t[1]) for k, t in tensors.items()}
    nbytes = sum(math.prod(t[1]) * t[2] for t in tensors.values())
    if nbytes > MAX_MODEL_BYTES:
        raise ValueError(f"{str(path / MANIFEST)!r} describes a model of {nbytes / 2**20:.0f} MiB of weights, "
                         f"above the probe's limit {MAX_MODEL_BYTES / 2**20:.0f} MiB")
    weights = path / "model.safetensors"
    header = safetensors_header(weights, what="checkpoint weights", max_bytes=2 * MAX_MODEL_BYTES + MAX_CONFIG_BYTES)
    missing = sorted(set(shapes) - set(header))
    extra = sorted(set(header) - set(shapes))
    wrong = sorted(k for k in set(shapes) & set(header) if header[k] != shapes[k])
    if missing or extra or wrong:
        parts = [f"missing {missing[:4]}" if missing else "", f"unexpected {extra[:4]}" if extra else "",
                 "wrong shape or dtype: " + ", ".join(f"{k} {header[k][0]}{list(header[k][1])} (config: "
                                                      f"{shapes[k][0]}{list(shapes[k][1])})" for k in wrong[:3])
                 if wrong else ""]
        raise ValueError(f"the weights in {str(weights)!r} do not match its configuration: "
                         + "; ".join(p for p in parts if p))
    try:
        state = load_file(str(weights))
    except Exception as exc:  # safetensors' own error type: a damaged file the header check did not catch
        raise ValueError(f"{str(weights)!r} cannot be read: {str(exc).splitlines()[0][:200]}") from None
    for name, tensor in state.items():
        if not bool(torch.isfinite(tensor).all()):
            raise ValueError(f"{str(weights)!r}: weight {name!r} holds NaN or infinite values; nothing is probed "
                             f"on it")
    model = Decoder(cfg)
    model.load_state_dict(state, strict=True)
    _restore_interventions(model, meta, f"checkpoint configuration {str(path / MANIFEST)!r}")
    model.eval()
    return model, meta
