"""The runner's port in its command line (app/runner_client/command.py): loopback always, 0 by
default, a fixed one when the user shares the model; the key stays fresh per start."""

from __future__ import annotations

import pytest

from app.runner_client.command import build_launch


def _flag(args: list[str], name: str) -> str:
    return args[args.index(name) + 1]


def test_default_is_any_free_port_on_loopback() -> None:
    launch = build_launch("m.gguf", base_env={})
    assert _flag(launch.args, "--port") == "0"
    assert _flag(launch.args, "--host") == "127.0.0.1"


def test_a_fixed_port_is_passed_and_the_key_still_changes() -> None:
    a = build_launch("m.gguf", ["--ctx-size", "512"], base_env={}, port=8765)
    b = build_launch("m.gguf", base_env={}, port=8765)
    assert _flag(a.args, "--port") == "8765"
    assert _flag(a.args, "--host") == "127.0.0.1"  # never another interface
    assert a.args[-2:] == ["--ctx-size", "512"]
    assert a.key != b.key and a.env["HEARTH_API_KEY"] == a.key
    assert all(a.key not in arg for arg in a.args)


@pytest.mark.parametrize("port", [-1, 65536, True, "8080", 80.0])
def test_a_bad_port_is_refused(port: object) -> None:
    with pytest.raises(ValueError, match="port"):
        build_launch("m.gguf", base_env={}, port=port)  # type: ignore[arg-type]
