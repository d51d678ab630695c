"""One owner of the runner's command line: app/runner_client/command.py (``RunnerProgram``).

No other app module spells a runner command, and every command line the app builds is one the
runner's own argparse parsers accept (the test imports both sides; the app never does).
"""

from __future__ import annotations

import argparse
import ast
import subprocess
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

import runner.__main__ as runner_main
from app.runner_client.command import RunnerProgram, build_launch

ROOT = Path(__file__).resolve().parents[2]
OWNER = ROOT / "app" / "runner_client" / "command.py"
COMMANDS = frozenset({"serve", "probe", "devices", "selftest", "rpc-worker", "rpc-check"})
# The same words as keys of the runner's JSON answers ("devices", "probe"): reading a mapping.
_MAPPING_METHODS = frozenset({"get", "pop", "setdefault"})


def _parents(tree: ast.AST) -> dict[ast.AST, ast.AST]:
    return {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}


def _is_text(node: ast.AST) -> bool:
    return isinstance(node, ast.JoinedStr) or (
        isinstance(node, ast.Constant) and isinstance(node.value, str))


def _spells_a_command(node: ast.Constant, parents: dict[ast.AST, ast.AST]) -> bool:
    """Whether a string literal equal to a runner command is one (and not a JSON key, or a
    word of a sentence)."""
    parent = parents.get(node)
    if isinstance(parent, ast.Assign) and all(
            isinstance(t, ast.Name) and t.id.endswith("_SUBCOMMAND") for t in parent.targets):
        return False  # SERVE_SUBCOMMAND = "serve": hearth's own subcommand, named once
    if isinstance(parent, ast.Dict) and any(k is node for k in parent.keys):
        return False  # {"devices": [...]}
    if isinstance(parent, ast.Subscript) and parent.slice is node:
        return False  # data["devices"], out["probe"] = ...
    if (isinstance(parent, ast.Call) and parent.args and parent.args[0] is node
            and isinstance(parent.func, ast.Attribute) and parent.func.attr in _MAPPING_METHODS):
        return False  # data.get("devices")
    # Part of a sentence: "2 " + ("devices" if ... else "GPUs")
    up: ast.AST | None = parent
    while isinstance(up, ast.IfExp | ast.BinOp):
        if isinstance(up, ast.BinOp) and (_is_text(up.left) or _is_text(up.right)) and not (
                up.left is node or up.right is node):
            return False
        up = parents.get(up)
    return True


def command_literals(source: str, name: str = "<source>") -> Iterator[str]:
    tree = ast.parse(source, name)
    parents = _parents(tree)
    for node in ast.walk(tree):
        if (isinstance(node, ast.Constant) and node.value in COMMANDS
                and _spells_a_command(node, parents)):
            yield f"{name}:{node.lineno}: {node.value!r}"


def test_the_scan_sees_a_command_and_not_a_json_key() -> None:
    spelled = 'cmd = [*program, "probe", *args]\nrun([*p, "rpc-check", eps])\nc.append("serve")\n'
    assert len(list(command_literals(spelled))) == 3
    read = ('n = data.get("devices", [])\nx = d["devices"]\nout["probe"] = 1\n'
            'y = {"devices": []}\ns = f"{n} " + ("devices" if n > 1 else "GPUs")\n'
            'SERVE_SUBCOMMAND = "serve"\n')
    assert list(command_literals(read)) == []


def test_no_app_module_but_the_owner_spells_a_runner_command() -> None:
    found = [hit for path in sorted((ROOT / "app").rglob("*.py")) if path != OWNER
             for hit in command_literals(path.read_text(encoding="utf-8"),
                                         str(path.relative_to(ROOT)))]
    assert found == [], ("runner commands are built by RunnerProgram in "
                         "app/runner_client/command.py only:\n" + "\n".join(found))


# -- every command line the app builds, through the runner's own parsers --------------------------


class _Parsed(Exception):
    def __init__(self, prog: str, args: argparse.Namespace) -> None:
        super().__init__(prog)
        self.prog, self.namespace = prog, args


def runner_parses(argv: Sequence[str], program: Sequence[str],
                  monkeypatch: pytest.MonkeyPatch) -> tuple[str, argparse.Namespace, list[Any]]:
    """Hand ``argv`` (less ``program``) to the runner's ``main`` as its own command line, stop
    right after the parser of the command accepts it: (that parser's prog, its namespace, the
    runtimes the runner was told to use)."""
    assert list(argv[:len(program)]) == list(program)
    real = argparse.ArgumentParser.parse_args
    chosen: list[Any] = []

    def parse_and_stop(self: argparse.ArgumentParser, *a: Any, **kw: Any) -> Any:
        raise _Parsed(self.prog, real(self, *a, **kw))

    from runner import runtime

    with monkeypatch.context() as m:
        m.setattr(argparse.ArgumentParser, "parse_args", parse_and_stop)
        m.setattr(runtime, "choose", chosen.append)
        with pytest.raises(_Parsed) as parsed:
            runner_main.main(list(argv[len(program):]))
    return parsed.value.prog, parsed.value.namespace, chosen


FOLDER = RunnerProgram(("hearth-runner",), ("--runtime", "/opt/hearth/runtimes/cuda"))
BUILTIN = RunnerProgram(("/usr/bin/python3", "-m", "runner"), ("--runtime=built-in",))
PLAIN = RunnerProgram(("hearth-runner",))
PROGRAMS = pytest.mark.parametrize("program", [FOLDER, BUILTIN, PLAIN],
                                   ids=["folder", "built-in", "none"])


def _runtime_of(program: RunnerProgram) -> list[str | None]:
    """What the runner is told to use; None: it chooses as the app would."""
    args = program.runtime_args
    if not args:
        return [None]
    return [args[1]] if args[0] == "--runtime" else [args[0].split("=", 1)[1]]


@PROGRAMS
@pytest.mark.parametrize("host", ["127.0.0.1", "192.168.1.20"])
def test_serve_parses(program: RunnerProgram, host: str, monkeypatch: pytest.MonkeyPatch) -> None:
    argv = program.serve("/m/x.gguf", ["--ctx-size", "8192", "--n-gpu-layers", "33"],
                         host=host, port=8765)
    prog, args, chosen = runner_parses(argv, program.program, monkeypatch)
    assert (prog, args.command, args.model, args.host, args.port) == (
        "hearth-runner", "serve", "/m/x.gguf", host, 8765)
    assert args.ctx_size == 8192 and args.n_gpu_layers == 33 and args.watch_stdin
    assert args.allow_remote == (host != "127.0.0.1")
    assert chosen == _runtime_of(program)


@PROGRAMS
def test_probe_parses(program: RunnerProgram, monkeypatch: pytest.MonkeyPatch) -> None:
    prog, args, chosen = runner_parses(program.probe(["--model", "/m/x.gguf", "--ctx-size", "512"]),
                                       program.program, monkeypatch)
    assert "probe" in prog and args.model == "/m/x.gguf" and args.ctx_size == 512
    assert chosen == _runtime_of(program)


@PROGRAMS
def test_embed_parses(program: RunnerProgram, monkeypatch: pytest.MonkeyPatch) -> None:
    _prog, args, chosen = runner_parses(program.embed("/m/e.gguf", "/d/documents.db"),
                                       program.program, monkeypatch)
    assert (args.command, args.model, args.host, args.vectors_db) == (
        "serve", "/m/e.gguf", "127.0.0.1", "/d/documents.db")
    assert args.embedding and args.watch_stdin and chosen == _runtime_of(program)


@PROGRAMS
def test_devices_and_selftest_parse(program: RunnerProgram,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    prog, _, chosen = runner_parses(program.devices(), program.program, monkeypatch)
    assert "devices" in prog and chosen == _runtime_of(program)
    prog, args, _ = runner_parses(program.selftest(), program.program, monkeypatch)
    assert "selftest" in prog and args.json


@PROGRAMS
@pytest.mark.parametrize("host", ["127.0.0.1", "::1", "0.0.0.0"])
def test_rpc_worker_parses(program: RunnerProgram, host: str,
                           monkeypatch: pytest.MonkeyPatch) -> None:
    prog, args, chosen = runner_parses(program.rpc_worker(host=host, port=50060),
                                       program.program, monkeypatch)
    assert "rpc-worker" in prog and (args.host, args.port) == (host, 50060)
    assert args.watch_stdin and args.allow_remote == (host == "0.0.0.0")
    assert chosen == _runtime_of(program)


@PROGRAMS
def test_rpc_check_parses(program: RunnerProgram, monkeypatch: pytest.MonkeyPatch) -> None:
    argv = program.rpc_check(["10.0.0.2:50052", "10.0.0.3:50052"], timeout=2.5)
    prog, args, _ = runner_parses(argv, program.program, monkeypatch)
    assert "rpc-check" in prog
    assert (args.endpoints, args.timeout) == ("10.0.0.2:50052,10.0.0.3:50052", 2.5)


# -- the app's own call sites build their commands through the value ------------------------------


def test_the_call_sites_build_commands_the_runner_accepts(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from app.loading import confirm, workers
    from app.runner_client import build
    from app.runtimes import selftest

    program = ["hearth-runner", "--runtime", "/opt/rt"]
    ran: list[list[str]] = []

    def fake_run(argv: Sequence[str], **kw: Any) -> subprocess.CompletedProcess[str]:
        ran.append(list(argv))
        return subprocess.CompletedProcess(list(argv), 0, '{"devices": [], "n_ctx": 512}', "")

    for module in (confirm, workers, build):
        monkeypatch.setattr(module, "run_runner", fake_run)
    confirm.run_probe(["--model", "/m/x.gguf"], program)
    workers.check_workers(["10.0.0.2:50052"], program, timeout=3.0)
    build.query_devices(program)
    selftest.run_selftest(program)
    launch = build_launch("/m/x.gguf", ["--ctx-size", "512"], base_env={}, program=program)
    ran += [[launch.program, *launch.args],
            workers.worker_command(program, host="0.0.0.0", port=50052)]
    commands = []
    for argv in ran:
        prog, _, chosen = runner_parses(argv, program[:1], monkeypatch)
        assert chosen == ["/opt/rt"], argv
        commands.append(prog)
    assert commands == ["hearth-runner probe", "hearth-runner rpc-check",
                        "hearth-runner devices", "hearth-runner selftest", "hearth-runner",
                        "hearth-runner rpc-worker"]


def test_the_chosen_runtime_is_one_value(monkeypatch: pytest.MonkeyPatch,
                                         tmp_path: Path) -> None:
    """The runtime is a value handed on (``RuntimeSelection.program()``, a build's program),
    not a setting of this module: RunnerProgram.of(None) is the runner with no runtime named
    whatever a selection chose."""
    from app.runner_client import command
    from app.runtimes.select import RuntimeSelection
    from app.runtimes.selftest import SelftestCache
    from tests.fixtures.hardware.make_reports import load_report
    from tests.unit.runtimes.fakes import install_runtimes, passing

    monkeypatch.setattr(command, "base_program", lambda: ["hearth-runner"])
    rt = install_runtimes(tmp_path)["cpu-portable"]
    selection = RuntimeSelection("cpu-portable", folders=[tmp_path], selftest=passing,
                                 selftests=SelftestCache(tmp_path / "selftests.json"))
    selection.select(lambda: load_report("cpu_only_16gb"))
    current = selection.program()
    assert current == RunnerProgram(("hearth-runner",), ("--runtime", str(rt)))
    assert RunnerProgram.of(current) == current and RunnerProgram.of(None) == PLAIN
    assert current.devices() == ["hearth-runner", "--runtime", str(rt), "devices"]
    assert RunnerProgram.base().with_runtime(("--runtime=built-in",)).probe([]) == [
        "hearth-runner", "--runtime=built-in", "probe"]
