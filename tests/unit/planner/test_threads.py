"""The plan's thread count on a busy machine: where it starts, what it says, what it remembers.
A real (tiny) GGUF file and a recorded 4-core laptop; the status dictionaries are the shape the
runner's /runner/status reports (tests/integration/test_threads.py checks the runner's side)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app.jobs import CancelToken
from app.loading.flags import plan_args
from app.loading.prepare import CpuSense, prepare_load, thread_shape
from app.planner import Pins, Wishes
from app.planner.threads import CpuNow, ThreadMemory, starting_threads
from app.runner_client.build import runner_build_from_json
from tests.fixtures.models import TINY, model_path
from tests.unit.loading.conftest import load_report
from tests.unit.loading.stand_in import recorded_devices

BUILD = runner_build_from_json(["/opt/hearth/hearth-runner"], recorded_devices("cpu_only_build"))
LAPTOP = load_report("cpu_only_16gb")  # 4 physical cores

# /runner/status "threads" after a load with one core busy (its fields; figures from this
# project's 2-core CI kind with the bench model).
STATUS = {"threads": 3, "max": 4, "adaptive": True, "others_busy_cores": 1.02,
          "measured_busy_cores": 0.97, "trials": 1, "last_trial": "model loaded", "width": 1,
          "tokens_per_second": {"4": 71.0, "3": 185.0, "2": 150.0, "1": 90.0}}


def _prepare(tmp_path: Path, busy: float | None, memory: ThreadMemory | None = None,
             wishes: Wishes | None = None) -> Any:
    return prepare_load(str(model_path(TINY)), cached=LAPTOP, detect=lambda: LAPTOP,
                        wishes=wishes or Wishes(), store=None, build=BUILD, probe=None,
                        token=CancelToken(), cpu=CpuSense(lambda: busy, memory))


def test_an_idle_machine_starts_with_one_thread_per_core_and_lets_the_runner_measure(
        tmp_path: Path) -> None:
    plan = _prepare(tmp_path, 0.2).plan  # a background blip is not a program
    assert (plan.settings.n_threads, plan.settings.max_threads) == (4, 4)
    args = plan_args(plan)
    assert args[args.index("--threads") + 1] == "4"
    assert args[args.index("--max-threads") + 1] == "4"
    assert "--adapt-threads" in args
    text = " ".join(plan.reason_texts())
    assert "4 threads: one per physical performance core" in text
    assert "measures at load which count up to 4 is fastest" in text


def test_a_busy_core_starts_with_the_free_ones_and_says_why(tmp_path: Path) -> None:
    plan = _prepare(tmp_path, 1.1).plan
    assert (plan.settings.n_threads, plan.settings.n_threads_batch) == (3, 3)
    assert plan.settings.max_threads == 4
    text = " ".join(plan.reason_texts())
    assert "3 threads of 4 to start: other programs keep about 1.1 cores busy now" in text


def test_threads_the_user_fixed_are_not_measured(tmp_path: Path) -> None:
    plan = _prepare(tmp_path, 1.0, wishes=Wishes(pins=Pins(n_threads=4))).plan
    assert (plan.settings.n_threads, plan.settings.max_threads) == (4, 0)
    assert "--adapt-threads" not in plan_args(plan)


def test_the_next_load_of_the_same_shape_starts_where_the_last_one_measured(
        tmp_path: Path) -> None:
    memory = ThreadMemory(tmp_path / "t.json")
    first = _prepare(tmp_path, 1.0, memory).plan
    assert memory.record(thread_shape(first), STATUS) is not None
    again = _prepare(tmp_path, 0.9, memory).plan
    assert again.settings.n_threads == 3
    text = " ".join(again.reason_texts())
    assert "the last load of this model with about 1 core busy measured" in text
    assert "185 with 3" in text
    # Another load on the cores: the remembered figures do not apply.
    idle = _prepare(tmp_path, 0.0, memory).plan
    assert idle.settings.n_threads == 4


def test_a_status_without_a_trial_teaches_nothing(tmp_path: Path) -> None:
    memory = ThreadMemory(tmp_path / "t.json")
    assert memory.record("shape", {"threads": 2, "tokens_per_second": {}}) is None
    assert memory.record("shape", {"threads": "x", "tokens_per_second": {"1": 3}}) is None
    assert not (tmp_path / "t.json").exists()


def test_an_unreadable_store_starts_afresh(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_text("{not json")
    memory = ThreadMemory(path)
    assert memory.lookup("shape", 1.0) is None
    assert memory.record("shape", STATUS) is not None
    assert memory.lookup("shape", 1.0) is not None


def test_starting_threads_clamps_to_the_machine() -> None:
    assert starting_threads(2, CpuNow(busy=5.0))[0] == 1
    assert starting_threads(8, None)[0] == 8
    assert starting_threads(2, CpuNow(busy=None))[1]["busy"] is None
