"""/v1/embeddings through the official openai client, against llama-cpp-python's own embedder."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from pathlib import Path

import httpx2
import numpy as np
import openai
import pytest

from tests.integration.conftest import Runner, openai_client, running


@pytest.fixture(scope="module")
def embed_runner(tiny_model: Path) -> Iterator[Runner]:
    with running("--embedding", "--batch-size", "64", model=tiny_model) as r:
        yield r


@pytest.fixture
def oai(embed_runner: Runner) -> Iterator[openai.OpenAI]:
    with openai_client(embed_runner) as client:
        yield client


def _reference(model: Path, text: str) -> np.ndarray:
    """The same embedding from llama-cpp-python's high-level class, in this process."""
    from llama_cpp import LLAMA_POOLING_TYPE_MEAN, Llama

    llm = Llama(str(model), embedding=True, pooling_type=LLAMA_POOLING_TYPE_MEAN, n_ctx=256,
                verbose=False)
    try:
        return np.asarray(llm.embed(text, normalize=True), dtype=np.float64)
    finally:
        llm.close()


def test_embedding_matches_llama_cpp_python(oai: openai.OpenAI, tiny_model: Path) -> None:
    text = "the fire is warm in the hearth"
    r = oai.embeddings.create(model="m", input=text)  # the client asks for base64 and decodes it
    got = np.asarray(r.data[0].embedding)
    assert got.shape == (64,) and np.linalg.norm(got) == pytest.approx(1.0, abs=1e-4)
    ref = _reference(tiny_model, text)
    assert float(got @ ref) > 0.9999
    assert r.usage.prompt_tokens == r.usage.total_tokens > 0


def test_batch_keeps_order_and_formats_agree(oai: openai.OpenAI) -> None:
    inputs = ["hello world", "the old man came back", "hello world"]
    floats = oai.embeddings.create(model="m", input=inputs, encoding_format="float")
    b64 = oai.embeddings.create(model="m", input=inputs, encoding_format="base64")
    a = np.asarray([d.embedding for d in floats.data])
    assert [d.index for d in floats.data] == [0, 1, 2]
    # Asked for explicitly, base64 comes back undecoded: little-endian float32.
    raw = [np.frombuffer(base64.b64decode(d.embedding), dtype="<f4") for d in b64.data]  # type: ignore[arg-type]
    assert np.array_equal(a.astype(np.float32), np.asarray(raw))
    assert np.allclose(a[0], a[2], atol=1e-5) and not np.allclose(a[0], a[1], atol=1e-3)


def test_token_ids_as_input(oai: openai.OpenAI) -> None:
    single = oai.embeddings.create(model="m", input=[5, 6, 7], encoding_format="float")
    many = oai.embeddings.create(model="m", input=[[5, 6, 7], [8, 9]], encoding_format="float")
    assert len(single.data) == 1 and len(many.data) == 2
    assert np.allclose(single.data[0].embedding, many.data[0].embedding, atol=1e-5)


@pytest.mark.parametrize(("body", "code"), [
    ({"input": []}, None),
    ({"input": ""}, None),
    ({"input": [[1, 2], []]}, None),
    ({"input": [1, 99999]}, None),
    ({"input": "x", "dimensions": 3}, "unsupported_dimensions"),
    ({"input": "word " * 200}, "context_length_exceeded"),
    ({"input": 5}, None),
    ({"input": "x", "encoding_format": "hex"}, None),
])
def test_bad_embedding_requests_are_400(embed_runner: Runner, body: dict[str, object],
                                        code: str | None) -> None:
    with embed_runner.client() as http:
        resp = http.post("/v1/embeddings", json=body)
    assert resp.status_code == 400, resp.text
    err = resp.json()["error"]
    assert err["message"] and (code is None or err["code"] == code)


def test_embedding_runner_refuses_chat(oai: openai.OpenAI) -> None:
    with pytest.raises(openai.BadRequestError, match="--embedding"):
        oai.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])


def test_chat_runner_refuses_embeddings(runner: Runner) -> None:
    resp = httpx2.post(runner.url + "/v1/embeddings", json={"input": "hi"}, headers=runner.headers,
                       trust_env=False, timeout=60)
    assert resp.status_code == 400 and resp.json()["error"]["code"] == "embeddings_not_enabled"


def test_an_input_longer_than_a_slot_s_context_is_a_400_not_a_crash(tiny_model: Path) -> None:
    """With --parallel 2 a sequence holds half the context, and llama.cpp caps its batch there:
    an input past it used to abort the runner (GGML_ASSERT in llama_decode). Found by the
    OpenAPI fuzzer."""
    with running("--embedding", "--ctx-size", "256", "--parallel", "2", model=tiny_model) as r:
        with r.client() as http:
            long = http.post("/v1/embeddings",
                             json={"input": [[300 + i % 200 for i in range(300)]]})
            assert long.status_code == 400 and "at most" in long.json()["error"]["message"]
            ok = http.post("/v1/embeddings", json={"input": [[300 + i % 200 for i in range(200)]]})
            assert ok.status_code == 200
        assert r.process.poll() is None
