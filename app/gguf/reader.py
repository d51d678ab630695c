"""A defensive reader for the GGUF header (metadata and tensor directory, never tensor data).

The gguf package's own reader memory-maps a whole file and trusts every length it finds. Hearth
also reads the first megabytes of remote files and files users drop on it, so this reader:

- works on any bytes-like object (a memory map of a local file, or a partial download);
- checks every length against what is left in the buffer *before* using it, so a hostile header
  cannot make it allocate gigabytes or loop for minutes;
- skips the big tokenizer arrays without decoding them (only their element count is kept), which
  keeps a 256k-token vocabulary to a few tens of milliseconds;
- raises :class:`HeaderTruncatedError` with a byte count when a partial download is too short;
- refuses what llama.cpp's own GGUF reader refuses (ggml/src/gguf.cpp, ``gguf_init_from_reader``),
  so Hearth never plans a file llama.cpp will not open. Each such check names the line it mirrors.
"""

from __future__ import annotations

import hashlib
import logging
import struct
from dataclasses import dataclass, field
from typing import Any

from app.gguf.errors import GGUFError, HeaderTruncatedError, NotGGUFError, RefusedError
from app.gguf.quant import tensor_nbytes
from app.i18n import T_, Text

log = logging.getLogger(__name__)

MAGIC = b"GGUF"
DEFAULT_ALIGNMENT = 32

# Limits far beyond any real model (the largest vocabularies have ~260k tokens, the largest
# models a few thousand tensors) yet small enough that a hostile header fails fast.
MAX_KV = 1 << 16
MAX_TENSORS = 1 << 20
MAX_STRING = 1 << 24  # 16 MiB: chat templates are kilobytes
MAX_ARRAY = 1 << 26
MAX_DIMS = 4  # GGML_MAX_DIMS
MAX_NAME = 64  # GGML_MAX_NAME: a tensor name must be shorter
MAX_ELEMENTS = 1 << 50
# Arrays up to this many elements are decoded; longer ones (tokens, merges, scores) are only
# counted: the planner needs their length, never their contents.
DECODE_ARRAY_MAX = 4096

# GGUF value types.
_UINT8, _INT8, _UINT16, _INT16, _UINT32, _INT32, _FLOAT32, _BOOL = range(8)
_STRING, _ARRAY, _UINT64, _INT64, _FLOAT64 = 8, 9, 10, 11, 12

_SCALARS: dict[int, struct.Struct] = {
    _UINT8: struct.Struct("<B"),
    _INT8: struct.Struct("<b"),
    _UINT16: struct.Struct("<H"),
    _INT16: struct.Struct("<h"),
    _UINT32: struct.Struct("<I"),
    _INT32: struct.Struct("<i"),
    _FLOAT32: struct.Struct("<f"),
    _BOOL: struct.Struct("<?"),
    _UINT64: struct.Struct("<Q"),
    _INT64: struct.Struct("<q"),
    _FLOAT64: struct.Struct("<d"),
}
_U32 = struct.Struct("<I")
_U64 = struct.Struct("<Q")


@dataclass(frozen=True)
class ArrayInfo:
    """A long metadata array that was counted, not decoded."""

    item_type: int
    count: int
    # A string array's first ``digested`` items, hashed while skipped: vocabularies with the
    # same digest have the same tokens in the same order up to there (a draft model's test,
    # app/planner/speculation.py: the sizes of one family differ by their padding at the end).
    digest: str = ""
    digested: int = 0


@dataclass(frozen=True)
class TensorInfo:
    """One entry of the tensor directory."""

    name: str
    shape: tuple[int, ...]  # ggml order: shape[0] is the row length
    ggml_type: int
    offset: int  # relative to the start of the data section
    nbytes: int


@dataclass(frozen=True)
class GGUFHeader:
    """Everything before the tensor data."""

    version: int
    metadata: dict[str, Any]
    tensors: tuple[TensorInfo, ...]
    alignment: int
    data_offset: int  # absolute offset of the tensor data section
    # The GGUF value type of each metadata key, and for arrays their item type (else None):
    # llama.cpp reads every key with one exact type and refuses a file that stores another.
    types: dict[str, tuple[int, int | None]] = field(default_factory=dict)

    @property
    def data_size(self) -> int:
        """Bytes of tensor data the directory describes (the end of the last tensor)."""
        if not self.tensors:
            return 0
        return max(t.offset + t.nbytes for t in self.tensors)


class _Cursor:
    """Bounds-checked sequential reads over a bytes-like buffer."""

    def __init__(self, buf: memoryview, source: str, file_size: int | None) -> None:
        self.buf = buf
        self.pos = 0
        self.source = source
        # For a partial download the file is larger than the buffer; running past the buffer
        # means "fetch more", while running past the file means "damaged".
        self.file_size = file_size

    def need(self, n: int) -> None:
        end = self.pos + n
        if end <= len(self.buf):
            return
        if self.file_size is not None and end > self.file_size:
            raise GGUFError(
                T_("{source} is damaged: its header claims data beyond the end of the file (byte "
                   "{end:,} of {file_size:,}). Download it again.", source=self.source, end=end,
                   file_size=self.file_size)
            )
        raise HeaderTruncatedError(end, len(self.buf), self.source)

    def unpack(self, s: struct.Struct) -> Any:
        self.need(s.size)
        value = s.unpack_from(self.buf, self.pos)[0]
        self.pos += s.size
        return value

    def u32(self) -> int:
        return int(self.unpack(_U32))

    def u64(self) -> int:
        return int(self.unpack(_U64))

    def string(self, what: str) -> str:
        n = self.u64()
        if n > MAX_STRING:
            raise GGUFError(
                T_("{source} is damaged or not a model: {what} claims a string of {n:,} bytes.",
                   source=self.source, what=_what(what), n=n)
            )
        self.need(n)
        raw = bytes(self.buf[self.pos : self.pos + n])
        self.pos += n
        return raw.decode("utf-8", errors="replace")

    def skip_strings(self, count: int, mark: int = 0) -> int:
        """Skip ``count`` strings; returns where the first ``mark`` of them end."""
        first = min(mark, count)
        self._skip(first)
        marked = self.pos
        self._skip(count - first)
        return marked if mark < count else self.pos

    def _skip(self, count: int) -> None:
        # The hot loop for tokenizer vocabularies: only the lengths are read.
        buf, pos, end, unpack = self.buf, self.pos, len(self.buf), _U64.unpack_from
        for _ in range(count):
            if pos + 8 > end:
                self.need(pos + 8 - self.pos)
            n = unpack(buf, pos)[0]
            if n > MAX_STRING:
                raise GGUFError(T_("{source} is damaged: a string of {n:,} bytes in an array.",
                                   source=self.source, n=n))
            pos += 8 + n
        if pos > end:
            self.need(pos - self.pos)
        self.pos = pos


def digested_tokens(count: int) -> int:
    """How many of a vocabulary's ``count`` tokens its digest covers: the multiple of 1,024 below
    ``count``, less 1,024, so that the sizes of one family agree (Qwen 2.5's 151,936 and
    152,064 both cover 150,528; what differs is padding and special tokens at the end)."""
    return max(0, (count // 1024 - 1) * 1024)


def parse_header(buf: Any, source: str = "the file", file_size: int | None = None) -> GGUFHeader:
    """Parse the GGUF header at the start of ``buf`` (bytes, bytearray, memoryview or mmap).

    ``file_size`` is the full size of the file when ``buf`` holds only its beginning; when it is
    None the buffer is assumed to be the whole file only for the purpose of error messages.
    """
    # Views on a memory map must be released before the map closes, even on errors.
    with memoryview(buf) as view, view.cast("B") as flat:
        return _parse(_Cursor(flat, source, file_size), source)


def _what(what: str) -> Text:
    """The translatable words for what :meth:`_Cursor.string` read: its callers pass a plain
    ``str`` (a string is read for every token of a vocabulary; a sentence is made only for an
    error)."""
    if what == "a tensor name":
        return T_("a tensor name")
    if what.startswith("metadata "):
        return T_("metadata {key}", key=what.removeprefix("metadata "))
    return T_("a metadata key")


def _parse(cur: _Cursor, source: str) -> GGUFHeader:
    cur.need(4)
    if bytes(cur.buf[:4]) != MAGIC:
        raise NotGGUFError(
            T_("{source} is not a GGUF model (it does not start with 'GGUF'). Hearth runs GGUF "
               "files; look for a file ending in .gguf.", source=source)
        )
    cur.pos = 4
    version = cur.u32()
    if version in (1,):
        raise GGUFError(T_("{source} uses GGUF version 1, which llama.cpp no longer loads. "
                           "Download a newer conversion of the model.", source=source))
    if version not in (2, 3):
        if version & 0xFFFFFF == 0 and version >> 24 in (2, 3):
            raise GGUFError(T_("{source} is a big-endian GGUF file; download the little-endian "
                               "one.", source=source))
        raise GGUFError(T_("{source} uses GGUF version {version}, which this version of Hearth "
                           "cannot read. Update Hearth, or download another conversion.",
                           source=source, version=version))
    n_tensors = cur.u64()
    n_kv = cur.u64()
    if n_tensors > MAX_TENSORS or n_kv > MAX_KV:
        raise GGUFError(T_("{source} is damaged or hostile: it claims {n_tensors:,} tensors and "
                           "{n_kv:,} metadata entries.", source=source, n_tensors=n_tensors,
                           n_kv=n_kv))

    metadata: dict[str, Any] = {}
    types: dict[str, tuple[int, int | None]] = {}
    for i in range(n_kv):
        key = cur.string("a metadata key")
        if not key:  # gguf.cpp:571 "key is empty"
            raise _refused(source, "empty_key", T_("metadata entry {i} has an empty name", i=i))
        if key in metadata:  # gguf.cpp:575 "duplicate key"
            raise _refused(source, "duplicate_key", T_("the metadata key {key!r} appears twice",
                                                       key=key))
        vtype = cur.u32()
        metadata[key], types[key] = _read_value(cur, vtype, key)

    alignment = metadata.get("general.alignment", DEFAULT_ALIGNMENT)
    if "general.alignment" in types and types["general.alignment"][0] != _UINT32:
        # gguf.cpp:623 "key 'general.alignment' must be of type u32"
        raise _refused(source, "kv_type", T_("general.alignment is not stored as a uint32"))
    if not isinstance(alignment, int) or alignment <= 0 or alignment & (alignment - 1):
        raise GGUFError(T_("{source} is damaged: general.alignment is {alignment!r}, not a power "
                           "of two.", source=source, alignment=alignment))

    tensors: list[TensorInfo] = []
    seen: set[str] = set()
    expected_offset = 0  # where llama.cpp expects the next tensor: the data packed in order
    for _ in range(n_tensors):
        name = cur.string("a tensor name")
        if len(name.encode()) >= MAX_NAME:  # gguf.cpp:657 "tensor name is too long"
            raise _refused(source, "long_name", T_("a tensor name is {count} bytes long (at most "
                                                   "{value})", count=len(name.encode()),
                                                   value=MAX_NAME - 1))
        if name in seen:  # gguf.cpp:665 "duplicate tensor name"
            raise _refused(source, "duplicate_tensor", T_("tensor {name!r} appears twice",
                                                          name=name))
        seen.add(name)
        n_dims = cur.u32()
        # gguf.cpp:679 refuses more than GGML_MAX_DIMS; a 0-dimensional tensor (a scalar) is
        # no tensor any llama.cpp model has, so it is refused too.
        if not 1 <= n_dims <= MAX_DIMS:
            raise _refused(source, "n_dims", T_("tensor {name!r} has {n_dims} dimensions",
                                                name=name, n_dims=n_dims))
        shape = tuple(cur.u64() for _ in range(n_dims))
        for d in shape:
            if d >= 1 << 63:  # gguf.cpp:692 "dimension has invalid number of elements: < 0"
                raise _refused(source, "negative_dim",
                               T_("tensor {name!r} has a negative dimension", name=name))
            if d == 0:
                # gguf.cpp accepts a zero-element tensor, but every tensor llama.cpp uses has a
                # shape derived from the model's positive sizes: check_tensor_dims refuses it
                # ("has wrong shape", llama-model-loader.cpp:917), and one it does not use
                # ends in "wrong number of tensors" (:1398). No real model has one.
                raise _refused(source, "zero_dim", T_("tensor {name!r} has a dimension of 0",
                                                      name=name))
        n_el = 1
        for d in shape:
            n_el *= d
            if n_el > MAX_ELEMENTS:  # gguf.cpp:700-718 (INT64_MAX), far stricter
                raise GGUFError(T_("{source} is damaged: tensor {name!r} has an impossible shape "
                                   "{list}.", source=source, name=name, list=list(shape)))
        ggml_type = cur.u32()
        offset = cur.u64()
        if offset % alignment:
            raise _refused(source, "offset", T_("tensor {name!r} is not aligned to {alignment} "
                                                "bytes", name=name, alignment=alignment))
        nbytes = tensor_nbytes(ggml_type, shape, name, source)  # gguf.cpp:733-745
        if offset != expected_offset:
            # gguf.cpp:796 "tensor has offset N, expected M": the data section is the tensors
            # in directory order, each padded to the alignment; anything else is damage.
            raise _refused(source, "offset", T_("tensor {name!r} starts at byte {offset:,} of "
                                                "the data where {expected_offset:,} was expected",
                                                name=name, offset=offset,
                                                expected_offset=expected_offset))
        expected_offset += -(-nbytes // alignment) * alignment
        tensors.append(TensorInfo(name, shape, ggml_type, offset, nbytes))

    data_offset = -(-cur.pos // alignment) * alignment
    return GGUFHeader(version, metadata, tuple(tensors), alignment, data_offset, types)


def _refused(source: str, check: str, what: str) -> RefusedError:
    return RefusedError(source, check, what)


def _read_value(cur: _Cursor, vtype: int, key: str) -> tuple[Any, tuple[int, int | None]]:
    """One metadata value, and its (type, item type)."""
    scalar = _SCALARS.get(vtype)
    if scalar is not None:
        return cur.unpack(scalar), (vtype, None)
    if vtype == _STRING:
        return cur.string(f"metadata {key!r}"), (vtype, None)
    if vtype != _ARRAY:
        raise GGUFError(T_("{source} is damaged: metadata {key!r} has unknown type {vtype}.",
                           source=cur.source, key=key, vtype=vtype))
    item_type = cur.u32()
    count = cur.u64()
    if count > MAX_ARRAY:
        raise GGUFError(T_("{source} is damaged: metadata {key!r} claims {count:,} items.",
                           source=cur.source, key=key, count=count))
    kind = (vtype, item_type)
    item = _SCALARS.get(item_type)
    if item is not None:
        total = item.size * count
        cur.need(total)
        if count > DECODE_ARRAY_MAX:
            cur.pos += total
            return ArrayInfo(item_type, count), kind
        values = list(struct.unpack_from(f"<{count}{item.format[-1]}", cur.buf, cur.pos))
        cur.pos += total
        return values, kind
    if item_type == _STRING:
        if count > DECODE_ARRAY_MAX:
            start = cur.pos
            mark = digested_tokens(count)
            marked = cur.skip_strings(count, mark)
            digest = hashlib.blake2b(cur.buf[start:marked], digest_size=12).hexdigest()
            return ArrayInfo(item_type, count, digest, mark), kind
        return [cur.string(f"metadata {key!r}") for _ in range(count)], kind
    if item_type == _ARRAY:
        # gguf.cpp:609 "key has invalid GGUF type 9": llama.cpp has no arrays of arrays.
        raise _refused(cur.source, "nested_array", T_("metadata {key!r} is an array of arrays",
                                                      key=key))
    raise GGUFError(T_("{source} is damaged: metadata {key!r} has items of unknown type "
                       "{item_type}.", source=cur.source, key=key, item_type=item_type))
