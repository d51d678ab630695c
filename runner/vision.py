"""Image input: a vision projector (an mmproj GGUF) loaded beside the model through libmtmd.

The runner calls llama.cpp's multimodal library directly (``llama_cpp.mtmd_cpp``, pointed at the
chosen runtime's own libmtmd by runner/runtime.py, so one ggml serves both): llama-cpp-python's
multimodal chat handler is built around its high-level ``Llama`` class, which the runner does not
use.

A prompt with images becomes one token list for the scheduler: text tokens as they are, and each
image as ``n_pos`` copies of a negative stand-in derived from the SHA-256 of the image's bytes.
The prompt cache compares token lists, so a changed image never matches a cached one and a
repeated one does; the scheduler sends a stand-in run to libmtmd (encode, then decode its
embeddings) instead of the batch.
"""

from __future__ import annotations

import ctypes
import struct
from dataclasses import dataclass, field
from typing import Any

# What one request may carry. A header that declares more is refused before anything is
# decoded: a few KiB of PNG can declare a 60,000 × 60,000 image (10 GB of pixels).
MAX_IMAGES = 16
MAX_SIDE = 16_384
MAX_PIXELS = 40_000_000

# Formats libmtmd decodes here (stb_image); WebP goes through ffmpeg, which is not built in.
DECODED = ("png", "jpeg")
_OTHER_FORMATS = {b"RIFF": "WebP", b"GIF8": "GIF", b"BM": "BMP", b"II*\x00": "TIFF",
                  b"MM\x00*": "TIFF"}


class ImageRefused(Exception):
    """An image that cannot be used, in a sentence that says what to send instead."""


@dataclass(frozen=True)
class Image:
    data: bytes
    format: str  # one of DECODED
    width: int
    height: int


def sniff(data: bytes, where: str) -> Image:
    """The image's format and size from its header alone, or ImageRefused."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        if len(data) < 24 or data[12:16] != b"IHDR":
            raise ImageRefused(f"{where} is not a whole PNG image (its header is cut short).")
        width, height = struct.unpack(">II", data[16:24])
        fmt = "png"
    elif data.startswith(b"\xff\xd8\xff"):
        size = _jpeg_size(data)
        if size is None:
            raise ImageRefused(f"{where} is not a whole JPEG image (no frame header found).")
        width, height = size
        fmt = "jpeg"
    else:
        name = next((n for magic, n in _OTHER_FORMATS.items() if data.startswith(magic)), None)
        if name == "WebP" and data[8:12] != b"WEBP":
            name = None
        what = f"a {name} image" if name else "not a PNG or JPEG image"
        raise ImageRefused(f"{where} is {what}: send PNG or JPEG (convert it first).")
    if width == 0 or height == 0:
        raise ImageRefused(f"{where} declares an empty image ({width} × {height}).")
    if max(width, height) > MAX_SIDE or width * height > MAX_PIXELS:
        raise ImageRefused(
            f"{where} declares {width} × {height} pixels, more than this server decodes "
            f"({MAX_SIDE} on a side, {MAX_PIXELS // 1_000_000} million in all): scale it down.")
    return Image(data, fmt, width, height)


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    """Width and height from a JPEG's first start-of-frame segment."""
    i = 2
    n = len(data)
    while i + 4 <= n:
        if data[i] != 0xFF:
            return None
        marker = data[i + 1]
        if marker == 0xFF:  # fill byte
            i += 1
            continue
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:  # no length field
            i += 2
            continue
        (length,) = struct.unpack(">H", data[i + 2:i + 4])
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            if i + 9 > n:
                return None
            height, width = struct.unpack(">HH", data[i + 5:i + 9])
            return width, height
        if length < 2:
            return None
        i += 2 + length
    return None


def stand_in(digest: str) -> int:
    """The negative token that stands for every position of an image with this SHA-256."""
    return -1 - int(digest[:14], 16)


@dataclass(eq=False)
class MediaPrompt:
    """A tokenized prompt with images: ``tokens`` for the scheduler, and where each image's
    stand-ins start → (its libmtmd chunk, its length). Owns the chunks until closed."""

    tokens: list[int]
    images: dict[int, tuple[Any, int]] = field(default_factory=dict)
    _chunks: Any = None

    def close(self) -> None:
        if self._chunks is not None:
            _mtmd().mtmd_input_chunks_free(self._chunks)
            self._chunks = None
            self.images.clear()

    def __del__(self) -> None:  # a request that never reached the scheduler
        try:
            self.close()
        except Exception:  # at interpreter exit the bindings may be gone: the OS frees it
            pass


def _mtmd() -> Any:
    # Imported on first use: the import loads libmtmd, from the runtime runner/runtime.py chose.
    from llama_cpp import mtmd_cpp

    return mtmd_cpp


class Vision:
    """A projector loaded for one model and context. ``tokenize`` runs on prompt threads (libmtmd
    says its tokenizer and bitmap helpers are thread-safe); ``eval`` on the scheduler's thread."""

    def __init__(self, ctx: Any, path: str, n_ubatch: int) -> None:
        self.ctx = ctx
        self.path = path
        m = _mtmd()
        self.marker = (m.mtmd_default_marker() or b"<__media__>").decode()
        # Gemma 3's images attend both ways: all of one image must fit one micro-batch.
        self.non_causal = bool(m.mtmd_decode_use_non_causal(ctx, None))
        self.n_ubatch = n_ubatch

    @classmethod
    def load(cls, path: str, model: Any, threads: int, use_gpu: bool, n_ubatch: int,
             flash_attn: int = -1) -> Vision:
        """Load the projector for ``model``; ValueError with a sentence when it cannot be."""
        from runner import llamalog

        llamalog.install_mtmd()
        m = _mtmd()
        params = m.mtmd_context_params_default()
        params.use_gpu = use_gpu
        params.n_threads = max(1, threads)
        params.print_timings = False
        params.flash_attn_type = flash_attn  # as the model's: the planner counted it so
        # warmup (the default) sizes the encoder's buffers at load: out of memory shows there,
        # in the dry run, not at a person's first image.
        ctx = m.mtmd_init_from_file(path.encode(), model, params)
        if not ctx:
            raise ValueError(f"the vision projector {path} could not be loaded: it is not a "
                             "projector libmtmd reads, or it was made for another model (its "
                             "width must match the model's).")
        if not m.mtmd_support_vision(ctx):
            m.mtmd_free(ctx)
            raise ValueError(f"{path} is a projector without image input (audio only, say).")
        return cls(ctx, path, n_ubatch)

    def close(self) -> None:
        if self.ctx:
            _mtmd().mtmd_free(self.ctx)
            self.ctx = None

    def neutral(self, text: str) -> str:
        """``text`` with the media marker taken apart: a person's words cannot move an image."""
        return text.replace(self.marker, self.marker[:1] + "\u200b" + self.marker[1:])

    def tokenize(self, prompt: str, images: list[Image], add_special: bool) -> MediaPrompt:
        """Tokens for ``prompt``, where each marker stands for the next of ``images``."""
        m = _mtmd()
        bitmaps = (m.mtmd_bitmap_p_ctypes * max(1, len(images)))()
        made: list[Any] = []
        chunks = m.mtmd_input_chunks_init()
        try:
            for i, image in enumerate(images):
                buf = (ctypes.c_uint8 * len(image.data)).from_buffer_copy(image.data)
                bitmap = m.mtmd_helper_bitmap_init_from_buf(self.ctx, buf, len(image.data), False)
                if not bitmap:
                    raise ImageRefused(f"image {i + 1} could not be decoded: its "
                                       f"{image.format.upper()} data is damaged.")
                made.append(bitmap)
                bitmaps[i] = bitmap
            encoded = prompt.encode("utf-8")
            text = m.mtmd_input_text(encoded, len(encoded), add_special, True)
            rc = m.mtmd_tokenize(self.ctx, chunks, ctypes.byref(text), bitmaps, len(images))
            if rc != 0:
                raise ImageRefused("the images could not be placed in the prompt (the chat "
                                   f"template moved or dropped them; libmtmd said {rc}).")
            out = MediaPrompt([], {}, chunks)
            chunks = None
            self._flatten(out)
            return out
        finally:
            for bitmap in made:
                m.mtmd_bitmap_free(bitmap)
            if chunks is not None:
                m.mtmd_input_chunks_free(chunks)

    def _flatten(self, out: MediaPrompt) -> None:
        m = _mtmd()
        n_out = ctypes.c_size_t(0)
        for i in range(m.mtmd_input_chunks_size(out._chunks)):
            chunk = m.mtmd_input_chunks_get(out._chunks, i)
            if m.mtmd_input_chunk_get_type(chunk) == m.MTMD_INPUT_CHUNK_TYPE_TEXT:
                toks = m.mtmd_input_chunk_get_tokens_text(chunk, ctypes.byref(n_out))
                out.tokens.extend(toks[: n_out.value])
                continue
            n_pos = int(m.mtmd_input_chunk_get_n_pos(chunk))
            n_tokens = int(m.mtmd_input_chunk_get_n_tokens(chunk))
            if self.non_causal and n_tokens > self.n_ubatch:
                raise ImageRefused(f"an image is {n_tokens} tokens for this model, more than "
                                   f"its micro-batch of {self.n_ubatch}: load it with a "
                                   f"micro-batch (--ubatch-size) of at least {n_tokens}.")
            digest = (m.mtmd_input_chunk_get_id(chunk) or b"").decode() or f"{id(chunk):x}"
            out.images[len(out.tokens)] = (chunk, n_pos)
            out.tokens.extend([stand_in(digest)] * n_pos)

    def eval(self, lctx: Any, chunk: Any, n_past: int, seq: int, n_batch: int) -> None:
        """Encode one image and decode its embeddings into ``seq`` at ``n_past``."""
        m = _mtmd()
        new_n_past = ctypes.c_int32(0)
        rc = m.mtmd_helper_eval_chunk_single(self.ctx, lctx, chunk, n_past, seq, n_batch, False,
                                             ctypes.byref(new_n_past))
        if rc != 0:
            raise RuntimeError(f"libmtmd could not encode the image (it returned {rc})")

