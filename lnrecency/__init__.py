"""lnrecency: verifier for 'LayerNorm Induces Recency Bias in Transformer Decoders' (Kim et al.)."""
from lnrecency.model.config import EMBEDDINGS, NORMS, ModelConfig, make_config

__all__ = ["EMBEDDINGS", "NORMS", "ModelConfig", "make_config"]
__version__ = "0.1.0"
