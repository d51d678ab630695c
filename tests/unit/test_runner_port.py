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


def test_loopback_by_default_and_a_network_interface_only_on_purpose() -> None:
    local = build_launch("m.gguf", base_env={}, host="127.0.0.1")
    assert _flag(local.args, "--host") == "127.0.0.1" and "--allow-remote" not in local.args
    lan = build_launch("m.gguf", ["--ctx-size", "512"], base_env={}, port=8765,
                       host="192.168.1.23")
    assert _flag(lan.args, "--host") == "192.168.1.23" and "--allow-remote" in lan.args
    assert lan.args[-2:] == ["--ctx-size", "512"]
    assert lan.env["HEARTH_API_KEY"] == lan.key and all(lan.key not in a for a in lan.args)
    every = build_launch("m.gguf", base_env={}, host="0.0.0.0")
    assert _flag(every.args, "--host") == "0.0.0.0" and "--allow-remote" in every.args


@pytest.mark.parametrize("host", ["my-laptop", "", "127.0.0.1; rm -rf /"])
def test_a_host_that_is_not_an_address_is_refused(host: str) -> None:
    with pytest.raises(ValueError, match="interface"):
        build_launch("m.gguf", base_env={}, host=host)
