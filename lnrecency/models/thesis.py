"""The paper's thesis in trained decoders (our formulation): NoPE decoders trained on the induction task,
probed with the theory's diagnostics at initialisation, after training, and at matched held-out loss.

Design (``ThesisSettings``): architectures attn2 (2 attention-only layers), attn4 (4), mlp2 (2 layers with an
MLP); normalisation layernorm | rmsnorm | none (pre-LN placement, residual, no positions); at least 3 training
seeds each; width 64, 4 heads, vocabulary 64, sequences of 32 tokens; AdamW as in :mod:`lnrecency.models.train`.
Every run is probed on the same random-token sequences (:mod:`lnrecency.models.probe`).

Stages of each run: ``init`` (step 0), ``final`` (last step) and ``matched``: the first evaluation at which the
run's held-out loss is <= the loss every run of its architecture reached (the largest final held-out loss
among them), so normalisations are compared at equal training progress as well as at equal steps.

Initialisation (theory for independent random W): with W_Q, W_K of independent N(0, s^2) entries, independent
of the layer's input y, the logit S_ij = (W_Q y_i).(W_K y_j) / sqrt(d_h) has E_W S_ij = 0 for every (i, j) (flat:
no positional information in the expected logits) and E_W S_ij^2 = s^4 |y_i|^2 |y_j|^2 (exact for Gaussian W:
the d_h products are uncorrelated, each of variance s^4 |y_i|^2 |y_j|^2). Position can then only enter through
the norms |y_i|, which a normalisation fixes (|y|^2 = d for LayerNorm / RMSNorm at initial gains). Checked
per layer: the ratio R = sum S^2 / (s^4 sum |y_i|^2 |y_j|^2) over sequences and pairs j <= i, one value per
(seed, head) (independent draws of W), whose mean must be 1 within a t-interval.

Each run is cached (JSON, by a hash of its configuration and settings) under ``$LNRECENCY_CACHE`` or
``~/.cache/lnrecency``; training is deterministic, so a cached run equals a fresh one.
"""
from __future__ import annotations

import json
from dataclasses import asdict

import numpy as np
import torch

from lnrecency.models.decoder import build
from lnrecency.models.probe import induction_score, probe_decoder
from lnrecency.models.thesis_config import (ARCHS, NORMS, STAGES, VERSION, ThesisResults, ThesisSettings,
                                            cache_dir, cache_path, is_cached)
from lnrecency.models.train import deterministic, train

__all__ = ["ThesisSettings", "ARCHS", "NORMS", "STAGES", "run_thesis", "ThesisResults",
           "cache_dir", "VERSION", "is_cached"]

def _stage_record(model, st: ThesisSettings, task: str) -> dict:
    pr = probe_decoder(model, st.probing(), task=task)
    layers = []
    for lp in pr.layers:
        heads = lp.heads
        law = [h.norm_law for h in heads if h.norm_law is not None]
        prof = [h.norm_profile for h in heads if h.norm_profile is not None]
        layers.append({"layer": lp.layer, "phase": lp.phase, "slope": lp.slope, "slope_se": lp.slope_se,
                       "rp": lp.rp, "rp_se": lp.rp_se, "rows_recency": len(lp.rows_recency),
                       "rows_earlier": len(lp.rows_earlier),
                       "diag_normalised": np.nan_to_num(lp.diag_normalised).tolist(),
                       "norm_profile": np.mean(prof, axis=0).tolist() if prof else None,
                       "norm_law": np.mean(law, axis=0).tolist() if law else None})
    qk = pr.assumptions.get("layers", [])
    return {"layers": layers, "w_qk_distance": float(np.mean([h["distance"] for lay in qk for h in lay["heads"]]))
            if qk else None, "alpha_tokens": pr.assumptions.get("alpha_tokens"),
            "alpha_inputs": pr.assumptions.get("alpha_inputs")}


def init_second_moment(model, st: ThesisSettings, sigma: float) -> list:
    """Per layer and head: R = sum S_ij^2 / (sigma^4 sum |y_i|^2 |y_j|^2) over the probe's sequences and pairs
    j <= i (the init theory predicts E_W R = 1)."""
    from lnrecency.models.tasks import random_tokens

    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([st.probing().seed, 0])))
    toks = torch.from_numpy(random_tokens(st.n, st.probe_sequences, st.vocab, rng))
    with torch.no_grad():
        _, traces = model(toks, trace=True)
    mask = torch.ones(st.n, st.n, dtype=torch.bool).tril()
    out = []
    for tr in traces:
        y2 = (tr.normed.double() ** 2).sum(-1)  # (B, n)
        pred = (sigma ** 4 * y2[:, :, None] * y2[:, None, :])[:, mask].sum()
        num = (tr.logits.double() ** 2)[:, :, mask].sum((0, 2))  # per head
        out.append((num / pred).tolist())
    return out


def _run(arch: str, norm: str, seed: int, st: ThesisSettings, *, use_cache: bool, progress: bool) -> dict:
    cfg, ts = st.decoder(arch, norm), st.training(seed)
    path = cache_path(st, arch, norm, seed)
    if use_cache and path.is_file():
        try:
            rec = json.loads(path.read_text())
            if "matched" in rec:  # written only once complete
                return rec
        except (OSError, ValueError):
            pass
    with deterministic(ts.threads):
        init_model = build(cfg, seed)
        init_model.eval()
        init = _stage_record(init_model, st, ts.task)
        init["second_moment_ratio"] = init_second_moment(init_model, st, cfg.init_std)
    res = train(cfg, ts, snapshots=True, progress=progress)
    final = _stage_record(res.model, st, ts.task)
    score, _ = induction_score(res.model)
    rec = {"arch": arch, "norm": norm, "seed": seed, "config": cfg.as_dict(), "training": asdict(ts),
           "log": res.log, "seconds": res.seconds, "induction_score": score, "init": init, "final": final,
           "snapshots": {str(step): loss for step, loss, _ in res.snapshots}}
    rec["_states"] = {step: state for step, _, state in res.snapshots}
    return rec


def _save(rec: dict, st: ThesisSettings) -> None:
    from lnrecency.atomic import atomic_write_text

    clean = {k: v for k, v in rec.items() if not k.startswith("_")}
    atomic_write_text(cache_path(st, rec["arch"], rec["norm"], rec["seed"]), json.dumps(clean) + "\n")


def sign_of(iv: tuple[float, float, float]) -> str:
    """'positive' when the interval lies above 0, 'negative' below, 'includes 0' otherwise."""
    return "positive" if iv[1] > 0 else "negative" if iv[2] < 0 else "includes 0"


def run_thesis(settings: ThesisSettings, *, use_cache: bool = True, progress: bool = False) -> ThesisResults:
    """Train (or read from the cache) every run of ``settings`` and probe it at its three stages."""
    from tqdm import tqdm

    st = settings
    out = ThesisResults(st)
    jobs = [(a, m, s) for a in st.archs for m in st.norms for s in st.seeds]
    bar = tqdm(jobs, disable=not progress, desc="thesis runs", unit="model")
    by_arch: dict = {}
    for arch, norm, seed in bar:
        bar.set_postfix(run=f"{arch}/{norm}/seed {seed}", refresh=False)
        by_arch.setdefault(arch, []).append(_run(arch, norm, seed, st, use_cache=use_cache, progress=False))
    for arch, runs in by_arch.items():
        target = max(r["log"][-1]["heldout_loss"] for r in runs)
        for r in runs:
            if "matched" not in r:
                step = min(int(s) for s, loss in r["snapshots"].items() if loss <= target + 1e-12)
                model = build(st.decoder(arch, r["norm"]), r["seed"])
                model.load_state_dict(r["_states"][step])
                model.eval()
                r["matched"] = {**_stage_record(model, st, "induction"), "step": step, "target_loss": target}
                _save(r, st)
            r.pop("_states", None)
        out.runs += runs
    return out
