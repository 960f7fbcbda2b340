"""TM1-TM5: the paper's thesis in trained decoders (our formulation), from :mod:`lnrecency.experiments.studies.thesis`.

Every verdict reads models trained to the convergence rule and probed on their training distribution (BOS
first, the BOS key out of slopes and RP), with the neutral random control beside it (BOS first, content tokens only);
the statistic is each run's
layer recency slope (the key-weighted least-squares slope of the head-mean attention logit against the key,
lnrecency.experiments.probes.probe) or its per-instance RP, one value per training seed (each on its own probe
sequences). The decision rules (learning gate, stability of the two probe variants, directional and
equivalence tests, Holm's procedure under one family-wise rate for all trained verdicts, universal
statements) live in :mod:`lnrecency.claims.trained_rules`.

Scale and broken assumptions are part of every setting: the models have learned W_Q, W_K, W_V, W_O (the theory
has W = I), token embeddings that are neither isotropic nor fixed, an MLP (mlp2) and training; positions are
absent (NoPE), as in the authors' trained model.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from lnrecency.claims.catalog import declared, result_source
from lnrecency.claims.declare import REGISTERED, claim
from lnrecency.claims.trained_rules import (
    QUICK,
    Part,
    RowEvidence,
    claim_rows,
    decide_parts,
    experiment_alpha,
    keep_learned,
    secondary_row,
)
from lnrecency.inference.evidence import NotRun
from lnrecency.inference.stats import SeedTest, t_interval

#: TM4's margin on the recency slope at initialisation (logit per key position): a slope below it moves the
#: expected logit by less than 0.5 nat across the n - 2 keys of a row (attention odds within a factor 1.65)
INIT_SLOPE_NATS = 0.5


#: TM4's margin on the second-moment ratio: E S^2 within 10% of s^4 |y_i|^2 |y_j|^2
RATIO_MARGIN = 0.1


#: TM3's margin on the difference of per-instance RP (RMSNorm - LayerNorm): fewer than 1 in 20 key pairs
#: ordered differently
RP_MARGIN = 0.05


LN_RECENCY = declared("TM1").text("s1")


NONE_EARLIER = declared("TM2").text("s1")


RMS_LIKE_LN = declared("TM3").text("s1")


INIT_THEORY = declared("TM4").text("s1")
# the statements are typed once, in the catalogue; the margins this module decides with must be the ones they state
for _cid, _said in (("TM3", f"less than {RP_MARGIN}"), ("TM4", f"+-{INIT_SLOPE_NATS} / (n - 2)"),
                    ("TM4", f"+-{RATIO_MARGIN} of 1")):
    if _said not in declared(_cid).text("s1"):
        raise ValueError(f"{_cid}'s statement in lnrecency/claims/catalog.py must state {_said!r} (the margin this "
                         f"module decides with)")


MATCHED = declared("TM5").text("s1")


STATEMENTS = {"TM1": LN_RECENCY, "TM2": NONE_EARLIER, "TM3": RMS_LIKE_LN, "TM4": INIT_THEORY, "TM5": MATCHED}


def seed_interval(values, level: float = 0.95) -> tuple[float, float, float]:
    """(mean, low, high): the t-interval over training seeds (lnrecency.inference.stats.t_interval)."""
    return t_interval(values, level)


def _base(res) -> dict:
    st = res.settings
    return {"scale": f"d={st.d_model}, heads={st.n_heads}, vocab={st.vocab}, n={st.n}, converged or {st.steps} "
                     f"steps, {len(st.seeds)} seeds, induction task, NoPE, pre-norm, residual",
            "probe": ("training distribution (BOS first, BOS key excluded), the neutral random control beside it "
                      "(BOS first, content tokens only); the BOS response apart, never a control"),
            "breaks": "W_Q, W_K, W_V, W_O learned (theory: I); embeddings learned; MLP where arch=mlp2; trained"}


def _gate_text(res, runs) -> str:
    st = res.settings
    losses = ", ".join(f"{r['log'][-1]['heldout_loss']:.2f}" for r in runs)
    return (f"final held-out loss <= {st.gate():.3f} = ln({st.vocab - 2}) - 1 nat; measured {losses} "
            f"(steps {', '.join(str(r['log'][-1]['step']) for r in runs)})")


def _trajectory(res, arch, norm, layer, key="slope", other=None) -> dict:
    out = {}
    for stage in ("quarter", "half", "final"):
        runs = res.select(arch, norm)
        vals = np.array(res.values(arch, norm, stage, layer, key), dtype=float)
        if other is not None:
            vals = vals - np.array(res.values(arch, other, stage, layer, key), dtype=float)
        out[stage] = (float(np.mean([res.stage_step(r, stage) for r in runs])), float(np.mean(vals)))
    return out


def _test(values, **kw) -> SeedTest | None:
    try:
        return SeedTest(tuple(values), **kw)
    except ValueError:
        return None


def thesis_parts(res) -> dict:
    """Every part of TM1-TM5 (undecided): {claim id: [(row setting, [Part, ...]), ...]}. Each statistic is
    taken over the runs that pass the learning gate (trained_rules.keep_learned)."""
    st = res.settings
    out: dict = {cid: [] for cid in STATEMENTS}

    def kept(arch, norm, stage, layer, key="slope", tokens="task", runs_ok=None):
        ok = [res.learned(r) for r in res.select(arch, norm)] if runs_ok is None else runs_ok
        return keep_learned(res.values(arch, norm, stage, layer, key, tokens), ok)

    for arch in st.archs:
        L = res.n_layers(arch)
        for cid, norm, side in (("TM1", "layernorm", "above"), ("TM2", "none", "below")):
            runs = res.select(arch, norm)
            parts = []
            for layer in range(2, L + 1):
                parts.append(Part(
                    f"{arch} layer {layer}", "recency slope",
                    _test(kept(arch, norm, "final", layer), side=side),
                    _test(kept(arch, norm, "final", layer, tokens="random"), side=side),
                    learned=sum(res.learned(r) for r in runs), seeds=len(runs), gate=_gate_text(res, runs),
                    trajectory=_trajectory(res, arch, norm, layer)))
            out[cid].append(({"arch": arch, "norm": norm, "stage": "final", "layers": f"2..{L}"}, parts))
        ln, rms = res.select(arch, "layernorm"), res.select(arch, "rmsnorm")
        parts = []
        for layer in range(2, L + 1):
            parts.append(Part(
                f"{arch} layer {layer}", "RP(RMSNorm) - RP(LayerNorm)",
                _test(kept(arch, "rmsnorm", "final", layer, "rp"), rule="equivalence", side="within",
                      margin=RP_MARGIN, other=kept(arch, "layernorm", "final", layer, "rp")),
                _test(kept(arch, "rmsnorm", "final", layer, "rp", "random"), rule="equivalence",
                      side="within", margin=RP_MARGIN, other=kept(arch, "layernorm", "final", layer, "rp", "random")),
                learned=min(sum(res.learned(r) for r in g) for g in (ln, rms)), seeds=len(ln),
                gate=_gate_text(res, ln + rms),
                trajectory=_trajectory(res, arch, "rmsnorm", layer, "rp", other="layernorm")))
        out["TM3"].append(({"arch": arch, "stage": "final", "layers": f"2..{L}"}, parts))
        margin = INIT_SLOPE_NATS / (st.n - 2)
        for norm in st.norms:
            runs = res.select(arch, norm)
            parts = []
            for layer in range(1, L + 1):
                parts.append(Part(
                    f"{arch}/{norm} layer {layer}", "recency slope at initialisation",
                    _test(res.slopes(arch, norm, "init", layer), rule="equivalence", side="within", margin=margin),
                    _test(res.slopes(arch, norm, "init", layer, "random"), rule="equivalence", side="within",
                          margin=margin), learned=len(runs), seeds=len(runs), gate="at initialisation: no gate"))
                ratio = [x for r in runs for x in r["init"]["second_moment_ratio"][layer - 1]]
                parts.append(Part(
                    f"{arch}/{norm} layer {layer}", "E S^2 / (s^4 |y_i|^2 |y_j|^2) (per seed and head)",
                    _test(ratio, rule="equivalence", side="within", margin=RATIO_MARGIN, boundary=1.0),
                    learned=len(runs), seeds=len(runs), gate="at initialisation: no gate"))
            out["TM4"].append(({"arch": arch, "norm": norm, "stage": "init", "layers": f"1..{L}"}, parts))
        parts = []
        target = res.matched(ln[0])["target_loss"]
        reached = {norm: [res.learned(r) and res.matched(r)["reached"] for r in res.select(arch, norm)]
                   for norm in ("layernorm", "none")}
        for layer in range(2, L + 1):
            parts.append(Part(
                f"{arch} layer {layer}", "slope(LayerNorm) - slope(none) at matched loss",
                _test(kept(arch, "layernorm", "matched", layer, runs_ok=reached["layernorm"]), side="above",
                      other=kept(arch, "none", "matched", layer, runs_ok=reached["none"])),
                _test(kept(arch, "layernorm", "matched", layer, tokens="random", runs_ok=reached["layernorm"]),
                      side="above", other=kept(arch, "none", "matched", layer, tokens="random",
                                               runs_ok=reached["none"])),
                learned=min(sum(v) for v in reached.values()) if target <= st.gate() else 0, seeds=len(ln),
                gate=(f"runs that pass the learning gate (final held-out loss <= {st.gate():.3f}) and reach the "
                      f"matched loss {target:.3f}, the largest final loss among them"),
                trajectory=_trajectory(res, arch, "layernorm", layer, other="none")))
        steps = {norm: float(np.mean([res.matched(r)["step"] for r in res.select(arch, norm)]))
                 for norm in ("layernorm", "none")}
        out["TM5"].append(({"arch": arch, "stage": f"matched held-out loss {target:.3f} (mean step: LayerNorm "
                                                     f"{steps['layernorm']:.0f}, none {steps['none']:.0f})",
                            "layers": f"2..{L}"}, parts))
    return out


#: the thesis comparisons on the synthetic task (TM1-TM3, TM5) are secondary (issue 40): intervals, no verdict (the
#: catalogue's primary flag)
SECONDARY_IDS = tuple(cid for cid in STATEMENTS if not declared(cid).primary)
SECONDARY = ("secondary: the synthetic induction task cannot test the thesis (its layer-2 slope is a learned "
             "pattern anchored on BOS, of the same shape with and without LayerNorm); the thesis is tested on text "
             "(TT1-TT4)")


def decided_parts(res) -> dict:
    """:func:`thesis_parts`, decided together (one Holm family: the thesis's share of the trained rate); the
    parts of :data:`SECONDARY_IDS` are then marked secondary (their numbers stay, their verdict is inconclusive)."""
    parts = thesis_parts(res)
    flat = [p for rows in parts.values() for _, ps in rows for p in ps]
    decide_parts(flat, experiment_alpha("thesis", res.settings.quick), quick=res.settings.quick)
    for cid in SECONDARY_IDS:
        for _, ps in parts[cid]:
            for p in ps:
                if p.decidable:
                    p.status = SECONDARY
    return parts


def anchoring(res, arch: str = "attn2", layer: int = 2) -> str:
    """What the synthetic task's layer slope is made of, per normalisation (means over the learned seeds at the
    end of training): the rows of the first copy, of the second copy, and the whole layer without BOS."""
    parts = []
    for norm in res.settings.norms:
        runs = [r for r in res.select(arch, norm) if res.learned(r)]
        tag = ""
        if not runs:  # no run learned: its numbers are shown, marked
            runs, tag = res.select(arch, norm), " (no run learned)"
        lay = [r["final"]["layers"][layer - 1] for r in runs]
        nob = [r["final"].get("task-no-bos", {}).get("layers", [None] * layer)[layer - 1] for r in runs]
        if not lay or any("regions" not in x or not x["regions"] for x in lay) or any(x is None for x in nob):
            return ""
        first = float(np.mean([x["regions"]["first copy"] for x in lay]))
        second = float(np.mean([x["regions"]["second copy"] for x in lay]))
        parts.append(f"{norm}{tag}: rows of the first copy {first:+.3f}, of the second copy {second:+.3f}, the "
                     f"layer {float(np.mean([x['slope'] for x in lay])):+.3f} with BOS and "
                     f"{float(np.mean([x['slope'] for x in nob])):+.3f} without it")
    return (f"What the synthetic task's {arch} layer-{layer} slope is made of (means over the learned seeds, after "
            f"training): " + "; ".join(parts) + ".")


def _rows(cid: str, res) -> list:
    rows = _plain_rows(cid, res)
    return [secondary_row(r) for r in rows] if cid in SECONDARY_IDS else rows


def _plain_rows(cid: str, res) -> list:
    rows = claim_rows(cid, STATEMENTS[cid], _base(res), decided_parts(res)[cid], quick=res.settings.quick)
    lead = anchoring(res) if cid in SECONDARY_IDS else ""
    if not lead:
        return rows
    quick = QUICK + ". "  # a quick run's rows keep their label first

    def with_lead(text: str) -> str:
        if text.startswith(quick):
            return f"{quick}{lead} {text[len(quick):]}"
        return f"{lead} {text}"
    def typed(ev):  # the headline reads the sentence from here, never from the finding's prose
        return dataclasses.replace(ev, anchoring=lead) if isinstance(ev, RowEvidence) else ev
    return [dataclasses.replace(r, finding=with_lead(r.finding), evidence=typed(r.evidence)) for r in rows]


def evaluate(*, quick: bool = False, progress=None) -> list:
    """TM1-TM5 (each registered with its own evaluator below)."""
    return [r for cid in STATEMENTS for r in REGISTERED[cid].evaluate(quick=quick, progress=progress)]


def available(quick: bool) -> bool:
    """Whether the thesis experiment of this mode is cached (the verdicts then cost no training)."""
    from lnrecency.experiments.studies.thesis_config import ThesisSettings, is_cached, torch_version

    return torch_version() is not None and is_cached(ThesisSettings.preset(quick))


def cached_results(quick: bool):
    """The thesis experiment's results when cached, else None (nothing is trained)."""
    if not available(quick):
        return None
    from lnrecency.experiments.studies.thesis import ThesisSettings, run_thesis

    return run_thesis(ThesisSettings.preset(quick))


def _results(quick: bool, progress):
    try:
        from lnrecency.experiments.studies.thesis import ThesisSettings, run_thesis
    except ImportError as exc:  # torch not installed: say so, decide nothing
        return None, f"needs the models extra (python3 -m pip install -e '.[models]'): {exc}"
    return run_thesis(ThesisSettings.preset(quick), progress=progress), ""


def _not_run(cid: str, reason: str) -> list:
    from lnrecency.inference.verdicts import ClaimResult

    return [ClaimResult(cid, result_source(cid, STATEMENTS[cid]),
                        STATEMENTS[cid], {}, "inconclusive", NotRun(reason=reason),
                        f"Not evaluated: {reason}")]


def _on_results(cid: str):
    """Decorator: an evaluator ``fn(results)`` of claim ``cid`` as ``run(quick=, progress=)``; an inconclusive
    "not evaluated" result when the experiment cannot run (no torch)."""
    def wrap(fn):
        def run(*, quick: bool = False, progress=None) -> list:
            res, why = _results(quick, progress)
            return _not_run(cid, why) if res is None else fn(res)
        return run
    return wrap


def evaluator_for(cid: str):
    return _on_results(cid)(lambda res: _rows(cid, res))


for _cid in STATEMENTS:  # one evaluator per statement: asking for TM3 decides TM3 only (the runs are cached)
    claim(_cid, module=__name__, available=available)(evaluator_for(_cid))
