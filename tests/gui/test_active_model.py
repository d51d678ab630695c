"""The model in use (app/services/active_model.py) on in-memory fakes: what it asks of the loader,
the runner and the servers, and what it tells the views, with no window."""

from __future__ import annotations

from typing import Any

import pytest

from app.loading.endpoint import ChatEndpoint
from app.loading.state import Phase
from app.remote.servers import RemoteModel
from app.services.active_model import ActiveModel
from app.services.runner_process import RunnerState
from tests.gui.fakes import FakeRemote, make_fakes

A, B = "/models/a.gguf", "/models/b.gguf"


class Heard:
    """Every signal of an ActiveModel, in order."""

    def __init__(self, active: ActiveModel) -> None:
        self.events: list[tuple[Any, ...]] = []
        for name in ("said", "chosen", "in_use", "leaving", "died", "load_failed",
                     "remote_ready"):
            getattr(active, name).connect(
                lambda *args, _n=name: self.events.append((_n, *args)))

    def of(self, name: str) -> list[tuple[Any, ...]]:
        return [e[1:] for e in self.events if e[0] == name]


@pytest.fixture
def env(qtbot: Any) -> Any:
    f = make_fakes([A])
    remote = FakeRemote()
    active = ActiveModel(f.runner, f.loader, remote=remote, runner_flags=["--x"])
    return f, remote, active, Heard(active)


def test_a_load_plans_then_is_ready_with_the_runners_endpoint(env: Any) -> None:
    f, _remote, active, heard = env
    active.load(A)
    assert f.loader.loads == [(A, ["--x"])] and active.phase is Phase.PLANNING
    assert heard.of("in_use") == [(A,)]
    assert heard.of("said") == [("Planning how to load a.gguf…", False)]
    f.loader.finish_planning(None)
    assert active.phase is Phase.READY
    assert active.endpoint == ChatEndpoint.local(f.runner.url, "fake-key", A)


def test_switching_stops_the_ready_model_then_loads_the_other(qtbot: Any, env: Any) -> None:
    f, _remote, active, heard = env
    active.load(A)
    f.loader.finish_planning(None)
    active.load(B)
    assert f.runner.stopped == 1 and active.phase is Phase.SWITCHING
    assert set(heard.of("leaving")) == {(False,)}  # a reply to it stops (not "died")
    qtbot.waitUntil(lambda: f.runner.state == RunnerState.STOPPED, timeout=5000)
    assert heard.of("chosen") == [(B,)]  # the picker shows what loads now
    assert f.loader.loads[-1][0] == B and active.phase is Phase.PLANNING


def test_a_runner_that_dies_ends_the_reply_as_died_and_offers_restart(env: Any) -> None:
    f, _remote, active, heard = env
    active.load(A)
    f.loader.finish_planning(object())
    f.runner.die("The model runner stopped unexpectedly: it crashed.")
    assert heard.of("leaving")[-1] == (True,)
    assert active.phase is Phase.FAILED and active.can_restart and active.endpoint is None
    active.restart()
    assert active.phase is Phase.READY and not active.can_restart


def test_unload_while_planning_says_so_with_no_runner_to_stop(env: Any) -> None:
    f, _remote, active, heard = env
    active.load(A)
    active.unload()
    assert f.loader.cancelled == 1 and f.runner.stopped == 0
    assert heard.of("said")[-1] == ("No model loaded.", False)
    assert active.phase is Phase.NONE


def test_a_servers_model_is_used_once_checked_and_its_endpoint_is_the_servers(env: Any) -> None:
    f, remote, active, heard = env
    box = remote.put("Box", "http://10.0.0.2/v1", models=("qwen3",), key="sk")
    chosen = RemoteModel(box.id, "qwen3")
    active.use_remote(chosen)
    assert remote.calls[-1] == ("use", chosen) and active.checking == chosen
    assert active.endpoint is None  # nothing answers until the check is done
    remote.in_use.emit(chosen)
    assert active.remote_model == chosen and heard.of("remote_ready") == [(chosen,)]
    assert active.endpoint == ChatEndpoint.remote("http://10.0.0.2/v1", "sk", "qwen3", "Box",
                                                  "http://10.0.0.2/v1")
    assert heard.of("in_use") == [(chosen.key,)]
    assert f.loader.loads == [] and f.runner.state == RunnerState.STOPPED
    remote.remove(box.id)
    assert active.remote_model is None and active.endpoint is None
    assert "was removed" in heard.of("said")[-1][0]
