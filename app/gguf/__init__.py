"""Reading GGUF headers: architecture, hyperparameters, tensor sizes per layer (no Qt)."""

from app.gguf.errors import (
    GGUFError,
    HeaderTruncatedError,
    MissingPartError,
    NotGGUFError,
    RefusedError,
)
from app.gguf.model import LayerInfo, ModelInfo, read_model, read_model_bytes, split_paths
from app.gguf.reader import GGUFHeader, TensorInfo, parse_header

__all__ = [
    "GGUFError",
    "GGUFHeader",
    "HeaderTruncatedError",
    "LayerInfo",
    "MissingPartError",
    "ModelInfo",
    "NotGGUFError",
    "RefusedError",
    "TensorInfo",
    "parse_header",
    "read_model",
    "read_model_bytes",
    "split_paths",
]
