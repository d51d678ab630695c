"""A server the user added, for real: a second Hearth runner on loopback with its real key
(models, a streamed reply, a wrong key, a closed port, a wrong address, https to plain HTTP),
and small local servers for what no real server here does (no streaming, OpenAI's "model not
found", a web page, a self-signed certificate)."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest

from app.chat.source import ReplySource
from app.remote.client import (
    ModelGone,
    NotAnApiError,
    RemoteClient,
    ServerAuthError,
    ServerTLSError,
    ServerUnreachable,
)
from app.services.chat_stream import ChatRequest, FailureKind, StreamEnded, StreamFailure, stream_reply
from tests.fixtures.openai_stub import Answer, json_answer, self_signed_context, serve
from tests.integration.conftest import Runner

HELLO = [{"role": "user", "content": "Say hello."}]


def _request(url: str, key: str, model: str, **params: Any) -> ChatRequest:
    return ChatRequest(url, key, HELLO, {"max_tokens": 8, "temperature": 0, **params},
                       source=ReplySource(model, "Box", url))


def test_the_models_of_a_real_runner_are_listed_with_its_key(runner: Runner,
                                                             tiny_model: Path) -> None:
    with RemoteClient(runner.url + "/v1", runner.key, name="Box") as client:
        assert client.models() == [tiny_model.stem]


def test_a_reply_streams_from_a_real_runner_through_stream_reply(runner: Runner) -> None:
    with RemoteClient(runner.url + "/v1", runner.key) as client:
        model = client.models()[0]
    pieces: list[str] = []
    outcome = stream_reply(_request(runner.url + "/v1", runner.key or "", model), pieces.append)
    assert isinstance(outcome, StreamEnded), outcome
    assert outcome.reason in ("stop", "length") and outcome.streamed
    assert pieces and outcome.usage and outcome.usage["completion_tokens"] >= 1


def test_a_wrong_key_is_refused_with_401_in_words(runner: Runner) -> None:
    with RemoteClient(runner.url + "/v1", "not-the-key", name="Box") as client:
        with pytest.raises(ServerAuthError, match=r"Box refused the API key \(HTTP 401\)"):
            client.models()
    outcome = stream_reply(_request(runner.url + "/v1", "not-the-key", "m"), lambda _t: None)
    assert isinstance(outcome, StreamFailure)
    assert outcome.kind is FailureKind.SERVER and outcome.code == "auth"
    assert "Settings → Servers" in outcome.message


def test_a_closed_port_is_unreachable() -> None:
    with socket.socket() as s:  # a port that was free a moment ago, nothing listening
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    with RemoteClient(url, "k", name="Box") as client, \
            pytest.raises(ServerUnreachable, match=f"Nothing answers at {url}"):
        client.models()
    outcome = stream_reply(_request(url, "k", "m"), lambda _t: None)
    assert isinstance(outcome, StreamFailure) and outcome.code == "unreachable"


def test_a_name_that_does_not_resolve_says_so() -> None:
    with RemoteClient("http://hearth-test.invalid/v1", None, name="Box", timeout=10) as client, \
            pytest.raises(ServerUnreachable, match="could not find the server"):
        client.models()


def test_a_wrong_address_on_a_real_runner_is_not_an_api(runner: Runner) -> None:
    with RemoteClient(runner.url + "/api", runner.key, name="Box") as client:
        with pytest.raises(NotAnApiError, match=r"no OpenAI-compatible API at .*/api/models"):
            client.models()
        with pytest.raises(NotAnApiError, match="usually ends in /v1"):
            client.stream_chat(HELLO, "m")


def test_https_to_a_plain_http_runner_is_a_tls_error(runner: Runner) -> None:
    url = runner.url.replace("http://", "https://") + "/v1"
    with RemoteClient(url, runner.key, name="Box") as client, \
            pytest.raises(ServerTLSError, match="try the address with http://"):
        client.models()


def test_a_self_signed_certificate_is_not_trusted(tmp_path: Path) -> None:
    pytest.importorskip("cryptography")
    ctx = self_signed_context(tmp_path)
    with serve(lambda *_a: json_answer({"data": [{"id": "m"}]}), tls=ctx) as stub:
        with RemoteClient(stub.url + "/v1", "k", name="Box") as client, \
                pytest.raises(ServerTLSError, match=r"certificate of Box \(127.0.0.1\) is not "
                                                    r"trusted: self.signed certificate"):
            client.models()
        outcome = stream_reply(_request(stub.url + "/v1", "k", "m"), lambda _t: None)
        assert isinstance(outcome, StreamFailure) and outcome.code == "tls"
        # Trusting that certificate (as a user would by installing it) makes it work.
        import ssl

        trusting = ssl.create_default_context(cafile=str(tmp_path / "cert.pem"))
        with RemoteClient(stub.url + "/v1", "k", name="Box", verify=trusting) as client:
            assert client.models() == ["m"]


def test_a_model_the_server_no_longer_has_is_told_apart() -> None:
    def route(method: str, path: str, body: Any) -> Answer:
        if path == "/v1/models":
            return json_answer({"object": "list", "data": [{"id": "other"}]})
        return json_answer({"error": {"message": f"The model `{body['model']}` does not exist",
                                      "type": "invalid_request_error", "param": None,
                                      "code": "model_not_found"}}, 404)

    with serve(route) as stub:
        outcome = stream_reply(_request(stub.url + "/v1", "k", "gone-model"), lambda _t: None)
        assert isinstance(outcome, StreamFailure) and outcome.code == "model_gone"
        assert "no longer offers the model “gone-model”" in outcome.message
        with RemoteClient(stub.url + "/v1", "k") as client, pytest.raises(ModelGone):
            client.stream_chat(HELLO, "gone-model")


def test_a_server_that_does_not_stream_gives_its_whole_answer() -> None:
    def route(method: str, path: str, body: Any) -> Answer:
        return json_answer({"id": "c1", "object": "chat.completion", "model": body["model"],
                            "choices": [{"index": 0, "finish_reason": "length",
                                         "message": {"role": "assistant",
                                                     "content": "All at once."}}],
                            "usage": {"prompt_tokens": 5, "completion_tokens": 3,
                                      "total_tokens": 8}})

    with serve(route) as stub:
        pieces: list[str] = []
        outcome = stream_reply(_request(stub.url + "/v1", "secret", "big-model"), pieces.append)
        assert pieces == ["All at once."]
        assert isinstance(outcome, StreamEnded) and not outcome.streamed
        assert outcome.reason == "length" and outcome.usage == {
            "prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8}
        method, path, body = stub.requests[-1]
        assert (method, path) == ("POST", "/v1/chat/completions")
        assert body is not None and body["model"] == "big-model" and body["stream"] is True


def test_a_web_page_where_the_api_should_be_is_named() -> None:
    page = Answer(200, b"<html><body>Router login</body></html>", "text/html; charset=utf-8")
    with serve(lambda *_a: page) as stub:
        with RemoteClient(stub.url + "/v1", None, name="Box") as client:
            with pytest.raises(NotAnApiError, match="it sent text/html"):
                client.models()
        outcome = stream_reply(_request(stub.url + "/v1", "", "m"), lambda _t: None)
        assert isinstance(outcome, StreamFailure) and outcome.code == "not_api"
        assert "text/html" in outcome.message
