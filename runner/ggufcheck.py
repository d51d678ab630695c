"""Check that a file is a whole, sane GGUF before llama.cpp sees it.

llama.cpp's own messages for a bad file are terse ("failed to load model"), and a hostile header
(absurd counts or string lengths) should be refused before any native code walks it. This reads
the header with hard limits, never allocates more than the file could hold, and checks that every
tensor's data lies inside the file, which catches the most common problem: a download that
stopped early.
"""

from __future__ import annotations

import os
import struct
from typing import BinaryIO

GGUF_MAGIC = b"GGUF"
MAX_TENSORS = 1_000_000
MAX_KV = 100_000
MAX_DIMS = 4
MAX_STRING = 64 * 1024 * 1024

# value type -> struct format (scalars)
_SCALARS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}
_STRING, _ARRAY = 8, 9


class GGUFError(Exception):
    """The file is not a loadable GGUF; ``str()`` names the file and what is wrong."""


def check_gguf(path: str) -> dict[str, object]:
    """Validate ``path``; return a few header facts (version, counts, selected metadata)."""
    if not os.path.exists(path):
        raise GGUFError(f"{path}: no such file. Check the path, or pick the model again.")
    if not os.path.isfile(path):
        raise GGUFError(f"{path}: not a file.")
    size = os.path.getsize(path)
    try:
        with open(path, "rb") as f:
            return _Reader(f, size, path).read()
    except PermissionError as exc:
        raise GGUFError(f"{path}: cannot read the file ({exc.strerror}).") from None


class _Reader:
    def __init__(self, f: BinaryIO, size: int, path: str) -> None:
        self.f = f
        self.size = size
        self.path = path
        self.pos = 0

    def fail(self, what: str) -> GGUFError:
        return GGUFError(f"{self.path}: {what}")

    def take(self, n: int) -> bytes:
        if n > self.size - self.pos:
            raise self.fail(
                f"the file ends early (at byte {self.size}, inside the header). It is truncated: "
                "download it again."
            )
        data = self.f.read(n)
        self.pos += n
        return data

    def unpack(self, fmt: str) -> int:
        value: int = struct.unpack("<" + fmt, self.take(struct.calcsize(fmt)))[0]
        return value

    def string(self) -> str:
        n = self.unpack("Q")
        if n > MAX_STRING:
            raise self.fail(f"the header holds a string of {n} bytes; the file is damaged.")
        return self.take(n).decode("utf-8", errors="replace")

    def skip_value(self, vtype: int, depth: int = 0) -> object:
        if vtype in _SCALARS:
            return self.unpack(_SCALARS[vtype])
        if vtype == _STRING:
            return self.string()
        if vtype == _ARRAY and depth == 0:
            etype = self.unpack("I")
            count = self.unpack("Q")
            if etype in _SCALARS:
                width = struct.calcsize(_SCALARS[etype])
                if count * width > self.size - self.pos:
                    raise self.fail(f"an array of {count} values runs past the end of the file.")
                self.f.seek(count * width, os.SEEK_CUR)
                self.pos += count * width
                return None
            if etype == _STRING:
                if count * 8 > self.size - self.pos:
                    raise self.fail(f"an array of {count} strings runs past the end of the file.")
                for _ in range(count):
                    n = self.unpack("Q")
                    if n > self.size - self.pos:
                        raise self.fail("a string runs past the end of the file.")
                    self.f.seek(n, os.SEEK_CUR)
                    self.pos += n
                return None
        raise self.fail(f"the header holds a value of unknown type {vtype}; the file is damaged "
                        "or from a newer GGUF version.")

    def read(self) -> dict[str, object]:
        magic = self.f.read(4)
        self.pos = len(magic)
        if magic != GGUF_MAGIC:
            raise self.fail("this is not a GGUF model file (it does not start with 'GGUF'). "
                            "Hearth loads llama.cpp's .gguf files.")
        version = self.unpack("I")
        if version not in (2, 3):
            raise self.fail(f"GGUF version {version} is not supported (expected 2 or 3).")
        n_tensors = self.unpack("Q")
        n_kv = self.unpack("Q")
        if n_tensors > MAX_TENSORS or n_kv > MAX_KV:
            raise self.fail(f"the header claims {n_tensors} tensors and {n_kv} metadata entries; "
                            "the file is damaged.")
        meta: dict[str, object] = {}
        for _ in range(n_kv):
            key = self.string()
            value = self.skip_value(self.unpack("I"))
            if key in ("general.architecture", "general.name", "general.alignment",
                       "split.count"):
                meta[key] = value
        alignment = meta.get("general.alignment", 32)
        if not isinstance(alignment, int) or alignment <= 0 or alignment & (alignment - 1):
            raise self.fail(f"invalid alignment {alignment!r} in the header.")
        import gguf  # the quant block sizes live there; import only when a file gets this far

        data_end = 0
        for _ in range(n_tensors):
            name = self.string()
            n_dims = self.unpack("I")
            if n_dims == 0 or n_dims > MAX_DIMS:
                raise self.fail(f"tensor {name!r} has {n_dims} dimensions; the file is damaged.")
            dims = [self.unpack("Q") for _ in range(n_dims)]
            ttype = self.unpack("I")
            offset = self.unpack("Q")
            try:
                block, type_size = gguf.GGML_QUANT_SIZES[gguf.GGMLQuantizationType(ttype)]
            except (ValueError, KeyError):
                raise self.fail(f"tensor {name!r} has unknown type {ttype}.") from None
            elements = 1
            for d in dims:
                if d <= 0 or d > 1 << 40:
                    raise self.fail(f"tensor {name!r} has dimension {d}; the file is damaged.")
                elements *= d
            if elements % block:
                raise self.fail(f"tensor {name!r} does not fit its type's block size.")
            data_end = max(data_end, offset + elements // block * type_size)
        data_start = -(-self.pos // alignment) * alignment
        needed = data_start + data_end
        if needed > self.size:
            raise self.fail(
                f"the file is truncated: it is {self.size:,} bytes but its tensors need "
                f"{needed:,} bytes. The download is probably incomplete: download it again."
            )
        return {"version": version, "tensors": n_tensors, "metadata": n_kv, **meta}
