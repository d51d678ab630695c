"""A vision projector (an ``mmproj`` GGUF of architecture ``clip``): what the planner needs to
count it. The runner loads it beside the model with libmtmd, on the first GPU when the model's
layers use one (``use_gpu`` follows ``--n-gpu-layers``), else in RAM."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path

from app.gguf.errors import GGUFError
from app.gguf.model import read_header_file
from app.i18n import T_


@dataclass(frozen=True)
class ProjectorInfo:
    path: str
    weight_bytes: int  # its tensors, loaded whole
    projector_type: str  # "gemma3", "qwen2.5vl_merger", "mlp", ...
    image_size: int  # pixels on a side the encoder takes
    patch_size: int
    n_embd: int  # the encoder's width
    n_ff: int
    n_head: int
    projection_dim: int  # the width it hands the model: the model's n_embd (0: not stated)
    max_pixels: int = 0  # families that take any size (Qwen-VL) state a pixel budget instead
    measured_compute: int = 0  # the encoder's buffer as a dry run allocated it (0: not yet)

    @property
    def preferred_side(self) -> int:
        """The longest side worth sending: what the encoder resizes to, or the side of its
        pixel budget (0: not stated)."""
        return math.isqrt(self.max_pixels) if self.max_pixels else self.image_size

    @property
    def n_patches(self) -> int:
        side = self.image_size // max(1, self.patch_size)
        return side * side + 1  # a class token, where the family has one (counted either way)

    def compute_bytes(self, flash_attn: bool) -> int:
        """The encoder's compute buffer, an estimate made to err high: a few live activations of
        every patch at its widest, and without flash attention the attention scores of every
        head (Gemma 3's 896-pixel images: between 1 and 2 GiB). The dry run loads the projector
        and measures the real buffer (app/loading/prepare.py ``measured_projector``)."""
        if self.measured_compute:
            return self.measured_compute
        n = self.n_patches
        act = 4 * n * max(4 * self.n_embd, self.n_ff) * 3
        scores = 0 if flash_attn else 4 * n * n * max(1, self.n_head)
        return act + scores


def read_projector(path: str | os.PathLike[str]) -> ProjectorInfo:
    """The projector's facts from its header; GGUFError with a sentence for a file that is not
    a vision projector."""
    p = Path(path)
    header = read_header_file(p)
    meta = header.metadata
    if meta.get("general.architecture") != "clip" or not meta.get("clip.has_vision_encoder"):
        raise GGUFError(T_("{name} is not a vision projector (an mmproj file with an image "
                           "encoder).", name=p.name))

    def num(key: str) -> int:
        value = meta.get(key)
        return int(value) if isinstance(value, int) and value > 0 else 0

    kind = meta.get("clip.vision.projector_type") or meta.get("clip.projector_type") or ""
    return ProjectorInfo(
        path=str(p), weight_bytes=sum(t.nbytes for t in header.tensors),
        projector_type=str(kind)[:40], image_size=num("clip.vision.image_size"),
        patch_size=num("clip.vision.patch_size"), n_embd=num("clip.vision.embedding_length"),
        n_ff=num("clip.vision.feed_forward_length"), n_head=num("clip.vision.attention.head_count"),
        projection_dim=num("clip.vision.projection_dim"),
        max_pixels=num("clip.vision.image_max_pixels"))

