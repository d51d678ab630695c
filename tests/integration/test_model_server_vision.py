"""Images through the model server (`hearth serve`, issue 30): a vision model (its projector
beside it) loads with it, and the OpenAI, Ollama and Anthropic clients' images reach it; a text
model refuses one in the API's own shape. Real runners, a generated tiny vision pair."""

from __future__ import annotations

import base64
from collections.abc import Iterator

import anthropic
import ollama
import openai
import pytest

from tests.fixtures.vision import png_bytes, vision_pair
from tests.integration.server_rig import KEY, Server, add_model, running


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    home = tmp_path_factory.mktemp("server-vision")
    text_model, projector = vision_pair()
    add_model(home, "tiny-vision/tiny-vision-F32.gguf", text_model)
    add_model(home, "tiny-vision/mmproj-tiny-vision-F32.gguf", projector)
    with running(home, "--no-dry-run", models=("alpha.gguf",)) as s:
        yield s


def _ids(server: Server) -> list[str]:
    with openai.OpenAI(base_url=server.url + "/v1", api_key=KEY, max_retries=0) as client:
        return [m.id for m in client.models.list()]


def _vision(server: Server) -> str:
    ids = _ids(server)
    assert not any("mmproj" in i for i in ids), ids  # a projector is not a model to chat with
    return next(i for i in ids if "tiny-vision" in i)


def test_every_api_s_images_reach_a_vision_model(server: Server) -> None:
    model = _vision(server)
    png = png_bytes(32, 32, (200, 40, 40))
    url = "data:image/png;base64," + base64.b64encode(png).decode()
    with openai.OpenAI(base_url=server.url + "/v1", api_key=KEY, max_retries=0) as client:
        reply = client.chat.completions.create(model=model, max_tokens=4, messages=[
            {"role": "user", "content": [{"type": "text", "text": "What is it?"},
                                         {"type": "image_url", "image_url": {"url": url}}]}])
        plain = client.chat.completions.create(model=model, max_tokens=4, messages=[
            {"role": "user", "content": "What is it?"}])
    assert reply.usage is not None and plain.usage is not None
    assert reply.usage.prompt_tokens >= plain.usage.prompt_tokens + 16  # the image's tokens
    with ollama.Client(host=server.url, headers={"Authorization": f"Bearer {KEY}"}) as sdk:
        answer = sdk.chat(model, messages=[{"role": "user", "content": "What is it?",
                                            "images": [png]}], options={"num_predict": 4})
        assert (answer.prompt_eval_count or 0) >= plain.usage.prompt_tokens + 16
        assert "vision" in (sdk.show(model).capabilities or [])
    with anthropic.Anthropic(base_url=server.url, api_key=KEY, max_retries=0) as claude:
        message = claude.messages.create(model=model, max_tokens=4, messages=[{
            "role": "user", "content": [
                {"type": "text", "text": "What is it?"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                             "data": base64.b64encode(png).decode()}}]}])
    assert message.usage.input_tokens >= plain.usage.prompt_tokens + 16


def test_a_text_model_refuses_an_image_in_each_api_s_shape(server: Server) -> None:
    png = png_bytes(8, 8)
    with pytest.raises(openai.BadRequestError, match="without a vision projector"):
        with openai.OpenAI(base_url=server.url + "/v1", api_key=KEY, max_retries=0) as client:
            client.chat.completions.create(model="alpha", max_tokens=4, messages=[
                {"role": "user", "content": [{"type": "image_url", "image_url": {
                    "url": "data:image/png;base64," + base64.b64encode(png).decode()}}]}])
    with ollama.Client(host=server.url, headers={"Authorization": f"Bearer {KEY}"}) as sdk, \
            pytest.raises(ollama.ResponseError) as caught:
        sdk.chat("alpha", messages=[{"role": "user", "content": "Hi", "images": [png]}])
    assert caught.value.status_code == 400 and "vision projector" in caught.value.error
