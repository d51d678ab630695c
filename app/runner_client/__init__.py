"""Client for the runner's HTTP API (httpx2, no Qt)."""

from app.runner_client.client import (
    ChatStream,
    Health,
    RunnerApiError,
    RunnerAuthError,
    RunnerClient,
    RunnerError,
    RunnerUnreachable,
    StreamEnd,
    iter_sse,
)

__all__ = [
    "ChatStream",
    "Health",
    "RunnerApiError",
    "RunnerAuthError",
    "RunnerClient",
    "RunnerError",
    "RunnerUnreachable",
    "StreamEnd",
    "iter_sse",
]
