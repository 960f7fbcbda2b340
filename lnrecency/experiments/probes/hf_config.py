"""What a local Hugging Face model folder's config.json declares, read as data before torch or transformers load (a
command line's refusal of a size the model cannot take comes in a fraction of a second, not after the model is
read): the bounds of the file and the model's context."""
from __future__ import annotations

from pathlib import Path

__all__ = ["MAX_CONFIG_BYTES", "MAX_DEPTH", "SIZE_FIELDS", "CONTEXT_FIELDS", "declared_context", "check_context"]

#: a config.json larger than this is refused before it is parsed
MAX_CONFIG_BYTES = 1 << 20
#: deepest nesting of a config.json (real configs nest 3-4 levels)
MAX_DEPTH = 32
#: the sizes a config.json may state, checked before any model is built: (names used by the families, range)
SIZE_FIELDS = {"vocabulary": (("vocab_size",), 1, 2**20),
               "layers": (("num_hidden_layers", "n_layer", "num_layers"), 1, 256),
               "attention heads": (("num_attention_heads", "n_head"), 1, 1024),
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
