"""What a model file declares, read as data before torch or transformers load, so that a size the model cannot take
is refused in a fraction of a second, not after the model is read: a Hugging Face folder's config.json (its bounds,
its sizes, its context) and a GGUF header's sizes (layers, width, heads, vocabulary, the optional key-value heads and
key length: type, sign and range; the float32 size against the model limit). The GGUF loader
(:mod:`lnrecency.experiments.probes.gguf`) adds the architecture check, which needs transformers."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["MAX_CONFIG_BYTES", "MAX_DEPTH", "SIZE_FIELDS", "CONTEXT_FIELDS", "declared_context", "check_context",
           "GGUFModel", "check_sizes", "MAX_MODEL_MIB", "LOAD_FACTOR"]

#: a config.json larger than this is refused before it is parsed
MAX_CONFIG_BYTES = 1 << 20
#: deepest nesting of a config.json (real configs nest 3-4 levels)
MAX_DEPTH = 32
#: the sizes a config.json may state, checked before any model is built: (names used by the families, range)
SIZE_FIELDS = {"vocabulary": (("vocab_size",), 1, 2**20),
               "layers": (("num_hidden_layers", "n_layer", "num_layers", "n_layers"), 1, 256),  # n_layers: MPT
               # num_heads: GPT-Neo; n_heads: MPT
               "attention heads": (("num_attention_heads", "n_head", "num_heads", "n_heads"), 1, 1024),
               "width": (("hidden_size", "n_embd", "d_model"), 1, 65536)}
#: the fields the families name their context by (positions the model was built for), first found wins
CONTEXT_FIELDS = ("max_position_embeddings", "n_positions", "n_ctx", "max_sequence_length", "seq_length")


def declared_context(folder: str | Path) -> int | None:
    """The context a model folder's config.json declares (None when it declares none or is not there: the loader
    then says what is wrong)."""
    from lnrecency.files.readers import read_json

    path = Path(folder) / "config.json"
    if not path.is_file():
        return None
    data = read_json(path, what="model config", max_bytes=MAX_CONFIG_BYTES, max_depth=MAX_DEPTH)
    for key in CONTEXT_FIELDS:
        value = data.get(key)
        if type(value) is int and value > 0:
            return value
    return None


def check_context(folder: str | Path, n: int, name: str = "n") -> None:
    """Refuse ``n`` above the context the folder's config declares (``name``: the argument or flag that set it)."""
    context = declared_context(folder)
    if context is not None and n > context:
        raise ValueError(f"{name} must be <= the model's context {context} (its config.json); got {n}")

#: the largest model (float32 weights) the probe loads by default; --max-model-mib raises it (up to the
#: machine's free memory: the load's peak is about 1.3 times the float32 size plus the interpreter)
MAX_MODEL_MIB = 1024
#: the load's peak memory over the model's float32 size (lnrecency.experiments.probes.gguf.GGUF_COST reads it)
LOAD_FACTOR = 1.25


@dataclass(frozen=True)
class GGUFModel:
    """What the header says a model is (before loading)."""

    architecture: str
    layers: int
    width: int
    heads: int
    kv_heads: int
    head_dim: int
    vocab: int
    layer_params: int  # elements of the blocks' tensors
    embed_params: int
    output_params: int  # the output layer's elements (the embedding's when tied)
    float32_bytes: int
    add_bos: bool
    bos: int | None


def check_sizes(src, max_model_mib: float = MAX_MODEL_MIB) -> GGUFModel:
    """The header's sizes checked for type, sign and range (the raw value named when it is not an integer), the
    model's float32 size against ``max_model_mib``, the heads against the width: all before torch or transformers
    load (a command line refuses a forged header in a fraction of a second)."""
    h = src.header
    arch = h.architecture
    if arch is None:
        raise ValueError(f"--gguf {src.name!r}: the header names no general.architecture (a string)")
    vocab = h.metadata.get("tokenizer.ggml.tokens")
    sizes = {"layers": h.metadata.get(f"{arch}.block_count"), "width": h.metadata.get(f"{arch}.embedding_length"),
             "attention heads": h.metadata.get(f"{arch}.attention.head_count"), "vocabulary": vocab}
    for what, value in sizes.items():
        low, high = SIZE_FIELDS[what][1:]
        if type(value) is not int or not low <= value <= high:
            raise ValueError(f"--gguf {src.name!r}: the header's {what} must be an integer in [{low}, {high}]; "
                             f"got {value!r:.40}")
    limit = max_model_mib * 2**20
    if h.float32_bytes > limit:
        raise ValueError(f"--gguf {src.name!r} declares {h.float32_bytes / 2**20:.1f} MiB of float32 weights, above "
                         f"the model limit {max_model_mib:g} MiB; raise it with --max-model-mib (the load needs "
                         f"about {LOAD_FACTOR:g} times that in memory)")
    for name in ("token_embd.weight",):
        if name not in h.tensors:
            raise ValueError(f"--gguf {src.name!r} holds no {name!r}; not a decoder transformers reads")
    layer_params = sum(h.elements(t) for t in h.tensors if t.startswith("blk."))
    embed = h.elements("token_embd.weight")
    heads = sizes["attention heads"]

    def optional(key: str, low: int, high: int, default: int) -> int:
        """An optional size of the header, checked for sign and range before any estimate reads it."""
        raw = h.metadata.get(f"{arch}.{key}")
        if raw is None:
            return default
        if type(raw) is not int or not low <= raw <= high:
            raise ValueError(f"--gguf {src.name!r}: the header's {arch}.{key} must be an integer in [{low}, {high}]; "
                             f"got {raw!r:.40}")
        return raw

    kv = optional("attention.head_count_kv", 1, heads, heads)
    if heads % kv:
        raise ValueError(f"--gguf {src.name!r}: {heads} attention heads are not a multiple of the header's "
                         f"{kv} key-value heads")
    if h.metadata.get(f"{arch}.attention.key_length") is None and sizes["width"] % heads:
        raise ValueError(f"--gguf {src.name!r}: width {sizes['width']} is not a multiple of its {heads} attention "
                         f"heads, and the header states no {arch}.attention.key_length; not a model transformers "
                         f"builds")
    head_dim = optional("attention.key_length", 1, 4096, sizes["width"] // heads)
    if head_dim < 1:
        raise ValueError(f"--gguf {src.name!r}: width {sizes['width']} over {heads} heads leaves no head dimension")
    bos = h.metadata.get("tokenizer.ggml.bos_token_id")
    if bos is not None and (type(bos) is not int or not 0 <= bos < vocab):
        raise ValueError(f"--gguf {src.name!r}: the header's tokenizer.ggml.bos_token_id must be a token id in "
                         f"[0, {vocab - 1}]; got {bos!r:.40}")
    return GGUFModel(arch, sizes["layers"], sizes["width"], heads, kv, head_dim, vocab, layer_params, embed,
                     h.elements("output.weight") if "output.weight" in h.tensors else embed, h.float32_bytes,
                     h.metadata.get("tokenizer.ggml.add_bos_token") is True, bos if type(bos) is int else None)
