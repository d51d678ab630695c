"""The runtime is a value the composition hands on: the loader plans and starts with the
program of its RuntimeSelection, and switching the runtime there (Settings → Runtime) changes
the program the next load starts, while another selection keeps its own."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from app.planner.corrections import CorrectionStore
from app.runner_client.build import BuildCache
from app.runtimes.select import RuntimeSelection
from app.runtimes.selftest import SelftestCache
from app.services.loader import ModelLoader
from app.services.runner_process import RunnerState
from app.services.tasks import TaskRunner
from tests.gui.fakes import FakeRunner
from tests.unit.loading.stand_in import make_stand_in
from tests.unit.planner.conftest import load_report
from tests.unit.runtimes.fakes import install_runtimes, passing


class ProgramRunner(FakeRunner):
    """Records the program each load starts; never really starts."""

    def __init__(self) -> None:
        super().__init__()
        self.programs: list[tuple[str, ...]] = []
        self.last_exit = None

    def start(self, model: str, flags: list[str] | None = None, program: Any = None) -> None:
        self.programs.append(tuple(program or ()))
        self.become(RunnerState.STARTING)


def test_switching_the_runtime_changes_the_program_the_next_load_starts(
        qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tiny_model: str) -> None:
    stand_in = make_stand_in(tmp_path / "runner", monkeypatch)  # HEARTH_RUNNER
    installed = install_runtimes(tmp_path / "runtimes")

    def selection(wanted: str) -> RuntimeSelection:
        return RuntimeSelection(wanted, folders=[tmp_path / "runtimes"], selftest=passing,
                                selftests=SelftestCache(tmp_path / "selftests.json"),
                                builds=BuildCache(tmp_path / "builds.json"))

    mine, other = selection("cpu-portable"), selection("vulkan")
    runner = ProgramRunner()
    machine = load_report("cpu_only_16gb")
    loader = ModelLoader(runner, TaskRunner(name="runtime-test"),  # type: ignore[arg-type]
                         cached_hardware=lambda: machine,
                         store=CorrectionStore(tmp_path / "c.json"), probe=None, runtime=mine)

    def load() -> tuple[str, ...]:
        starts = len(runner.programs)
        assert loader.load(tiny_model)
        qtbot.waitUntil(lambda: len(runner.programs) > starts, timeout=30_000)
        return runner.programs[-1]

    cpu = ("--runtime", str(installed["cpu-portable"]))
    vulkan = ("--runtime", str(installed["vulkan"]))
    assert load() == (*stand_in.program, *cpu)
    assert other.choice is None  # the other selection chose nothing meanwhile
    runner.become(RunnerState.STOPPED)
    loader.cancel()
    mine.want("vulkan")  # what the Settings dialog's change does
    assert load() == (*stand_in.program, *vulkan)
    assert loader.build is not None and loader.build.program == runner.programs[-1]
    assert other.choice is None and other.program().argv == stand_in.program
