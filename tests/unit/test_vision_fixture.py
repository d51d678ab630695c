"""The tiny vision pair really works through llama.cpp's multimodal library (libmtmd).

Only the low-level bindings are used, the same calls a runner makes: load the text model and a
context, open the mmproj against it, tokenize a prompt with an image marker, evaluate every chunk,
and read the logits. Two different images must leave the model seeing different things.
"""

from __future__ import annotations

import ctypes
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from tests.fixtures.models import vocabulary
from tests.fixtures.vision import IMAGE_MARKERS, VISION_PROJECTOR, VISION_TEXT, png_bytes, vision_pair

llama_cpp = pytest.importorskip("llama_cpp")
mtmd = pytest.importorskip("llama_cpp.mtmd_cpp")

N_CTX = 256
# Gemma 3's image chunks are decoded with non-causal attention, and llama.cpp aborts the whole
# process (GGML_ASSERT, not an error code) if such a batch is larger than n_ubatch.
N_BATCH = 64


@dataclass
class Pair:
    model: int
    ctx: int
    mctx: int
    n_vocab: int


@pytest.fixture(scope="module")
def pair() -> Iterator[Pair]:
    text_path, mmproj_path = vision_pair()
    llama_cpp.llama_backend_init()
    mparams = llama_cpp.llama_model_default_params()
    model = llama_cpp.llama_model_load_from_file(str(text_path).encode(), mparams)
    assert model, f"llama.cpp could not load {text_path}"
    cparams = llama_cpp.llama_context_default_params()
    cparams.n_ctx = N_CTX
    cparams.n_batch = N_BATCH
    cparams.n_ubatch = N_BATCH
    cparams.n_threads = cparams.n_threads_batch = 2
    ctx = llama_cpp.llama_init_from_model(model, cparams)
    assert ctx, "llama.cpp could not create a context"
    params = mtmd.mtmd_context_params_default()
    params.use_gpu = False
    params.n_threads = 2
    params.print_timings = False
    mctx = mtmd.mtmd_init_from_file(str(mmproj_path).encode(), model, params)
    assert mctx, f"libmtmd could not load {mmproj_path}"
    n_vocab = llama_cpp.llama_vocab_n_tokens(llama_cpp.llama_model_get_vocab(model))
    try:
        yield Pair(model, ctx, mctx, n_vocab)
    finally:
        mtmd.mtmd_free(mctx)
        llama_cpp.llama_free(ctx)
        llama_cpp.llama_model_free(model)


def tokenize(pair: Pair, png: bytes) -> int:
    """mtmd_input_chunks for "describe <marker> please" with ``png``; the caller frees them."""
    buf = (ctypes.c_uint8 * len(png)).from_buffer_copy(png)
    bitmap = mtmd.mtmd_helper_bitmap_init_from_buf(pair.mctx, buf, len(png), False)
    assert bitmap, "libmtmd could not decode the PNG"
    try:
        marker = mtmd.mtmd_default_marker().decode()
        text = f"describe {marker} please".encode()
        # The struct holds a borrowed char*: ``text`` must outlive the mtmd_tokenize call.
        inp = mtmd.mtmd_input_text(text=text, text_len=len(text), add_special=True,
                                   parse_special=True)
        bitmaps = (mtmd.mtmd_bitmap_p_ctypes * 1)(bitmap)
        chunks = mtmd.mtmd_input_chunks_init()
        assert chunks
        rc = mtmd.mtmd_tokenize(pair.mctx, chunks, ctypes.byref(inp), bitmaps, 1)
        if rc != 0:
            mtmd.mtmd_input_chunks_free(chunks)
            raise AssertionError(f"mtmd_tokenize returned {rc}")
        return chunks
    finally:
        # Chunks keep their own copy of the preprocessed image, so the bitmap can go now.
        mtmd.mtmd_bitmap_free(bitmap)


def evaluate(pair: Pair, chunks: int) -> tuple[np.ndarray, int]:
    """Evaluate all chunks from position 0; the last token's logits and the new n_past."""
    llama_cpp.llama_memory_clear(llama_cpp.llama_get_memory(pair.ctx), True)
    new_n_past = llama_cpp.llama_pos(0)  # an out-parameter: int32, passed by reference
    rc = mtmd.mtmd_helper_eval_chunks(pair.mctx, pair.ctx, chunks, 0, 0, N_BATCH, True,
                                      ctypes.byref(new_n_past))
    assert rc == 0, f"mtmd_helper_eval_chunks returned {rc}"
    logits = llama_cpp.llama_get_logits_ith(pair.ctx, -1)
    return np.ctypeslib.as_array(logits, shape=(pair.n_vocab,)).copy(), new_n_past.value


def chunk_summary(chunks: int) -> list[tuple[int, int]]:
    out = []
    for i in range(mtmd.mtmd_input_chunks_size(chunks)):
        chunk = mtmd.mtmd_input_chunks_get(chunks, i)
        out.append((mtmd.mtmd_input_chunk_get_type(chunk), mtmd.mtmd_input_chunk_get_n_tokens(chunk)))
    return out


def test_png_bytes_is_a_valid_png() -> None:
    data = png_bytes(5, 3, (10, 20, 30))
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert data[12:16] == b"IHDR" and data.endswith(b"IEND\xaeB`\x82")
    idat_len = int.from_bytes(data[33:37], "big")
    raw = zlib.decompress(data[41:41 + idat_len])
    assert raw == (b"\x00" + bytes((10, 20, 30)) * 5) * 3
    assert png_bytes(8, 8, 1) != png_bytes(8, 8, 2)
    assert png_bytes(8, 8, 1) == png_bytes(8, 8, 1)


def test_pair_loads_and_image_changes_the_logits(pair: Pair) -> None:
    assert mtmd.mtmd_support_vision(pair.mctx)
    assert not mtmd.mtmd_decode_use_mrope(pair.mctx)

    chunks = tokenize(pair, png_bytes(48, 40, 1))
    try:
        summary = chunk_summary(chunks)
        images = [n for kind, n in summary if kind == mtmd.MTMD_INPUT_CHUNK_TYPE_IMAGE]
        assert images == [VISION_PROJECTOR.tokens_per_image], summary
        assert summary[0][0] == mtmd.MTMD_INPUT_CHUNK_TYPE_TEXT
        assert summary[-1][0] == mtmd.MTMD_INPUT_CHUNK_TYPE_TEXT
        i_image = [kind for kind, _ in summary].index(mtmd.MTMD_INPUT_CHUNK_TYPE_IMAGE)
        image_chunk = mtmd.mtmd_input_chunks_get(chunks, i_image)
        # libmtmd puts Gemma 3's "<start_of_image>" before the image, parsed as special text:
        # the vocabulary has it as one control token, as a real Gemma 3's does.
        n_text = ctypes.c_size_t(0)
        text_tokens = mtmd.mtmd_input_chunk_get_tokens_text(
            mtmd.mtmd_input_chunks_get(chunks, i_image - 1), ctypes.byref(n_text))
        vocab = vocabulary(VISION_TEXT.n_vocab, VISION_TEXT.markers)[0]
        assert text_tokens[n_text.value - 1] == vocab.index(IMAGE_MARKERS[0])
        # Gemma 3 attends across an image's tokens both ways.
        assert mtmd.mtmd_decode_use_non_causal(pair.mctx, image_chunk)
        first, n_past = evaluate(pair, chunks)
        assert n_past == mtmd.mtmd_helper_get_n_pos(chunks) == sum(n for _, n in summary)
    finally:
        mtmd.mtmd_input_chunks_free(chunks)
    assert np.isfinite(first).all()

    chunks = tokenize(pair, png_bytes(48, 40, (250, 20, 20)))
    try:
        second, _ = evaluate(pair, chunks)
    finally:
        mtmd.mtmd_input_chunks_free(chunks)
    assert np.isfinite(second).all()
    assert np.abs(first - second).max() > 1e-3, "the image did not change what the model sees"

    # The same image again gives the same logits: the difference is the image, not noise.
    chunks = tokenize(pair, png_bytes(48, 40, 1))
    try:
        again, _ = evaluate(pair, chunks)
    finally:
        mtmd.mtmd_input_chunks_free(chunks)
    np.testing.assert_allclose(again, first, rtol=1e-4, atol=1e-4)


def test_cached_files_are_reused(tmp_path: Path) -> None:
    first = vision_pair(tmp_path)
    assert all(p.exists() and p.parent == tmp_path for p in first)
    assert vision_pair(tmp_path) == first
