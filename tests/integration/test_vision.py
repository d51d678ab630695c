"""Images through the real runner: a generated tiny vision model (Gemma 3's projector type, random
weights) and its projector, the official openai client, real libmtmd.

Real-model quality is not exercised here (no real vision model can be had on these machines):
what is shown is that an image reaches the model, changes what it sees, is cached by content, and
that everything a client can send wrong gets a sentence."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any

import openai
import pytest

from tests.fixtures.vision import VISION_PROJECTOR, png_bytes, vision_pair
from tests.integration.conftest import Runner, openai_client, running, spawn_runner


@pytest.fixture(scope="module")
def seeing() -> Iterator[Runner]:
    model, projector = vision_pair()
    with running("--mmproj", str(projector), "--ctx-size", "512", "--seed", "1",
                 model=model) as r:
        yield r


def _url(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode()


def _ask(image: bytes | None, text: str = "what is this") -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = [{"type": "text", "text": text}]
    if image is not None:
        parts.append({"type": "image_url", "image_url": {"url": _url(image)}})
    return [{"role": "user", "content": parts}]


def _last(r: Runner) -> dict[str, Any]:
    with r.client() as http:
        status = http.get("/runner/status").json()
    return dict(status["last_request"]) | {"vision": status["vision"]}


def _reply(client: openai.OpenAI, messages: list[dict[str, Any]]) -> str:
    out = client.chat.completions.create(model="m", messages=messages,  # type: ignore[arg-type]
                                         max_tokens=8, temperature=0, seed=1)
    return out.choices[0].message.content or ""


def test_an_image_is_tokens_the_model_sees(seeing: Runner) -> None:
    with openai_client(seeing) as client:
        _reply(client, _ask(None))
        without = _last(seeing)["prompt_tokens"]
        red = _reply(client, _ask(png_bytes(32, 32, (255, 0, 0))))
        with_image = _last(seeing)
        blue = _reply(client, _ask(png_bytes(32, 32, (0, 0, 255))))
    # The prompt count includes the image's tokens (and the template's wrapping of it).
    assert with_image["prompt_tokens"] >= without + VISION_PROJECTOR.tokens_per_image
    assert with_image["vision"]["projector"].endswith(".gguf")
    # Same text, another picture: the model saw something else (greedy, same seed).
    assert red != blue


def test_the_same_image_is_served_from_the_cache_and_a_changed_one_is_not(seeing: Runner
                                                                          ) -> None:
    first = png_bytes(32, 32, 7)
    with openai_client(seeing) as client:
        _reply(client, _ask(first))
        n = _last(seeing)["prompt_tokens"]
        _reply(client, _ask(first))
        again = _last(seeing)
        _reply(client, _ask(png_bytes(32, 32, 8)))
        changed = _last(seeing)
    assert again["cached_tokens"] == n - 1  # all but the last token, which gives the logits
    # Up to the image's start only: the text before it is the same, the picture is not.
    assert changed["cached_tokens"] < n - VISION_PROJECTOR.tokens_per_image


def test_an_image_in_an_earlier_turn_stays_cached_as_the_chat_goes_on(seeing: Runner) -> None:
    image = png_bytes(24, 24, 3)
    turn = _ask(image, "look")
    with openai_client(seeing) as client:
        answer = _reply(client, turn)
        n = _last(seeing)["prompt_tokens"]
        _reply(client, [*turn, {"role": "assistant", "content": answer},
                        {"role": "user", "content": "and now?"}])
    assert _last(seeing)["cached_tokens"] >= n - 1


def _refusal(r: Runner, messages: list[dict[str, Any]]) -> dict[str, Any]:
    with r.client() as http:
        resp = http.post("/v1/chat/completions", json={"messages": messages, "max_tokens": 2})
    assert resp.status_code == 400, resp.text
    return dict(resp.json()["error"])


def test_bad_images_get_a_sentence(seeing: Runner) -> None:
    webp = b"RIFF\x10\x00\x00\x00WEBPVP8 " + b"\x00" * 8
    cases = [
        (_ask(webp), "WebP image: send PNG or JPEG"),
        (_ask(png_bytes(8, 8)[:30]), "could not be decoded"),
        ([{"role": "user", "content": [{"type": "image_url",
                                        "image_url": {"url": "https://example.com/a.png"}}]}],
         "does not fetch images from the network"),
        ([{"role": "user", "content": [{"type": "input_audio", "input_audio": {}}]}],
         "takes text and images"),
    ]
    for messages, sentence in cases:
        error = _refusal(seeing, messages)
        assert sentence in error["message"], error
    # The runner still answers after every refusal.
    with openai_client(seeing) as client:
        assert _reply(client, _ask(png_bytes(16, 16, 1)))


def test_text_that_spells_the_media_marker_does_not_move_an_image(seeing: Runner) -> None:
    """The marker libmtmd looks for is plain text a person can type: typed, it stays text."""
    messages = _ask(png_bytes(16, 16, 2), "before <__media__> after")
    with openai_client(seeing) as client:
        assert _reply(client, messages) is not None


def test_a_text_model_refuses_an_image_with_a_sentence(runner: Runner) -> None:
    error = _refusal(runner, _ask(png_bytes(8, 8)))
    assert error["code"] == "unsupported_content"
    assert "loaded without a vision projector" in error["message"]


def test_a_file_that_is_no_projector_fails_the_load_with_a_sentence(tiny_model: Any) -> None:
    r = spawn_runner("--mmproj", str(tiny_model), model=tiny_model)
    try:
        r.wait_listening()
        with pytest.raises(AssertionError, match=r"vision projector .* could not be loaded"):
            r.wait_ready()
    finally:
        r.kill()
