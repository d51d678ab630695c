"""The ``image_links`` setting (Settings → Sharing) on its way to the runners: saved and read
back, written as ``--image-links`` on the command lines the app and the model server build, and
accepted by the runner's parser (no Qt, no runner started)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from app.runner_client.command import RunnerProgram, build_launch
from app.settings import AppSettings, load_settings, save_settings
from tests.unit.test_runner_argv import runner_parses

PLAIN = RunnerProgram(("hearth-runner",))


def test_the_setting_is_off_by_default_saved_and_read_back(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    assert AppSettings().image_links is False
    save_settings(AppSettings(image_links=True), path)
    assert json.loads(path.read_text("utf-8"))["image_links"] is True
    assert load_settings(path).image_links is True
    data = json.loads(path.read_text("utf-8"))
    path.write_text(json.dumps(data | {"image_links": "yes"}), "utf-8")
    assert load_settings(path).image_links is False  # a bad value: the default, not on
    with pytest.raises(ValueError, match="image_links must be true or false"):
        AppSettings().with_changes(image_links=1)


@pytest.mark.parametrize("on", [False, True])
def test_the_launch_carries_the_flag_and_the_runner_accepts_it(
        on: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    launch = build_launch("/m/x.gguf", ["--ctx-size", "512"], base_env={}, program=PLAIN,
                          image_links=on)
    assert ("--image-links" in launch.args) is on
    _, args, _ = runner_parses([launch.program, *launch.args], PLAIN.program, monkeypatch)
    assert args.image_links is on and args.ctx_size == 512


def test_the_runner_sets_the_fetcher_only_with_the_flag(monkeypatch: pytest.MonkeyPatch) -> None:
    """serve_main → _serve: RunnerState.fetch_image is the bounded client with the flag, None
    without (image_input refuses links then)."""
    import runner.__main__ as runner_main
    from runner import server
    from runner.remote_image import fetch_image

    states: list[Any] = []

    class Stop(Exception):
        pass

    real = server.RunnerState

    def capture(*a: Any, **kw: Any) -> Any:
        state = real(*a, **kw)
        states.append(state)
        return state

    def stop(*_a: Any, **_kw: Any) -> Any:
        raise Stop

    monkeypatch.setattr(server, "RunnerState", capture)
    monkeypatch.setattr(runner_main, "_connection_cap", stop)  # right after fetch_image is set
    from runner.settings import LoadSettings

    for flag in (False, True):
        with pytest.raises(Stop):
            runner_main._serve(None, LoadSettings(model="/m/x.gguf"), None,  # type: ignore[arg-type]
                               image_links=flag)
    assert [s.fetch_image for s in states] == [None, fetch_image]


def test_the_model_server_passes_the_setting_or_its_flag(monkeypatch: pytest.MonkeyPatch) -> None:
    from server import __main__ as server_main
    from server import manager
    from server.config import ServerConfig

    parse = server_main.build_parser().parse_args
    assert server_main._with_overrides(ServerConfig(), parse([]), False).image_links is False
    assert server_main._with_overrides(ServerConfig(), parse([]), True).image_links is True
    assert server_main._with_overrides(ServerConfig(), parse(["--image-links"]),
                                       False).image_links is True
    # Each model's runner is started with it.
    seen: list[dict[str, Any]] = []

    class Stop(Exception):
        pass

    def launch(*a: Any, **kw: Any) -> Any:
        seen.append(kw)
        raise Stop

    monkeypatch.setattr(manager, "build_launch", launch)
    for on in (False, True):
        m = manager.Manager(None, lambda on=on: ServerConfig(image_links=on),  # type: ignore[arg-type,misc]
                            None, None)  # type: ignore[arg-type]
        slot = SimpleNamespace(planned=SimpleNamespace(flags=[], build=SimpleNamespace(program=None)),
                               entry=SimpleNamespace(id="a.gguf", path=Path("/m/a.gguf")),
                               embedding=False)
        with pytest.raises(Stop):
            asyncio.run(m._start(slot))  # type: ignore[arg-type]
    assert [kw["image_links"] for kw in seen] == [False, True]
