"""Comparing GPU names across sources that spell them differently.

NVML says "NVIDIA GeForce RTX 4090", Vulkan "NVIDIA GeForce RTX 4090", RADV "AMD Radeon RX 7900
XTX (RADV NAVI31)", sysfs "Radeon RX 7900 XTX": brand words and parenthesised driver notes go.
"""

from __future__ import annotations

import re

_BRAND_WORDS = ("nvidia", "amd", "geforce", "apple")


def norm_gpu_name(name: str) -> str:
    name = re.sub(r"\(.*?\)", "", name.lower())
    for word in _BRAND_WORDS:
        name = name.replace(word, "")
    return re.sub(r"[^a-z0-9]+", " ", name).strip()


def same_gpu_name(a: str, b: str) -> bool:
    """True when one normalised name contains the other (and neither is empty)."""
    na, nb = norm_gpu_name(a), norm_gpu_name(b)
    return bool(na and nb and (na in nb or nb in na))
