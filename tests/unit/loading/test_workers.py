"""The worker list: addresses as people type them, the saved file, and the check's answer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.loading.workers import (
    load_workers,
    normalize,
    parse_check,
    save_workers,
    worker_command,
    worker_program,
)


@pytest.mark.parametrize(("typed", "want"), [
    ("192.168.1.20:50052", "192.168.1.20:50052"),
    ("  gpu-box.local  ", "gpu-box.local:50052"),
    ("rpc://10.0.0.2:6000/", "10.0.0.2:6000"),
    ("[fe80::1]:50052", "[fe80::1]:50052"),
])
def test_addresses_are_normalized(typed: str, want: str) -> None:
    assert normalize(typed) == want


@pytest.mark.parametrize(("typed", "says"), [
    ("", "Type the worker's address"),
    ("host:0", "from 1 to 65535"),
    ("host:port", "must be a number"),
    ("http://x/y:1", "is not an address"),
    ("a b:1", "is not an address"),
])
def test_bad_addresses_say_what_to_type(typed: str, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        normalize(typed)


def test_the_list_survives_a_restart_and_a_damaged_file(tmp_path: Path) -> None:
    path = tmp_path / "workers.json"
    assert load_workers(path) == []
    save_workers(["10.0.0.2:50052", "10.0.0.3:6000"], path)
    assert load_workers(path) == ["10.0.0.2:50052", "10.0.0.3:6000"]
    path.write_text(json.dumps({"workers": ["10.0.0.2", "bad address!", "10.0.0.2:50052"]}))
    assert load_workers(path) == ["10.0.0.2:50052"]  # normalized, deduplicated, bad dropped
    path.write_text("{not json")
    assert load_workers(path) == []


def test_the_checks_answer_becomes_devices_and_reasons() -> None:
    out = json.dumps({
        "workers": [{"endpoint": "10.0.0.2:50052", "protocol": "7.0.0",
                     "devices": [{"index": 0, "free": 5, "total": 8},
                                 {"index": 1, "free": 6, "total": 9}]}],
        "errors": [{"endpoint": "10.0.0.3:50052", "error": "the worker at 10.0.0.3:50052 "
                    "cannot be reached (Connection refused)"}]})
    checked = parse_check("banner line\n" + out, ["10.0.0.2:50052", "10.0.0.3:50052"])
    assert [(d.endpoint, d.index, d.free, d.total) for d in checked.devices] == [
        ("10.0.0.2:50052", 0, 5, 8), ("10.0.0.2:50052", 1, 6, 9)]
    [note] = checked.notes()
    assert note.code == "worker_unavailable" and note.params["endpoint"] == "10.0.0.3:50052"
    # An old runner without rpc-check: every worker is left out, with the runner's words.
    old = parse_check("", ["10.0.0.2:50052"], "hearth-runner: error: invalid choice: 'rpc-check'")
    assert old.devices == () and "invalid choice" in old.problems[0][1]


def test_lending_this_computer_beyond_loopback_says_so_explicitly() -> None:
    assert "--allow-remote" not in worker_command(["r"])
    assert worker_command(["r"], host="0.0.0.0", port=6000)[-1] == "--allow-remote"


def test_lending_uses_the_runtime_it_is_handed(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """The chosen runtime's program when it names a folder (the app's RuntimeSelection),
    else the first usable runtime folder: the built-in build has no RPC backend."""
    from app.runner_client.command import RunnerProgram
    from tests.unit.runtimes.fakes import install_runtimes

    monkeypatch.setenv("HEARTH_RUNTIMES", str(tmp_path))
    installed = install_runtimes(tmp_path)
    chosen = RunnerProgram(("hearth-runner",), ("--runtime", str(installed["vulkan"])))
    assert worker_program(chosen) == chosen.argv
    builtin = RunnerProgram(("hearth-runner",), ("--runtime=built-in",))
    assert worker_program(builtin) == ["hearth-runner", "--runtime",
                                       str(installed["cpu-portable"])]
