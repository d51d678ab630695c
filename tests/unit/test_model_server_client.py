"""The window's reading of the model server's answers (app/remote/model_server.py): untrusted
JSON, rows of the wrong shape left out."""

from __future__ import annotations

from app.remote.model_server import ResidentModel, parse_resident


def test_rows_are_read_and_memory_summed_over_devices() -> None:
    rows = parse_resident({"models": [
        {"id": "a.gguf", "model": "a.gguf", "state": "loaded", "memory": {"cpu": 100,
                                                                          "cuda:0": 900},
         "requests": 2, "idle_s": 0.0, "pinned": True},
        {"id": "b.gguf (embeddings)", "model": "b.gguf", "state": "loading", "memory": {},
         "requests": 0, "idle_s": 12.5, "unload_after_s": 600}]})
    assert rows == [ResidentModel("a.gguf", "a.gguf", "loaded", 1000, 2, 0.0, True),
                    ResidentModel("b.gguf (embeddings)", "b.gguf", "loading", 0, 0, 12.5,
                                  False)]


def test_hostile_rows_never_crash_and_wrong_rows_are_left_out() -> None:
    assert parse_resident(None) == [] and parse_resident([1]) == []
    assert parse_resident({"models": "x"}) == []
    rows = parse_resident({"models": [
        1, None, {"id": 3, "model": "m", "state": "loaded"}, {"id": "x", "model": ["m"]},
        {"id": "ok", "model": "ok", "state": "loaded", "memory": {"cpu": -5, "gpu": True,
                                                                  "x": "9", "y": 7},
         "requests": -1, "idle_s": float("nan"), "pinned": "yes"},
        {"id": "n" * 10_000, "model": "n", "state": "loaded" * 100}]})
    assert rows[0] == ResidentModel("ok", "ok", "loaded", 7, 0, 0.0, False)
    assert len(rows) == 2 and len(rows[1].id) == 300 and len(rows[1].state) == 20
