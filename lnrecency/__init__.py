"""lnrecency: verifier for 'LayerNorm Induces Recency Bias in Transformer Decoders' (Kim et al.).

The package face: :class:`ModelConfig` and :func:`make_config` (the parameter-free model), :func:`compare` (theory
against simulation for any setting: :mod:`lnrecency.experiments.compare`) and :func:`probe_model` (the recency probe
for any transformers causal LM); both loaded on first use, so ``import lnrecency`` stays light."""
from typing import Any

from lnrecency.model.config import EMBEDDINGS, NORMS, ModelConfig, make_config

__all__ = ["EMBEDDINGS", "NORMS", "ModelConfig", "make_config", "compare", "probe_model"]
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    if name == "probe_model":
        from lnrecency.experiments.probes.model_probe import probe_model

        return probe_model
    if name == "compare":
        from lnrecency.experiments.compare import compare

        return compare
    raise AttributeError(f"module 'lnrecency' has no attribute {name!r}")
