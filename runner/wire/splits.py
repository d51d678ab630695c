"""How the files of a split GGUF model are named: llama.cpp's rule, once for both programs.

llama.cpp (``src/llama.cpp``: ``llama_split_path`` / ``llama_split_prefix``, which the model
loader and ``llama-gguf-split`` use) names part *i* of *n* ``<prefix>-%05d-of-%05d.gguf``,
numbered from 1. It loads a split model from its first part: it reads ``split.count`` from that
file, checks that the path ends with exactly the suffix that count gives, and opens
``<prefix>-00001-of-<n>.gguf`` … ``<prefix>-<n>-of-<n>.gguf``. So a part is a name that ends in
that suffix exactly, as its ``%05d`` formatting writes it:

- ``.gguf`` in lower case (``x-00001-of-00002.GGUF`` is no part for llama.cpp: it refuses to
  load it as split, "invalid split file name");
- five digits each (``split.count`` is a 16-bit number, so five always suffice);
- a part number from 1 to the count (``-00000-of-`` and ``-00003-of-00002`` name no part);
- any prefix, even an empty one (llama.cpp is given the whole path, whose folder is the
  prefix then).

The library, the Hub's file grouping, the app's loader and the runner's dry run all ask here,
so a set of files the library shows as one model is the set the loader reads and llama.cpp opens.
"""

from __future__ import annotations

import re

SUFFIX_FORMAT = "-{index:05d}-of-{count:05d}.gguf"
_PART = re.compile(r"^(?P<prefix>.*)-(?P<index>\d{5})-of-(?P<count>\d{5})\.gguf$", re.DOTALL)


def split_part(name: str) -> tuple[str, int, int] | None:
    """``(prefix, part number, part count)`` of a part's name or path, else None.

    ``split_part("m-Q4_K_M-00002-of-00003.gguf") == ("m-Q4_K_M", 2, 3)``. The prefix is
    everything before the suffix, folders included when a path is given (as llama.cpp's
    ``llama_split_prefix``); :func:`part_names` with it gives the names of every part.
    """
    m = _PART.match(name)
    if m is None:
        return None
    index, count = int(m["index"]), int(m["count"])
    if not 1 <= index <= count:
        return None
    return m["prefix"], index, count


def part_name(prefix: str, index: int, count: int) -> str:
    """The name of part ``index`` (from 1) of ``count``: ``llama_split_path``'s format."""
    if not 1 <= index <= count:
        raise ValueError(f"part {index} of {count} does not exist")
    return prefix + SUFFIX_FORMAT.format(index=index, count=count)


def part_names(prefix: str, count: int) -> list[str]:
    """The names of all ``count`` parts, in order (the first is the one llama.cpp loads)."""
    return [part_name(prefix, i, count) for i in range(1, count + 1)]

