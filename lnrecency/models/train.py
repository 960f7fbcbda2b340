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

from lnrecency.atomic import publish, staged_directory
from lnrecency.models.config import HELDOUT_SEED, MAX_TOKENS, DecoderConfig, TrainSettings
from lnrecency.models.decoder import Decoder, build
from lnrecency.models.tasks import batch

__all__ = ["TrainSettings", "TrainResult", "train", "save", "load", "HELDOUT_SEED", "deterministic",
           "heldout_loss", "MAX_TOKENS"]

@dataclass
class TrainResult:
    model: Decoder
    settings: TrainSettings
    log: list = field(default_factory=list)  # [{"step", "train_loss", "heldout_loss"}]
    snapshots: list = field(default_factory=list)  # [(step, heldout_loss, state_dict)] when asked for
    seconds: float = 0.0
    stopped: str = "cap"  # "converged" (the convergence rule) or "cap" (st.steps reached)

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


def converged(log: list, st: TrainSettings) -> bool:
    """The convergence rule at the last evaluation of ``log`` (step t): t >= min_steps and the held-out loss
    improved by less than ``st.converge`` (relative) since the last evaluation at or before (1 - WINDOW) t."""
    if st.converge <= 0 or not log:
        return False
    t, now = log[-1]["step"], log[-1]["heldout_loss"]
    if t < max(st.min_steps, 1) or now is None:
        return False
    then = [e["heldout_loss"] for e in log if e["step"] <= (1.0 - CONVERGE_WINDOW) * t][-1]
    return (then - now) < st.converge * abs(then)


def train(cfg: DecoderConfig, st: TrainSettings, *, progress: bool | None = False, snapshots: bool = False,
          on_eval=None, data=None, device: str = "cpu") -> TrainResult:
    """Train a decoder of ``cfg`` on ``st.task``; ``snapshots``: keep a copy of the weights at every
    held-out evaluation; ``on_eval(step, model, entry)``: called at every held-out evaluation (the model in
    eval mode; it must not change the model). With ``st.converge`` > 0 training stops at the first
    evaluation where :func:`converged` holds (``result.stopped`` = "converged"), else at ``st.steps``
    ("cap"). ``data``: the batches of task "lm" (lnrecency.models.corpus.CorpusData: ``train(n, size, rng)``
    and ``heldout(n, size, rng)``). ``device``: "cpu" (deterministic, byte-identical) or "cuda" (for the scale
    where induction heads form on text; CUDA kernels are not bit-reproducible, so a GPU run is not)."""
    if st.task == "lm" and data is None:
        raise ValueError("task 'lm' trains on a corpus: give --corpus DIR")
    if cfg.is_identity:
        raise ValueError("the identity decoder has no parameters to train")
    if st.n > cfg.context:
        raise ValueError(f"n must be <= the model's context {cfg.context}; got n={st.n}")
    start = time.perf_counter()
    with deterministic(st.threads):
        model = build(cfg, st.seed).to(device)
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
        from lnrecency.progress import Progress

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
        save_file(state, str(stage / "model.safetensors"), metadata={"format": "pt"})
        (stage / "train_log.json").write_text(json.dumps(result.log, indent=1) + "\n")
        meta = {"format": "lnrecency-decoder-1", "decoder": result.model.cfg.as_dict(),
                "training": asdict(result.settings), "final_heldout_loss": result.final_heldout,
                **(extra or {}), "files": ["model.safetensors", "config.json", "train_log.json"]}
        (stage / MANIFEST).write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n")
        publish(stage, out)
    return out


def load(model_dir: str | Path) -> tuple[Decoder, dict]:
    """A checkpoint folder written by :func:`save`: (model in eval mode, its config.json)."""
    from safetensors.torch import load_file

    path = Path(model_dir)
    if not (path / MANIFEST).is_file() or not (path / "model.safetensors").is_file():
        raise ValueError(f"MODEL_DIR must be a checkpoint folder written by `lnrecency train` (config.json and "
                         f"model.safetensors); got {str(model_dir)!r}")
    try:
        meta = json.loads((path / MANIFEST).read_text())
    except (OSError, ValueError):
        raise ValueError(f"{str(path / MANIFEST)!r} is not a readable JSON file") from None
    if not isinstance(meta, dict) or meta.get("format") != "lnrecency-decoder-1":
        raise ValueError(f"{str(path / MANIFEST)!r} is not an lnrecency checkpoint configuration")
    cfg = DecoderConfig.from_dict(meta["decoder"])
    model = Decoder(cfg)
    try:
        model.load_state_dict(load_file(str(path / "model.safetensors")), strict=True)
    except (RuntimeError, OSError) as exc:
        raise ValueError(f"the weights in {str(path)!r} do not match its configuration: "
                         f"{str(exc).splitlines()[0]}") from None
    model.eval()
    return model, meta
