"""The model server's pure parts: who makes room, its settings, names, the runner's "too long"
sentence (no server, no runner)."""

from __future__ import annotations

import math
from pathlib import Path

from runner.engine import ContextLengthExceeded
from server.catalog import Catalog
from server.config import ServerConfig, parse_config
from server.planning import context_needed
from server.residency import Busy, Resident, Room, make_room

MiB = 2**20


def _r(name: str, mib: int, busy: int = 0, used: float = 0.0, device: str = "cpu") -> Resident:
    return Resident(name, {device: mib * MiB}, busy, used)


def test_room_is_made_least_recently_used_first_and_only_as_much_as_needed() -> None:
    residents = [_r("a", 4, used=3), _r("b", 4, used=1), _r("c", 4, used=2)]
    assert make_room({"cpu": 4 * MiB}, {"cpu": 16 * MiB}, residents) == Room(())
    assert make_room({"cpu": 6 * MiB}, {"cpu": 16 * MiB}, residents) == Room(("b",))
    assert make_room({"cpu": 10 * MiB}, {"cpu": 16 * MiB}, residents) == Room(("b", "c"))


def test_a_busy_model_is_never_evicted_and_idle_ones_elsewhere_stay() -> None:
    residents = [_r("busy", 8, busy=1, used=0), _r("idle", 4, used=5),
                 _r("gpu", 20, used=0, device="cuda:0")]
    assert make_room({"cpu": 8 * MiB}, {"cpu": 16 * MiB, "cuda:0": 24 * MiB},
                     residents) == Room(("idle",))  # the GPU model holds nothing in the way
    assert make_room({"cpu": 12 * MiB}, {"cpu": 16 * MiB}, residents) == Busy(("busy",))


def test_the_runners_too_long_sentence_gives_its_number() -> None:
    assert context_needed(str(ContextLengthExceeded(6022, 1024))) == 6022
    assert context_needed(str(ContextLengthExceeded(750, 1024, at_least=True))) == 750
    assert context_needed("Some other refusal.") is None


def test_server_json_is_read_leniently() -> None:
    config = parse_config({"idle_minutes": 2, "models": {"a.gguf": {"idle_minutes": -1},
                                                         "b.gguf": {"idle_minutes": "x"}},
                           "aliases": {"claude-*": "b.gguf", "gpt-4o": "a.gguf", "bad": 3},
                           "memory_budget_mib": 64})
    assert config.idle_for("a.gguf") == math.inf and config.idle_for("b.gguf") == 120
    assert config.memory_budget == 64 * MiB
    assert config.alias("claude-sonnet-4-5") == "b.gguf" and config.alias("gpt-4o") == "a.gguf"
    assert config.alias("bad") is None and config.alias("gpt-4o-mini") is None
    assert parse_config([1, 2]) == ServerConfig()
    assert parse_config({"memory_budget_mib": -5, "idle_minutes": True}) == ServerConfig()


def test_names_resolve_by_id_file_name_tag_and_alias(tmp_path: Path) -> None:
    from app.library.scan import ModelSource, SourceKind
    from tests.fixtures.models import TINY, model_path

    models = tmp_path / "models"
    models.mkdir()
    (models / "Qwen-7B.Q4_K_M.gguf").write_bytes(model_path(TINY).read_bytes())
    config = ServerConfig(aliases={"claude-*": "Qwen-7B.Q4_K_M.gguf"})
    catalog = Catalog(lambda: config, lambda: [ModelSource.of(SourceKind.HEARTH, models,
                                                                 own=True)])
    for name in ("Qwen-7B.Q4_K_M.gguf", "Qwen-7B.Q4_K_M", "Qwen-7B.Q4_K_M:latest",
                 "claude-opus-4"):
        entry = catalog.resolve(name)
        assert entry is not None and entry.id == "Qwen-7B.Q4_K_M.gguf", name
    assert entry.architecture == "llama" and entry.context == TINY.n_ctx_train
    for name in ("qwen", "../models/Qwen-7B.Q4_K_M.gguf", str(models / "Qwen-7B.Q4_K_M.gguf")):
        assert catalog.resolve(name) is None, name


def test_what_a_runner_measured_replaces_the_prediction_by_device() -> None:
    from app.gguf import read_model
    from app.planner.plan import plan
    from app.planner.types import Wishes
    from server.planning import measured_held
    from tests.fixtures.hardware.make_reports import load_report
    from tests.fixtures.models import TINY, model_path

    report = load_report("cpu_only_16gb")
    launch = plan(read_model(str(model_path(TINY))), report, Wishes())
    memory = [{"device": "CPU", "weights": 100, "kv": 20, "compute": 3, "output": 4},
              {"device": "CUDA7", "weights": 9}, {"device": "CPU", "kv": -1, "weights": True},
              "junk", {"device": ["CPU"]}]
    assert measured_held(launch, memory) == {"cpu": 127}
    assert measured_held(launch, None) == {} and measured_held(launch, {"CPU": 1}) == {}


def test_a_draft_model_s_memory_counts_in_what_a_model_holds() -> None:
    """A runner the window loaded with a draft (the server adopts it): its residency counts the
    draft's buffers too, which the runner reports apart from the model's (runner/memory.py)."""
    from runner.memory import with_draft
    from server.planning import held_by_device

    model = [{"device": "CUDA0", "weights": 100, "kv": 20, "compute": 5, "output": 1},
             {"device": "CPU", "weights": 10, "kv": 0, "compute": 2, "output": 0}]
    draft = [{"device": "CUDA0", "weights": 30, "kv": 4, "compute": 3, "output": 0}]
    memory = with_draft(model, draft)
    assert [r["device"] for r in memory] == ["CUDA0", "CPU"]
    assert memory[0]["draft"] == 37 and memory[1]["draft"] == 0
    assert memory[0]["kv"] == 20  # the model's own figures are untouched
    assert held_by_device(memory) == {"CUDA0": 163, "cpu": 12}
    assert held_by_device(model) == {"CUDA0": 126, "cpu": 12}
