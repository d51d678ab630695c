"""Where a chat reply is asked: one value, made once, when the model is put in use (no Qt).

A :class:`ChatEndpoint` is either this computer's runner serving a model file or a server the
user added serving a model id; which of the two is decided by the constructor that made it
(:meth:`ChatEndpoint.local` when a loaded model is ready, :meth:`ChatEndpoint.remote` when a
server's model has been checked), never again per request. :meth:`ChatEndpoint.open_stream`
opens the reply with the client that kind needs.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol

from app.chat.source import ReplySource
from app.remote.client import RemoteClient
from app.runner_client import RunnerClient


class ReplyStream(Protocol):
    """A streamed reply (RunnerClient's ChatStream, RemoteClient's RemoteStream): iterate it
    for text, read ``end`` after, ``close()`` it from another thread to stop it."""

    end: Any  # StreamEnd | None: the finish reason and usage, once the stream ended

    def __iter__(self) -> Iterator[str]: ...

    def close(self) -> None: ...


def thinking_control(template: str) -> str:
    """How a chat template lets the model's thinking be set: "toggle" when it reads
    ``enable_thinking`` (Qwen 3), "effort" when it reads ``reasoning_effort`` (gpt-oss), "" when
    neither (the runner hands both to the template: runner/server.py _template_variables)."""
    if "reasoning_effort" in template:
        return "effort"
    return "toggle" if "enable_thinking" in template else ""


@dataclass(frozen=True)
class ChatEndpoint:
    """``url`` and ``key`` reach the API; ``source`` names what answers (and is recorded with
    each reply). ``source.server`` set: a server the user added, ``url`` its base URL."""

    url: str
    key: str
    source: ReplySource
    # The model was loaded with a vision projector: a question's images go with it. (A server's
    # model is sent text only: whether it sees images is not known.)
    sees_images: bool = False
    # Tools may be offered: the local model's chat template knows tools (the runner's rule,
    # runner/tools.py: a template that never mentions them cannot show the model any); a
    # server's model gets them, and a server that refuses them is asked again without.
    tools: bool = False
    # How the model's thinking can be set (its chat template's options): "toggle" (Qwen 3's
    # enable_thinking), "effort" (gpt-oss's reasoning_effort) or "" (not at all).
    thinking: str = ""

    @staticmethod
    def local(url: str, key: str | None, model_path: str, sees_images: bool = False,
              tools: bool = False, thinking: str = "") -> ChatEndpoint:
        """This computer's runner, serving ``model_path``."""
        return ChatEndpoint(url, key or "", ReplySource(model_path), sees_images, tools,
                            thinking)

    @staticmethod
    def remote(url: str, key: str, model: str, server_name: str,
               base_url: str) -> ChatEndpoint:
        """Model ``model`` on the server named ``server_name`` (``url``: its base URL)."""
        return ChatEndpoint(url, key, ReplySource(model, server_name, base_url), tools=True)

    @property
    def is_remote(self) -> bool:
        return self.source.remote

    @property
    def model(self) -> str:
        """The model file (local) or model id (remote) replies come from."""
        return self.source.model

    @contextmanager
    def open_stream(self, messages: list[dict[str, Any]], params: dict[str, Any], *,
                    runner: Any = RunnerClient, server: Any = RemoteClient,
                    ) -> Iterator[ReplyStream]:
        """The reply to ``messages`` asked with ``params``, open while the block runs (its
        client is closed after). ``runner`` and ``server`` make the clients (fakes in tests).

        Raises the client's typed errors (RunnerError, RemoteError) when it cannot open."""
        if self.is_remote:
            with server(self.url, self.key, name=self.source.server) as client:
                yield client.stream_chat(messages, self.source.model, **params)
        else:
            with runner(self.url, self.key) as client:
                yield client.stream_chat(messages, **params)
