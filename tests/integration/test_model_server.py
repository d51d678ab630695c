"""The model server end to end: real server process, real runners, real tiny models, the
official openai client (issue 29: models on request, several at once, eviction, idle time-outs,
crashes, the key, no runner left behind).

Memory: the tiny model's plan holds about 4.8 MiB of RAM, so ``--memory-budget-mib 12`` lets two
such models be resident and not three, 6 lets one, 2 none.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from dataclasses import replace
from pathlib import Path
from typing import Any

import openai
import psutil
import pytest

from tests.fixtures.models import TINY, model_path
from tests.integration.server_rig import (
    KEY,
    Server,
    add_model,
    running,
    server_env,
    start,
    stop,
    until,
)

pytestmark = pytest.mark.timeout(300)


def _client(server: Server) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.url + "/v1", api_key=KEY, max_retries=0, timeout=120)


def _say(client: openai.OpenAI, model: str, **extra: Any) -> str:
    r = client.chat.completions.create(model=model, max_tokens=4,
                                       messages=[{"role": "user", "content": "hello"}],
                                       **extra)
    assert r.choices[0].message.content
    return r.model


def test_two_models_load_on_request_and_serve_at_once(tmp_path: Path) -> None:
    with running(tmp_path, "--no-dry-run") as server, _client(server) as client:
        listed = {m.id: m for m in client.models.list().data}
        assert set(listed) == {"alpha.gguf", "beta.gguf"}
        assert not any(m.model_extra["meta"]["loaded"] for m in listed.values())
        assert str(tmp_path) not in str([m.model_dump() for m in listed.values()])  # no paths
        # Both at once: two streams, one per model, read in turns.
        streams = {name: client.chat.completions.create(
            model=name, max_tokens=16, stream=True,
            messages=[{"role": "user", "content": "hello"}]) for name in ("alpha", "beta.gguf")}
        seen = {name: "" for name in streams}
        for _ in range(16):
            for name, stream in streams.items():
                chunk = next(stream, None)
                if chunk is not None and chunk.choices:
                    seen[name] += chunk.choices[0].delta.content or ""
        for stream in streams.values():
            for _chunk in stream:
                pass
        assert all(seen.values()), seen
        assert set(server.resident()) == {"alpha.gguf", "beta.gguf"}
        assert {m.id for m in client.models.list().data
                if m.model_extra["meta"]["loaded"]} == {"alpha.gguf", "beta.gguf"}
        with pytest.raises(openai.NotFoundError) as err:
            _say(client, "no-such-model")
        assert err.value.code == "model_not_found"


def _answers(client: openai.OpenAI, model: str) -> bool:
    try:
        return _say(client, model) == model + ".gguf"
    except openai.NotFoundError:
        return False


def test_concurrent_requests_for_a_cold_model_load_it_once(tmp_path: Path) -> None:
    with running(tmp_path, "--no-dry-run") as server, _client(server) as client:
        answers: list[str] = []

        def ask() -> None:
            answers.append(_say(client, "alpha"))

        threads = [threading.Thread(target=ask) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert answers == ["alpha.gguf"] * 4
        assert list(server.runners()) == ["alpha.gguf"]  # one runner, not four
        assert sum("loaded alpha.gguf" in line for line in server.stderr) == 1


def test_a_third_model_evicts_the_least_recently_used_idle_one(tmp_path: Path) -> None:
    with running(tmp_path, "--no-dry-run", "--memory-budget-mib", "12",
                 models=("alpha.gguf", "beta.gguf", "gamma.gguf")) as server, \
            _client(server) as client:
        _say(client, "alpha")
        _say(client, "beta")
        _say(client, "alpha")  # beta is now the least recently used
        assert set(server.resident()) == {"alpha.gguf", "beta.gguf"}
        _say(client, "gamma")
        assert set(server.resident()) == {"alpha.gguf", "gamma.gguf"}
        assert set(server.runners()) == {"alpha.gguf", "gamma.gguf"}
        assert any("unloading beta.gguf: making room for gamma.gguf" in line
                   for line in server.stderr)


def test_models_in_use_are_never_evicted_503_with_retry_after(tmp_path: Path) -> None:
    with running(tmp_path, "--no-dry-run", "--memory-budget-mib", "6") as server, \
            _client(server) as client, server.client() as http:
        _say(client, "alpha")
        runner = server.runners()["alpha.gguf"]
        runner.suspend()  # its next request stays in flight until it is resumed
        answered: list[str] = []
        asking = threading.Thread(target=lambda: answered.append(_say(client, "alpha")))
        asking.start()
        try:
            until(lambda: server.resident()["alpha.gguf"]["requests"] == 1,
                  "the request to be in flight")
            r = http.post("/v1/chat/completions", json={
                "model": "beta", "max_tokens": 4, "messages": [{"role": "user", "content": "hi"}]})
            assert r.status_code == 503, r.text
            assert r.headers["retry-after"].isdigit()
            assert r.json()["error"]["code"] == "models_busy"
            assert "alpha.gguf" in r.json()["error"]["message"]
        finally:
            runner.resume()
            asking.join(120)
        assert answered == ["alpha.gguf"]
        assert _say(client, "beta") == "beta.gguf"  # alpha is idle now: it makes room
        assert set(server.resident()) == {"beta.gguf"}


def test_a_model_that_cannot_fit_even_alone_gets_insufficient_memory(tmp_path: Path) -> None:
    with running(tmp_path, "--no-dry-run", "--memory-budget-mib", "2") as server, \
            _client(server) as client:
        with pytest.raises(openai.BadRequestError) as err:
            _say(client, "alpha")
        assert err.value.code == "insufficient_memory"
        assert "memory_budget_mib" in str(err.value)
        assert server.resident() == {}


def test_idle_models_unload_and_keep_alive_zero_unloads_at_once(tmp_path: Path) -> None:
    with running(tmp_path, "--no-dry-run", "--idle-minutes", "0.02") as server, \
            _client(server) as client:
        _say(client, "alpha")
        until(lambda: server.resident() == {}, "the idle model to be unloaded")
        until(lambda: server.runners() == {}, "its runner to exit")
    with running(tmp_path / "2", "--no-dry-run", "--idle-minutes", "-1") as server, \
            _client(server) as client:
        _say(client, "alpha")
        _say(client, "beta", extra_body={"keep_alive": 0})
        until(lambda: set(server.resident()) == {"alpha.gguf"}, "beta to be unloaded")
        assert server.resident()["alpha.gguf"]["unload_after_s"] is None  # never


def test_a_killed_runner_restarts_on_its_next_request_and_the_other_keeps_serving(
        tmp_path: Path) -> None:
    with running(tmp_path, "--no-dry-run") as server, _client(server) as client:
        _say(client, "alpha")
        _say(client, "beta")
        runners = server.runners()
        runners["alpha.gguf"].kill()
        runners["alpha.gguf"].wait(30)
        until(lambda: "alpha.gguf" not in server.resident(), "the server to see the crash")
        assert server.runners()["beta.gguf"].pid == runners["beta.gguf"].pid
        _say(client, "beta")
        _say(client, "alpha")  # started again
        assert server.runners()["alpha.gguf"].pid != runners["alpha.gguf"].pid
        assert any("the runner for alpha.gguf ended" in line for line in server.stderr)


def test_killing_the_server_leaves_no_runner_behind(tmp_path: Path) -> None:
    server = start(tmp_path, "--no-dry-run")
    with _client(server) as client:
        _say(client, "alpha")
        _say(client, "beta")
    runners = list(server.runners().values())
    assert len(runners) == 2
    server.process.kill()  # kill -9: no chance to stop them itself
    server.process.wait(30)
    _gone, alive = psutil.wait_procs(runners, timeout=30)
    for p in alive:
        p.kill()
    assert not alive, "runners outlived a killed server"


def test_sigterm_stops_every_runner_and_exits_0(tmp_path: Path) -> None:
    server = start(tmp_path, "--no-dry-run")
    with _client(server) as client:
        _say(client, "alpha")
    runners = list(server.runners().values())
    assert stop(server) == 0
    gone, alive = psutil.wait_procs(runners, timeout=30)
    assert not alive and len(gone) == 1


def test_models_added_or_removed_after_start_are_seen(tmp_path: Path) -> None:
    with running(tmp_path, "--no-dry-run") as server, _client(server) as client:
        assert "delta.gguf" not in {m.id for m in client.models.list().data}
        add_model(tmp_path, "delta.gguf")
        # A miss scans the folders again (at most four times a second).
        until(lambda: _answers(client, "delta"), "the new model to be served")
        (tmp_path / "models" / "beta.gguf").unlink()
        until(lambda: "beta.gguf" not in {m.id for m in client.models.list().data},
              "the removed model to leave the list")
        with pytest.raises(openai.NotFoundError):
            _say(client, "beta")


def test_aliases_map_other_programs_model_names(tmp_path: Path) -> None:
    (tmp_path / "config").mkdir(parents=True)
    (tmp_path / "config" / "server.json").write_text(
        '{"aliases": {"claude-*": "beta.gguf", "gpt-4o": "alpha.gguf"}}')
    with running(tmp_path, "--no-dry-run") as server, _client(server) as client:
        assert _say(client, "claude-sonnet-4-5") == "beta.gguf"
        assert _say(client, "gpt-4o") == "alpha.gguf"


def test_the_key_and_the_host_check_guard_every_endpoint(tmp_path: Path) -> None:
    with running(tmp_path, "--no-dry-run") as server:
        with server.client("wrong-key") as http:
            for path in ("/v1/models", "/hearth/models"):
                assert http.get(path).status_code == 401
            assert http.post("/v1/chat/completions", json={"model": "alpha"}).status_code == 401
        with server.client() as http:
            r = http.get("/v1/models", headers={"Host": "evil.example"})
            assert r.status_code == 421
            assert http.get("/v1/models", headers={"Authorization": "", "x-api-key": KEY}
                            ).status_code == 200
            r = http.post("/v1/chat/completions", content=b"[1, 2")
            assert r.status_code == 400 and "JSON" in r.json()["error"]["message"]
            r = http.post("/v1/chat/completions", json={"messages": []})
            assert r.status_code == 400 and "'model'" in r.json()["error"]["message"]
        assert server.resident() == {}


def _pin_context(home: Path, model: Path, n_ctx: int) -> None:
    """The person's offload pins for ``model`` on this machine, as the window's panel saves
    them (the server plans with them)."""
    code = f"""
from app.hardware import detect_hardware
from app.library.model_settings import ModelSettingsStore
from app.loading.tuning import machine_key, model_settings_key, pins_to_json, settings_key
from app.planner.types import Pins
from app.storage.db import open_database
db = open_database()
key = settings_key(model_settings_key({str(model)!r}), machine_key(detect_hardware()))
ModelSettingsStore(db).put(key, pins_to_json(Pins(n_ctx={n_ctx})))
db.close()
"""
    subprocess.run([sys.executable, "-c", code], env=server_env(home), check=True, timeout=120)


def test_a_prompt_longer_than_the_context_reloads_with_a_larger_one_or_gets_a_clear_400(
        tmp_path: Path) -> None:
    long_model = model_path(replace(TINY, n_ctx_train=32768, name="hearth-long-context"))
    path = add_model(tmp_path, "long.gguf", long_model)
    _pin_context(tmp_path, path, 512)  # the saved pins ask for a small context
    with running(tmp_path, "--no-dry-run", "--memory-budget-mib", "8", models=()) as server, \
            _client(server) as client:
        _say(client, "long")
        assert "--ctx-size" in (argv := server.runners()["long.gguf"].cmdline())
        assert argv[argv.index("--ctx-size") + 1] == "512"  # the pins were planned with
        prompt = "hello " * 400  # about 1,600 tokens
        r = client.chat.completions.create(model="long", max_tokens=8,
                                           messages=[{"role": "user", "content": prompt}])
        assert r.usage is not None and r.usage.prompt_tokens > 512
        argv = server.runners()["long.gguf"].cmdline()
        assert int(argv[argv.index("--ctx-size") + 1]) >= r.usage.prompt_tokens + 8
        assert any("needs a context of" in line for line in server.stderr)
        with pytest.raises(openai.BadRequestError) as err:  # 80,000 tokens do not fit 8 MiB
            client.chat.completions.create(model="long", max_tokens=8, messages=[
                {"role": "user", "content": "hello " * 20000}])
        assert err.value.code == "context_length_exceeded"
        assert "does not fit" in str(err.value) and "Shorten the conversation" in str(err.value)
        assert _say(client, "long") == "long.gguf"  # and it loads again as the pins say


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_hearth_serve_runs_without_a_display_and_keeps_its_port_and_key(tmp_path: Path) -> None:
    """Through the app's own entry (`hearth serve`, which becomes the server process), with no
    display and no Qt platform set; the key it makes on its first start is kept, and a restart
    listens at the same address with the same key; a model's reload keeps both."""
    port = _free_port()
    env = {k: v for k, v in server_env(tmp_path).items()
           if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    add_model(tmp_path, "alpha.gguf")
    urls, keys = [], []
    for _ in range(2):
        process = subprocess.Popen(
            [sys.executable, "-m", "app", "serve", "--port", str(port), "--no-dry-run"],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL, text=True)
        server = Server(process, "", tmp_path)
        try:
            assert process.stdout is not None
            server.url = json.loads(process.stdout.readline())["url"]
            urls.append(server.url)
            keys.append(_stored_key(tmp_path))
            with openai.OpenAI(base_url=server.url + "/v1", api_key=keys[0],
                               max_retries=0) as client:
                _say(client, "alpha", extra_body={"keep_alive": 0})  # loaded, then unloaded
                _say(client, "alpha")  # loaded again: the same address and key
        finally:
            assert stop(server) == 0
    assert urls == [f"http://127.0.0.1:{port}"] * 2
    assert keys[0] == keys[1] and len(keys[0]) >= 32


def _stored_key(home: Path) -> str:
    code = "from app.remote.share import SHARED_KEY; print(SHARED_KEY.get())"
    done = subprocess.run([sys.executable, "-c", code], env=server_env(home), check=True,
                          capture_output=True, text=True, timeout=60)
    return done.stdout.strip()


def test_a_model_loaded_again_reuses_its_dry_run(tmp_path: Path) -> None:
    with running(tmp_path) as server, _client(server) as client:  # the dry run is on
        _say(client, "alpha", extra_body={"keep_alive": 0})
        until(lambda: server.resident() == {}, "alpha to unload")
        _say(client, "alpha")
        planned = [line for line in server.stderr if "planned alpha.gguf" in line]
        assert len(planned) == 2
        assert "earlier load" not in planned[0] and "earlier load" in planned[1]


def test_a_client_that_leaves_before_its_whole_reply_ends_the_runners_request(
        tmp_path: Path) -> None:
    """A non-streaming request whose client gives up (a time-out, a closed editor): the server
    ends its request to the runner too, so the model is free (and evictable) again instead of
    generating thousands of tokens for nobody."""
    import httpx2

    from tests.fixtures.models import BENCH

    with running(tmp_path, "--no-dry-run", models=()) as server:
        add_model(tmp_path, "bench.gguf", model_path(BENCH))
        with server.client() as http:
            http.post("/v1/completions", json={"model": "bench", "prompt": "hi", "max_tokens": 1})
            with pytest.raises(httpx2.ReadTimeout):  # the client gives up and goes away
                http.post("/v1/completions", timeout=httpx2.Timeout(10.0, read=1.0), json={
                    "model": "bench", "prompt": "the world", "max_tokens": 6000,
                    "ignore_eos": True})
        until(lambda: any("a client left before its reply from bench.gguf" in line
                          for line in server.stderr), "the request ended with its client")
        until(lambda: server.resident()["bench.gguf"]["requests"] == 0, "the model free again")
        with _client(server) as client:
            assert _say(client, "bench") == "bench.gguf"


def test_a_smaller_model_of_the_family_drafts_as_measured(tmp_path: Path) -> None:
    """Speculative decoding in the model server (issue 32): a model in the catalog that can draft
    for the one asked for loads beside it, measured at its first load; the verdict is kept for
    its next (the window's file, the same pair, runtime and computer)."""
    from tests.fixtures.speculative import DRAFT, TARGET

    add_model(tmp_path, "big.gguf", model_path(replace(TARGET, n_layer=12, inert_layers=11,
                                                       name="hearth-spec-target-12")))
    add_model(tmp_path, "small.gguf", model_path(DRAFT))
    with running(tmp_path, "--no-dry-run", models=()) as server, _client(server) as client:
        client.chat.completions.create(model="big", max_tokens=4,
                                       messages=[{"role": "user", "content": "hello"}])
        argv = server.runners()["big.gguf"].cmdline()
        assert argv[argv.index("--spec-draft-model") + 1].endswith("small.gguf")
        assert "--spec-measure" in argv
        kept = tmp_path / "cache" / "speculation-measurements.json"
        until(kept.exists, "the trial's verdict kept")
        entry = json.loads(kept.read_text())["entries"][0]
        assert "big.gguf" in entry["key"] and "small.gguf" in entry["key"]
