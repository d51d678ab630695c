"""The chat endpoint (app/loading/endpoint.py): one value whose kind was decided when it was
made; its open_stream reaches the runner or the server with the client that kind needs."""

from __future__ import annotations

from typing import Any, ClassVar

from app.chat.source import ReplySource
from app.loading.endpoint import ChatEndpoint

HELLO = [{"role": "user", "content": "hi"}]


class Client:
    made: ClassVar[list[tuple[Any, ...]]] = []

    def __init__(self, url: str, key: str, **kwargs: Any) -> None:
        Client.made.append((type(self).__name__, url, key, kwargs))

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        Client.made.append(("closed",))

    def stream_chat(self, messages: Any, *args: Any, **params: Any) -> tuple[Any, ...]:
        return ("stream", messages, args, params)


class Runner(Client):
    pass


class Server(Client):
    pass


def test_a_local_endpoint_streams_from_the_runner_with_its_key() -> None:
    Client.made.clear()
    at = ChatEndpoint.local("http://127.0.0.1:5000", None, "/models/a.gguf")
    assert at.key == "" and not at.is_remote and at.model == "/models/a.gguf"
    assert at.source == ReplySource("/models/a.gguf")
    with at.open_stream(HELLO, {"max_tokens": 8}, runner=Runner, server=Server) as stream:
        assert stream == ("stream", HELLO, (), {"max_tokens": 8})
    assert Client.made == [("Runner", "http://127.0.0.1:5000", "", {}), ("closed",)]


def test_a_remote_endpoint_streams_from_the_server_naming_its_model() -> None:
    Client.made.clear()
    at = ChatEndpoint.remote("http://box/v1", "sk", "qwen3", "Box", "http://box/v1")
    assert at.is_remote and at.model == "qwen3"
    assert at.source == ReplySource("qwen3", "Box", "http://box/v1")
    with at.open_stream(HELLO, {"temperature": 0}, runner=Runner, server=Server) as stream:
        assert stream == ("stream", HELLO, ("qwen3",), {"temperature": 0})
    assert Client.made == [("Server", "http://box/v1", "sk", {"name": "Box"}), ("closed",)]
