"""When the runner restarts itself with huge pages for big buffers (runner/hugepages.py)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from runner import hugepages
from runner.hugepages import TUNABLE, restart_command

ORIG_ARGV = ("python3", "-X", "utf8", "-m", "runner", "serve", "--model", "m.gguf")


def plan(environ: Mapping[str, str], *, platform_name: str = "linux", has_tunable: bool = True,
         thp: bool = True, frozen: bool = False, executable: str = "/venv/bin/python",
         orig_argv: Sequence[str] = ORIG_ARGV,
         ) -> tuple[list[str], dict[str, str]] | None:
    """restart_command on a Linux machine with glibc's tunable and huge pages, unless told."""
    return restart_command(environ, platform_name=platform_name, has_tunable=has_tunable,
                           thp=thp, frozen=frozen, executable=executable, orig_argv=orig_argv,
                           argv=("/repo/runner/__main__.py", "serve", "--model", "m.gguf"))


def test_serve_restarts_with_the_tunable_keeping_the_interpreter_options() -> None:
    planned = plan({"PATH": "/bin"})
    assert planned is not None
    command, env = planned
    assert command == ["/venv/bin/python", "-X", "utf8", "-m", "runner", "serve",
                       "--model", "m.gguf"]
    assert env == {"PATH": "/bin", "GLIBC_TUNABLES": f"{TUNABLE}=1"}


def test_other_tunables_are_kept() -> None:
    planned = plan({"GLIBC_TUNABLES": "glibc.malloc.arena_max=2"})
    assert planned is not None
    assert planned[1]["GLIBC_TUNABLES"] == f"glibc.malloc.arena_max=2:{TUNABLE}=1"


def test_a_frozen_runner_restarts_its_own_executable() -> None:
    planned = plan({}, frozen=True, executable="/opt/hearth/hearth-runner")
    assert planned is not None
    assert planned[0] == ["/opt/hearth/hearth-runner", "serve", "--model", "m.gguf"]


def test_no_restart_where_it_would_not_help_or_is_done() -> None:
    """Never twice (the restarted runner sees the tunable), never off Linux or glibc, never
    where the kernel gives no huge pages, and never when the person turned it off."""
    assert plan({"GLIBC_TUNABLES": f"{TUNABLE}=1"}) is None
    assert plan({"GLIBC_TUNABLES": f"glibc.malloc.arena_max=2:{TUNABLE}=0"}) is None
    assert plan({"HEARTH_NO_HUGEPAGES": "1"}) is None
    assert plan({}, platform_name="darwin") is None
    assert plan({}, platform_name="win32") is None
    assert plan({}, has_tunable=False) is None
    assert plan({}, thp=False) is None
    assert plan({}, orig_argv=()) is None


def test_the_kernel_mode_is_read_from_sysfs(tmp_path: Path) -> None:
    enabled = tmp_path / "enabled"
    for text, allowed in (("always [madvise] never\n", True), ("[always] madvise never\n", True),
                          ("always madvise [never]\n", False)):
        enabled.write_text(text)
        assert hugepages._thp_allowed(enabled) is allowed
    assert hugepages._thp_allowed(tmp_path / "absent") is False
