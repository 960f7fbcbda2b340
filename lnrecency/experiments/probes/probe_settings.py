"""A probe's settings and inputs' first token: :class:`ProbeSettings` (length, sequences, seed, which inputs, the
phase test's rate) and :func:`bos_token` (``--bos``: the model's BOS first, none, or the model's own convention).
Re-exported by :mod:`lnrecency.experiments.probes.probe`."""
from __future__ import annotations

from dataclasses import dataclass

from lnrecency.runtime.arguments import check_choice, check_int, check_real

__all__ = ["TOKENS", "GGUF_TOKENS", "check_gguf_tokens", "check_first_share", "THEORY_INPUTS", "BOS_CHOICES",
           "bos_token", "ProbeSettings", "GU_EPS", "ROLLOUT_LAMBDA", "uniform_reference"]

#: Gu et al. (2024, "When Attention Sink Emerges in Language Models")'s threshold eps of Sink^eps_1
GU_EPS = 0.3
#: the residual-aware rollout's weight on attention: each layer's A becomes (1 - lambda) I + lambda A (Abnar &
#: Zuidema 2020 use 0.5)
ROLLOUT_LAMBDA = 0.5


def uniform_reference(n: int) -> dict:
    """The reference a probe's rollout is read against: every query attending uniformly to its causal keys, two
    layers (:func:`lnrecency.theory.rollout.uniform_rollout`), in the probe's conventions: the last query's rollout
    at the first key after layers 1 and 2 (1/n, H_n / n), at the last key after layer 2 (1/n^2), and the
    residual-aware one ((1 - ROLLOUT_LAMBDA) I + ROLLOUT_LAMBDA A) at the first key after layer 2."""
    from lnrecency.theory.rollout import uniform_rollout

    plain = uniform_rollout(n, 2)
    mixed = uniform_rollout(n, 2, gamma=ROLLOUT_LAMBDA / (1.0 - ROLLOUT_LAMBDA))  # (I + g A) / (1 + g), same mix
    return {"first 1": float(plain[0, -1, 0]), "first 2": float(plain[1, -1, 0]), "last 2": float(plain[1, -1, -1]),
            "residual first 2": float(mixed[1, -1, 0])}

#: the probe's inputs, BOS first in each (its key is left out of slopes and RP and reported as the sink):
#: "random" = the neutral control (content tokens only after BOS: no BOS, SEP or other special token inside);
#: "task" = the training distribution (sequences of the model's training task); "bos-response" = the
#: diagnostic of a model's reaction to BOS in mid-sequence (random with BOS scattered; never a control);
#: "text" = windows of real text in the model's own tokenizer (lnrecency.experiments.text.text_windows;
#: the window's first key is left out whether or not the model takes a BOS)
#: "task-no-bos" = the training distribution with its BOS removed (every key enters: there is no BOS to leave out)
#: "given" = token ids a library caller passed (lnrecency.probe_model(tokens=...)): used as given, first key left out
TOKENS = ("random", "task", "bos-response", "text", "task-no-bos", "given")
#: the inputs a GGUF model's probe takes: windows of text in its own tokenizer, or the neutral random control (it has
#: no training task of ours)
GGUF_TOKENS = ("text", "random")


def check_gguf_tokens(tokens: str) -> str:
    """``tokens`` if a GGUF model's probe takes it (:data:`GGUF_TOKENS`); a refusal naming ``--tokens`` otherwise,
    checked before the model is staged or read."""
    if tokens not in GGUF_TOKENS:
        raise ValueError(f"--gguf takes --tokens {' or '.join(GGUF_TOKENS)}; got {tokens!r}")
    return tokens


#: ``--bos``, the first token of a real or GGUF model's probe windows: "model" = the model's own convention (its BOS
#: first where its tokenizer adds one), "first" = its BOS token first in every window, "none" = no BOS (content
#: tokens only). The first key is left out of slopes and RP either way (the attention sink with or without BOS).
BOS_CHOICES = ("model", "first", "none")


def bos_token(declared: int | None, adds: bool, bos: str, flag: str = "--bos") -> int | None:
    """The token a probe puts first in every window under ``bos`` (:data:`BOS_CHOICES`), or None for none:
    ``declared`` is the model's BOS id (None when it has none), ``adds`` whether its tokenizer puts it first."""
    check_choice(flag, bos, BOS_CHOICES)
    if bos == "none":
        return None
    if bos == "first" and declared is None:
        raise ValueError(f"{flag} first: this model declares no BOS token; allowed here: model, none")
    return declared if (bos == "first" or adds) else None


#: the identity decoder's inputs: the theory's Gaussian draws (no tokens, no BOS; set by the probe itself)
THEORY_INPUTS = "theory"


#: the longest window a probe takes (its memory and time bounds refuse what does not fit before that: a streamed
#: slopes-only probe of a 32-layer, 32-head model at n = 1,024 takes 700 MiB, benchmarks/bench_probe_stream.py)
MAX_N = 4096


@dataclass(frozen=True)
class ProbeSettings:
    n: int = 32
    sequences: int = 256
    seed: int = 0
    tokens: str = "random"  # random | task (trained decoders), theory inputs for the identity decoder
    rate: float = 1e-3  # family-wise false-alarm rate of each layer's phase test
    chunk: int = 64

    @property
    def bos_first(self) -> bool:
        """Whether the inputs start with BOS (every token variant does): its key is left out of slopes and RP
        and reported as the sink."""
        return self.tokens not in (THEORY_INPUTS, "task-no-bos")

    def __post_init__(self) -> None:
        check_int("n", self.n, minimum=3, maximum=MAX_N)
        check_int("sequences", self.sequences, minimum=8, maximum=10**6)
        check_int("seed", self.seed, minimum=0, maximum=2**63 - 1)
        check_choice("tokens", self.tokens, TOKENS + (THEORY_INPUTS,))
        check_real("rate", self.rate, low=0.0, high=0.5, low_open=True)
        check_int("chunk", self.chunk, minimum=1, maximum=4096)


def check_first_share(spec, layers: int | None, flag: str = "first_share") -> dict:
    """{layer (1-based): share} checked: layers in 1..``layers`` (None: a model whose depth is not known yet; the
    form and the shares are checked, the layers again once it is loaded), each layer once, each share "mean" or a
    number in [0, 1). ``spec`` may also be the command line's "LAYER:SHARE[,LAYER:SHARE]" text (``flag`` names it in
    errors). Light: the command line checks it before torch loads."""
    if spec is None:
        return {}
    if isinstance(spec, str):
        out: dict = {}
        for part in spec.split(","):
            layer, sep, share = part.partition(":")
            if not sep or not layer.strip().isdigit() or not share.strip():
                raise ValueError(f"{flag} {spec!r}: each item must be LAYER:SHARE (e.g. 1:mean or 1:0.3); got "
                                 f"{part!r}")
            if int(layer) in out:
                raise ValueError(f"{flag} {spec!r}: layer {int(layer)} is given twice; give each layer once")
            out[int(layer)] = share.strip() if share.strip() == "mean" else _share_number(share, flag, spec)
        spec = out
    if not isinstance(spec, dict):
        raise ValueError(f"{flag} must be a dict {{layer: share}}; got {type(spec).__name__}")
    checked = {}
    for layer, share in spec.items():
        if type(layer) is not int or layer < 1 or (layers is not None and layer > layers):
            raise ValueError(f"{flag}: layer {layer!r} is not one of the model's layers "
                             + (f"1..{layers}" if layers is not None else "(they count from 1)"))
        checked[layer] = share if share == "mean" else _share_number(share, flag, spec)
    return checked


def _share_number(share, flag: str, spec) -> float:
    if isinstance(share, bool):
        share = None
    try:
        x = float(share)
    except (TypeError, ValueError):
        x = float("nan")
    if not 0.0 <= x < 1.0:
        raise ValueError(f"{flag} {spec!r}: a share must be 'mean' or a number in [0, 1); got {share!r}")
    return x
