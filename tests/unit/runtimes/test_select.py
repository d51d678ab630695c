"""The runtime choice is a value (``RuntimeSelection``), not a module's state: two selections
never see each other's choice, and asking for another runtime changes the program the next
load plans and serves with."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest

from app.planner import wording
from app.runner_client import command
from app.runner_client.build import BuildCache
from app.runner_client.command import RunnerProgram
from app.runtimes import select
from app.runtimes.select import RuntimeSelection
from app.runtimes.selftest import SelftestCache
from tests.fixtures.hardware.make_reports import load_report
from tests.unit.loading.stand_in import make_stand_in
from tests.unit.runtimes.fakes import install_runtimes, passing

ROOT = Path(__file__).resolve().parents[3]


def machine() -> Any:
    return load_report("cpu_only_16gb")


@pytest.fixture
def installed(tmp_path: Path) -> dict[str, Path]:
    return install_runtimes(tmp_path / "runtimes")


def selection(installed: dict[str, Path], tmp_path: Path, wanted: str | None,
              **kw: Any) -> RuntimeSelection:
    """A selection among ``installed`` only, with self-tests kept in the test's own folder."""
    folders = [next(iter(installed.values())).parent]
    return RuntimeSelection(wanted, folders=folders,
                            selftests=SelftestCache(tmp_path / "selftests.json"),
                            builds=BuildCache(tmp_path / "builds.json"),
                            **{"selftest": passing, **kw})


def test_two_selections_keep_their_own_choice(installed: dict[str, Path],
                                              tmp_path: Path) -> None:
    cpu = selection(installed, tmp_path, "cpu-portable")
    vulkan = selection(installed, tmp_path, "vulkan")
    assert cpu.select(machine).runtime.name == "cpu-portable"
    # Choosing in one leaves the other as it was: nothing chosen, the runner with no runtime.
    assert vulkan.choice is None and vulkan.program() == RunnerProgram.base()
    assert vulkan.select(machine).runtime.name == "vulkan"
    assert cpu.program().argv[-2:] == ["--runtime", str(installed["cpu-portable"])]
    assert vulkan.program().argv[-2:] == ["--runtime", str(installed["vulkan"])]
    assert cpu.program() != vulkan.program()
    assert cpu.program().devices()[:-1] == cpu.program().argv
    # A selection made afterwards starts from nothing either: no choice is left behind.
    assert RuntimeSelection().choice is None
    assert RuntimeSelection().program() == RunnerProgram.base()


def test_asking_for_another_runtime_changes_the_next_build(
        installed: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runner = make_stand_in(tmp_path / "runner", monkeypatch)  # HEARTH_RUNNER: it records calls
    chosen = selection(installed, tmp_path, "cpu-portable")
    first = chosen.chosen_build(None, machine)
    assert first.program == (*runner.program, "--runtime", str(installed["cpu-portable"]))
    assert "Runtime: cpu-portable" in " ".join(wording.texts(first.notes))  # why, in the plan
    chosen.want("vulkan")  # the Settings dialog's change
    assert chosen.choice is None  # chosen again at the next load
    second = chosen.chosen_build(None, machine)
    assert second.program == (*runner.program, "--runtime", str(installed["vulkan"]))
    assert tuple(chosen.program().argv) == second.program  # lending, devices: the same
    # The runner was asked for the devices of each build in turn.
    asked = [call for call in runner.calls() if call[-1:] == ["devices"]]
    assert asked == [["--runtime", str(installed["cpu-portable"]), "devices"],
                     ["--runtime", str(installed["vulkan"]), "devices"]]


def test_a_choice_made_for_an_older_wish_is_not_kept(installed: dict[str, Path],
                                                     tmp_path: Path) -> None:
    """The user chose again while the self-test ran (off the GUI thread): that load goes on
    with what it chose, and the next one chooses for the new wish."""
    chosen: RuntimeSelection
    tested: list[str] = []

    def changing_mind(program: Any, **kw: Any) -> Any:
        tested.append(program[-1])
        if len(tested) == 1:  # during the first choice only
            chosen.want("vulkan")
        return passing(program, **kw)

    chosen = selection(installed, tmp_path, "cpu-portable", selftest=changing_mind)
    assert chosen.select(machine).runtime.name == "cpu-portable"
    assert chosen.choice is None and chosen.program() == RunnerProgram.base()
    assert chosen.select(machine).runtime.name == "vulkan"
    assert chosen.choice is not None and chosen.choice.runtime.name == "vulkan"
    assert tested == [str(installed["cpu-portable"]), str(installed["vulkan"])]


def test_the_wish_is_the_selections_else_the_environments(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HEARTH_RUNTIME", "vulkan")
    assert RuntimeSelection().wanted == "vulkan"
    assert RuntimeSelection("cpu-portable").wanted == "cpu-portable"
    assert RuntimeSelection("auto").wanted == ""
    asked = RuntimeSelection("cpu-portable")
    asked.want(None)  # back to the environment's
    assert asked.wanted == "vulkan"


# Where the runtime was a module's state, and those who start runners with it.
HOLDERS = ["app/runner_client", "app/runtimes", "app/loading/workers.py",
           "app/loading/confirm.py", "app/cli", "app/services/runner_process.py",
           "app/services/workers.py", "app/services/tuning.py"]


def _modules(where: str) -> list[Path]:
    path = ROOT / where
    return sorted(path.glob("*.py")) if path.is_dir() else [path]


@pytest.mark.parametrize("where", HOLDERS)
def test_no_global_statement(where: str) -> None:
    for path in _modules(where):
        tree = ast.parse(path.read_text("utf-8"))
        found = [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Global)]
        assert found == [], f"{path.relative_to(ROOT)}:{found} rebinds module state"


@pytest.mark.parametrize("module", [command, select])
def test_no_module_keeps_the_runtime(module: Any) -> None:
    """No module-level variable but constants and the logger: the choice cannot leak from one
    selection (or one test) into another."""
    path = Path(module.__file__)
    for node in ast.parse(path.read_text("utf-8")).body:
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, ast.AnnAssign) else []
        for target in targets:
            name = target.id if isinstance(target, ast.Name) else "?"
            assert name.isupper() or name == "log", f"{path.name}:{node.lineno} keeps {name}"
    assert not hasattr(command, "set_runtime_args") and not hasattr(command, "runner_program")
    assert not hasattr(RunnerProgram, "current")
