"""A runner for the library's embedding model, for document search by meaning (issue 30; no Qt).

Started on first use from a worker thread (a question with documents, a watched folder), on
loopback with a key of its own, and kept while the window runs: embedding a folder's passages
once and searching them afterwards needs the model loaded. It ends when the app closes its
stdin (``--watch-stdin``), so it never outlives the window. The vectors and their search live in
that runner (runner/vectors.py): the window's process has no numpy.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import subprocess
import threading
import time
from collections.abc import Sequence

from app.i18n import T_, TextError
from app.runner_client.client import RunnerClient, RunnerError
from app.runner_client.command import NO_CONSOLE_WINDOW, RunnerProgram

log = logging.getLogger(__name__)

START_TIMEOUT_S = 120.0  # listening and loaded; a big embedding model on a slow disk
# Architectures that make sentence embeddings (a chat model may embed too, but poorly).
EMBEDDING_ARCHS = frozenset({"bert", "nomic-bert", "nomic-bert-moe", "jina-bert-v2",
                             "jina-bert-v3", "modern-bert", "neo-bert", "eurobert", "t5encoder"})


def is_embedding_model(name: str, architecture: str | None) -> bool:
    """Whether a library model is one to search documents with: an encoder architecture, or a
    file named as an embedding model (Qwen3-Embedding, EmbeddingGemma are decoder shapes)."""
    return (architecture or "").lower() in EMBEDDING_ARCHS or "embed" in name.lower()


def _drain(process: subprocess.Popen[bytes]) -> None:
    if process.stdout is not None:
        for _line in process.stdout:
            pass


class EmbeddingRunner:
    def __init__(self, model: str, vectors_db: str, program: RunnerProgram | None = None) -> None:
        self.model = model
        self.vectors_db = vectors_db
        self._program = program or RunnerProgram.base()
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        self._client: RunnerClient | None = None
        self._asking = threading.Lock()

    def similar(self, query: str, documents: Sequence[int], limit: int) -> list[int]:
        """The passages of ``documents`` most like ``query`` (started first if need be)."""
        client = self._ensure()
        with self._asking:  # one connection, kept: a search is a few milliseconds of work
            return client.vector_search(query, documents, limit)

    def close(self) -> None:
        with self._lock:
            process, self._process = self._process, None
            client, self._client = self._client, None
        if client is not None:
            client.close()
        if process is None:
            return
        if process.stdin is not None:
            process.stdin.close()  # --watch-stdin: it exits on its own
        try:
            process.wait(5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)

    def _ensure(self) -> RunnerClient:
        with self._lock:
            if self._client is not None and self._process is not None and \
                    self._process.poll() is None:
                return self._client
            key = secrets.token_urlsafe(24)
            env = {**os.environ, "HEARTH_API_KEY": key}
            argv = self._program.embed(self.model, self.vectors_db)
            log.info("starting an embedding runner for %s", os.path.basename(self.model))
            self._process = subprocess.Popen(
                argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL, env=env, creationflags=NO_CONSOLE_WINDOW)
            url = self._listening(self._process)
            # Anything more it writes to stdout is read and dropped: a full pipe would stop it.
            threading.Thread(target=_drain, args=(self._process,), daemon=True).start()
            self._client = RunnerClient(url, key, timeout=10.0)
            self._wait_ready(self._client)
            return self._client

    def _listening(self, process: subprocess.Popen[bytes]) -> str:
        assert process.stdout is not None
        line = process.stdout.readline(4096)  # the runner's first line: where it listens
        try:
            event = json.loads(line)
            url = str(event["url"]) if event.get("event") == "listening" else ""
        except (ValueError, KeyError, TypeError, AttributeError):
            url = ""
        if not url:
            process.kill()
            raise TextError(T_("The embedding model {name} could not be started (exit code "
                               "{code}).", name=os.path.basename(self.model),
                               code=process.wait(5)))
        return url

    def _wait_ready(self, client: RunnerClient) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            try:
                health = client.health()
            except RunnerError:
                health = None
            if health is not None and health.status == "ok":
                return
            if health is not None and health.status == "error":
                raise TextError(T_("The embedding model {name} could not be loaded: {reason}",
                                   name=os.path.basename(self.model), reason=health.message))
            if self._process is None or self._process.poll() is not None:
                break
            time.sleep(0.05)
        raise TextError(T_("The embedding model {name} did not get ready.",
                           name=os.path.basename(self.model)))
