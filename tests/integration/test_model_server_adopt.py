"""The window's own model served by the model server (POST /hearth/adopt, issue 29): requests
naming it go to the window's runner, no second copy is loaded, a request's keep_alive never
unloads it, and it is forgotten once the window's runner stops, after which the server loads
its own copy on request. Real server, real runners, the official openai client."""

from __future__ import annotations

from pathlib import Path

import openai
import pytest

from tests.integration.conftest import spawn_ready, stop_runner
from tests.integration.server_rig import KEY, Server, running, until

pytestmark = pytest.mark.timeout(300)


def _adopt(server: Server, body: dict[str, object]) -> tuple[int, dict[str, object]]:
    with server.client() as c:
        r = c.post("/hearth/adopt", json=body)
    return r.status_code, r.json()


def test_the_windows_runner_is_served_by_name_and_forgotten_when_it_stops(
        tmp_path: Path) -> None:
    with running(tmp_path, "--no-dry-run", models=("alpha.gguf",)) as server:
        window = spawn_ready(model=server.models_dir / "alpha.gguf")
        try:
            status, body = _adopt(server, {"path": str(server.models_dir / "alpha.gguf"),
                                           "url": window.url, "key": window.key})
            assert (status, body) == (200, {"model": "alpha.gguf"}), body
            row = server.resident()["alpha.gguf"]
            assert row["window"] is True and row["state"] == "loaded" and row["pinned"], row
            assert sum(row["memory"].values()) > 0, row  # what the window's runner measured
            client = openai.OpenAI(base_url=server.url + "/v1", api_key=KEY, max_retries=0)
            reply = client.chat.completions.create(
                model="alpha", max_tokens=4, messages=[{"role": "user", "content": "hello"}],
                extra_body={"keep_alive": 0})
            assert reply.choices[0].message.content
            assert not server.runners(), "a second copy was loaded"
            assert server.resident()["alpha.gguf"]["window"] is True  # keep_alive 0: still held
        finally:
            stop_runner(window)
        until(lambda: "alpha.gguf" not in server.resident(), "the stopped runner forgotten")
        # Now the server's own copy, loaded on request.
        reply = openai.OpenAI(base_url=server.url + "/v1", api_key=KEY, max_retries=0) \
            .chat.completions.create(model="alpha", max_tokens=4,
                                     messages=[{"role": "user", "content": "hello"}])
        assert reply.choices[0].message.content
        assert set(server.runners()) == {"alpha.gguf"}
        assert server.resident()["alpha.gguf"]["window"] is False


def test_the_server_unloads_its_own_copy_when_the_window_hands_one_over(tmp_path: Path) -> None:
    with running(tmp_path, "--no-dry-run", models=("alpha.gguf",)) as server:
        client = openai.OpenAI(base_url=server.url + "/v1", api_key=KEY, max_retries=0)
        client.chat.completions.create(model="alpha", max_tokens=2,
                                       messages=[{"role": "user", "content": "hi"}])
        own = server.runners()["alpha.gguf"]
        window = spawn_ready(model=server.models_dir / "alpha.gguf")
        try:
            status, body = _adopt(server, {"path": str(server.models_dir / "alpha.gguf"),
                                           "url": window.url, "key": window.key})
            assert status == 200, body
            own.wait(60)  # its copy is gone
            assert not server.runners() and server.resident()["alpha.gguf"]["window"] is True
        finally:
            stop_runner(window)


REFUSED: list[tuple[dict[str, object], int, str]] = [
    ({"url": "http://192.0.2.1:80"}, 400, "loopback"),
    ({"url": "http://127.0.0.1:1/v1"}, 400, "loopback"),
    ({"url": "file:///etc/passwd"}, 400, "loopback"),
    ({"url": "http://user:pw@127.0.0.1:1"}, 400, "loopback"),
    ({"key": "not-its-key"}, 400, "answers"),
    ({"key": ""}, 400, "key"),
    ({"path": "/etc/passwd"}, 404, "library"),
    ({"path": 7}, 400, "path"),
]


def test_a_hand_over_that_is_not_the_windows_runner_is_refused(tmp_path: Path) -> None:
    with running(tmp_path, "--no-dry-run", models=("alpha.gguf",)) as server:
        window = spawn_ready(model=server.models_dir / "alpha.gguf")
        try:
            for change, status, says in REFUSED:
                body = {"path": str(server.models_dir / "alpha.gguf"), "url": window.url,
                        "key": window.key, **change}
                got, answer = _adopt(server, body)
                assert got == status, (change, answer)
                error = answer["error"]
                assert isinstance(error, dict) and says in error["message"], (change, error)
                assert "alpha.gguf" not in server.resident()
        finally:
            stop_runner(window)
