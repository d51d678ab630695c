"""The runner's limits as the app's settings set them (issue 24: "passed through from the app's
settings"): the names the app knows are the runner's flags, a hand-edited file cannot put any
other flag on the runner's command line, and a limit in settings.json reaches the real runner."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import argparse
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from app.runner_client.limits import (
    OUTPUT_LINE_KIB,
    RUNNER_LIMITS,
    flag,
    limit_flags,
    output_line_bytes,
)
from app.settings import AppSettings, load_settings, save_settings
from runner.limits import FLAGS, Limits, add_limit_flags, limits_from_args


def _runner_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser()
    add_limit_flags(parser)
    return parser


def test_the_app_knows_every_runner_limit_by_its_flag() -> None:
    assert set(RUNNER_LIMITS) == set(FLAGS)
    assert all(flag(name) == FLAGS[name] for name in RUNNER_LIMITS)
    defaults = Limits()
    for name, kind in RUNNER_LIMITS.items():
        assert isinstance(getattr(defaults, name), kind), name


def test_every_limit_from_settings_parses_as_the_runners_flag() -> None:
    wanted = {name: (7 if kind is int else 2.5) for name, kind in RUNNER_LIMITS.items()}
    limits = limits_from_args(_runner_parser().parse_args(limit_flags(wanted)))
    assert {name: getattr(limits, name) for name in RUNNER_LIMITS} == wanted


def test_a_hand_edited_file_cannot_add_another_flag_or_a_bad_value(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"version": 1, "runner_limits": {
        "max_body_mib": 64, "model": "/etc/passwd", "--host 0.0.0.0": 1,
        "max_messages": -1, "header_timeout": "inf", "idle_timeout": float("nan"),
        "max_connections": 2.5, "body_timeout": True, OUTPUT_LINE_KIB: 128}}))
    settings = load_settings(path)
    assert settings.runner_limits == {"max_body_mib": 64, OUTPUT_LINE_KIB: 128}
    assert limit_flags(settings.runner_limits) == ["--max-body-mib", "64"]
    assert output_line_bytes(settings.runner_limits) == 128 * 1024
    with pytest.raises(ValueError, match="not a limit"):
        AppSettings().with_changes(runner_limits={"host": 1})


def test_limits_survive_a_save(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    save_settings(AppSettings(runner_limits={"max_body_mib": 64, "body_timeout": 300.0}), path)
    assert load_settings(path).runner_limits == {"max_body_mib": 64, "body_timeout": 300.0}


@pytest.fixture
def runner(qtbot: Any) -> Iterator[Any]:
    from app.services.runner_process import RunnerProcess
    from app.services.tasks import TaskRunner

    tasks = TaskRunner()
    r = RunnerProcess(tasks, limits={"max_body_mib": 1})
    yield r
    r.stop_and_wait()
    tasks.wait(5000)


@pytest.mark.timeout(120)
def test_a_limit_in_settings_reaches_the_real_runner(runner: Any, qtbot: Any,
                                                     tiny_model: Path) -> None:
    """Today: the app has no way to pass a limit, and the runner takes 2 MiB at its default."""
    with qtbot.waitSignal(runner.ready, timeout=60_000):
        runner.start(str(tiny_model))
    body = json.dumps({"messages": [{"role": "user", "content": "x" * 2 * 2**20}],
                       "max_tokens": 1}).encode()
    resp = httpx2.post(f"{runner.url}/v1/chat/completions", content=body, timeout=60,
                       headers={"Authorization": f"Bearer {runner.key}",
                                "Content-Type": "application/json"}, trust_env=False)
    assert resp.status_code == 413, resp.text[:300]
    message = resp.json()["error"]["message"]
    assert "at most 1 MiB" in message and "--max-body-mib" in message, message
