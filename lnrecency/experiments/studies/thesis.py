"""The paper's thesis in trained decoders (our formulation): NoPE decoders trained on the induction task to a
convergence rule, probed on their training distribution (and on random tokens, beside it) along training.

Design (``ThesisSettings``): architectures attn2 (2 attention-only layers), attn4 (4), mlp2 (2 layers with an
MLP); normalisation layernorm | rmsnorm | none (pre-LN placement, residual, no positions); 5 training seeds
each (3 in the quick smoke test); width 64, 4 heads, vocabulary 64, sequences of 32 tokens; AdamW as in
:mod:`lnrecency.experiments.decoders.train`, trained until the held-out loss improves by less than 1% over the last 20%
of steps (at least 1000 steps, at most 5000).

Probes (:mod:`lnrecency.experiments.probes.probe`), per run on its own probe sequences (a seed per run, so intervals
over
training seeds carry probe noise), in two variants: ``task`` (the training distribution: induction
sequences, BOS first, the BOS key left out of slopes and RP, its attention share reported as the sink) and
``random`` (the neutral control: BOS first, then content tokens uniform over the vocabulary). At the
start and the end, beside them: the BOS response (a diagnostic), the training distribution without its BOS
(``task-no-bos``, every key in) and the layer slope over each copy's rows (``regions``: the induction task's
first and second copy). Full probes at initialisation and at the end;
a light probe (slopes and sink) at every held-out evaluation: the trajectory, from which the 1/4 and 1/2
stages and the matched-loss stage (interpolated between the two evaluations that bracket the target loss)
are read.

Initialisation (theory for independent random W): with W_Q, W_K of independent N(0, s^2) entries, independent
of the layer's input y, the logit S_ij = (W_Q y_i).(W_K y_j) / sqrt(d_h) has E_W S_ij = 0 for every (i, j) (flat:
no positional information in the expected logits) and E_W S_ij^2 = s^4 |y_i|^2 |y_j|^2 (exact for Gaussian W:
the d_h products are uncorrelated, each of variance s^4 |y_i|^2 |y_j|^2). Checked per layer on the training
distribution: the ratio R = sum S^2 / (s^4 sum |y_i|^2 |y_j|^2) over sequences and pairs j <= i, averaged
over heads, one value per seed.

Independent runs train in parallel worker processes (one torch thread each, as serially: the same bytes).
Each run is cached (JSON, by a hash of its configuration and settings) under ``$LNRECENCY_CACHE`` or
``~/.cache/lnrecency``; training is deterministic, so a cached run equals a fresh one.
"""
from __future__ import annotations

from dataclasses import asdict

import numpy as np
import torch

from lnrecency.experiments.decoders.decoder import build
from lnrecency.experiments.decoders.train import deterministic, train
from lnrecency.experiments.probes.probe_decoder import induction_score, probe_decoder
from lnrecency.experiments.studies.thesis_config import (
    ARCHS,
    NORMS,
    RUN_KEYS,
    RUN_SHAPE,
    STAGES,
    VARIANTS,
    VERSION,
    ThesisResults,
    ThesisSettings,
    cache_path,
    is_cached,
    run_check,
)

__all__ = ["ThesisSettings", "ARCHS", "NORMS", "STAGES", "run_thesis", "ThesisResults", "train_run",
           "VERSION", "is_cached"]

def _layers(pr, full: bool) -> list:
    out = []
    for lp in pr.layers:
        rec = {"layer": lp.layer, "phase": lp.phase, "slope": lp.slope, "slope_se": lp.slope_se, "rp": lp.rp,
               "rp_se": lp.rp_se, "sink": lp.sink, "regions": {k: v[0] for k, v in lp.regions.items()}}
        if full:
            law = [h.norm_law for h in lp.heads if h.norm_law is not None]
            prof = [h.norm_profile for h in lp.heads if h.norm_profile is not None]
            rec.update({"rows_recency": len(lp.rows_recency),
                        "rows_earlier": len(lp.rows_earlier),
                        "diag_normalised": np.nan_to_num(lp.diag_normalised).tolist(),
                        "norm_profile": np.mean(prof, axis=0).tolist() if prof else None,
                        "norm_law": np.mean(law, axis=0).tolist() if law else None})
        out.append(rec)
    return out


def _stage_record(model, st: ThesisSettings, arch: str, norm: str, seed: int) -> dict:
    """Full probes of both variants: the task variant's record with the random variant's beside it."""
    pr = probe_decoder(model, st.probing(arch, norm, seed, "task"), task="induction")
    rnd = probe_decoder(model, st.probing(arch, norm, seed, "random"), task="induction")
    bos = probe_decoder(model, st.probing(arch, norm, seed, "bos-response"), task="induction")
    nobos = probe_decoder(model, st.probing(arch, norm, seed, "task-no-bos"), task="induction")
    qk = pr.assumptions.get("layers", [])
    return {"layers": _layers(pr, True), "random": {"layers": _layers(rnd, True)},
            "bos-response": {"layers": _layers(bos, False)}, "task-no-bos": {"layers": _layers(nobos, False)},
            "w_qk_distance": float(np.mean([h["distance"] for lay in qk for h in lay["heads"]])) if qk else None,
            "alpha_tokens": pr.assumptions.get("alpha_tokens"), "alpha_inputs": pr.assumptions.get("alpha_inputs")}


def init_second_moment(model, st: ThesisSettings, sigma: float, probe_seed: int = 0) -> list:
    """Per layer and head: R = sum S_ij^2 / (sigma^4 sum |y_i|^2 |y_j|^2) over the probe's training-distribution
    sequences and pairs j <= i (the init theory predicts E_W R = 1)."""
    from lnrecency.experiments.decoders.tasks import batch

    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([probe_seed, 0])))
    toks, _ = batch("induction", st.n, st.probe_sequences, st.vocab, rng)
    with torch.no_grad():
        _, traces = model(torch.from_numpy(toks), trace=True)
    mask = torch.ones(st.n, st.n, dtype=torch.bool).tril()
    out = []
    for tr in traces:
        y2 = (tr.normed.double() ** 2).sum(-1)  # (B, n)
        pred = (sigma ** 4 * y2[:, :, None] * y2[:, None, :])[:, mask].sum()
        num = (tr.logits.double() ** 2)[:, :, mask].sum((0, 2))  # per head
        out.append((num / pred).tolist())
    return out


def train_run(arch: str, norm: str, seed: int, st: ThesisSettings) -> dict:
    """Train and probe one run (a worker's job; imports nothing it does not need)."""
    cfg, ts = st.decoder(arch, norm), st.training(seed)
    with deterministic(1):
        init_model = build(cfg, seed)
        init_model.eval()
        init = _stage_record(init_model, st, arch, norm, seed)
        init["second_moment_ratio"] = init_second_moment(init_model, st, cfg.init_std,
                                                         st.probe_seed(arch, norm, seed))
    trajectory = []

    def on_eval(step, model, entry) -> None:
        rec = {"step": step, "heldout_loss": entry["heldout_loss"]}
        for tokens in VARIANTS[:2]:  # the trajectory: task and the neutral control (the BOS response at init and end)
            pr = probe_decoder(model, st.probing(arch, norm, seed, tokens, light=True), task="induction", light=True)
            rec[tokens] = [{"slope": lp.slope, "slope_se": lp.slope_se, "rp": lp.rp, "sink": lp.sink}
                           for lp in pr.layers]
        trajectory.append(rec)

    res = train(cfg, ts, on_eval=on_eval)
    with deterministic(1):
        final = _stage_record(res.model, st, arch, norm, seed)
        score, _ = induction_score(res.model)
    return {"arch": arch, "norm": norm, "seed": seed, "config": cfg.as_dict(), "training": asdict(ts),
            "log": res.log, "seconds": res.seconds, "stopped": res.stopped, "induction_score": score,
            "init": init, "final": final, "trajectory": trajectory}


def run_thesis(settings: ThesisSettings, *, use_cache: bool = True, progress: bool | None = False,
               workers: int | None = None, scheduler: str = "local") -> ThesisResults:
    """Train (or read from the cache) every run of ``settings`` and probe it; ``workers`` independent runs
    train at once in worker processes (lnrecency.experiments.decoders.parallel; default min(2, CPUs); 1: serially). The
    result is the same, byte for byte, whatever the number of workers."""
    from lnrecency.experiments.run_cache import cached_jobs

    st = settings
    jobs = [(a, m, s) for a in st.archs for m in st.norms for s in st.seeds]
    runs = cached_jobs(train_run, jobs, lambda job: cache_path(st, *job), args_of=lambda job: (*job, st),
                       use_cache=use_cache, required=RUN_KEYS, what="thesis runs", progress=progress,
                       workers=workers, shape=RUN_SHAPE, check_of=lambda job: run_check(*job),
                       scheduler=scheduler)
    return ThesisResults(st, runs)
