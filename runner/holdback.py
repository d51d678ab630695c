"""Text held back while it may still become a marker (a stop string, a tool-call tag)."""

from __future__ import annotations


def overlap(text: str, marker: str) -> int:
    """Length of the longest end of ``text`` that is a start of ``marker`` (not all of it)."""
    for k in range(min(len(marker) - 1, len(text)), 0, -1):
        if text.endswith(marker[:k]):
            return k
    return 0
