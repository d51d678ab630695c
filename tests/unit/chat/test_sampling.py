"""Sampling settings: stored and read back, bad values dropped, the model file's defaults, presets,
and the names the request sends."""

from __future__ import annotations

import json
import math
import struct
from pathlib import Path
from typing import Any

import pytest

from app.chat.sampling import (
    CHAT_DEFAULTS,
    CHAT_MAX_TOKENS,
    FIELD_BY_NAME,
    FIELDS,
    PRESETS,
    ChatSettings,
    Sampling,
    fold_system,
    model_defaults,
    parse,
    preset_of,
    read_model_defaults,
)
from app.gguf.errors import GGUFError

FULL = Sampling(temperature=0.7, top_p=0.9, top_k=40, min_p=0.05, repeat_penalty=1.1,
                max_tokens=256, seed=42)


# ---- the request ---------------------------------------------------------------------------------

def test_to_params_uses_the_runners_request_names() -> None:
    # The names runner/server.py's `_Sampling` request model declares; an unknown name would be
    # accepted (extra="allow") and silently ignored, so they are spelled out here.
    assert FULL.to_params() == {"temperature": 0.7, "top_p": 0.9, "top_k": 40, "min_p": 0.05,
                                "repeat_penalty": 1.1, "max_tokens": 256, "seed": 42}


def test_unset_fields_are_left_out_or_filled_from_the_model() -> None:
    assert Sampling().to_params() == {}
    mine = Sampling(temperature=0.3, seed=7)
    model = Sampling(temperature=1.0, top_k=64, top_p=0.95)
    assert mine.to_params(model) == {"temperature": 0.3, "top_k": 64, "top_p": 0.95, "seed": 7}


# ---- stored settings -----------------------------------------------------------------------------

def test_json_round_trip() -> None:
    settings = ChatSettings("You are terse.\nAnswer in French. «ok»", FULL)
    text = settings.to_json()
    assert json.loads(text)["version"] == 1
    assert ChatSettings.from_json(text) == settings
    assert ChatSettings.from_json(json.loads(text)) == settings
    assert ChatSettings.from_json(ChatSettings().to_json()) == ChatSettings()


@pytest.mark.parametrize("stored", [None, "", "not json", "[1, 2]", "42", b"\xff\xfe", "null"])
def test_unreadable_settings_give_the_defaults(stored: Any) -> None:
    assert ChatSettings.from_json(stored) == ChatSettings()


def test_bad_values_are_dropped_and_the_rest_kept() -> None:
    stored = {"version": 99, "system_prompt": 5, "future_field": {"x": 1},
              "sampling": {"temperature": "hot", "top_p": 1.5, "top_k": 40.0, "min_p": True,
                           "repeat_penalty": float("nan"), "max_tokens": 0, "seed": 3.5,
                           "mirostat": 2}}
    got = ChatSettings.from_json(json.dumps(stored))
    assert got.system_prompt == ""
    assert got.sampling == Sampling(top_k=40)  # a whole float is a whole number


def test_a_later_versions_settings_still_open() -> None:
    stored = {"version": 2, "system_prompt": "hi", "presets": ["x"],
              "sampling": {"temperature": 0.5, "xtc_probability": 0.1}}
    assert ChatSettings.from_json(json.dumps(stored)) == ChatSettings("hi",
                                                                      Sampling(temperature=0.5))


def test_every_field_has_a_range_the_runner_accepts() -> None:
    # runner/server.py: temperature 0..5, top_p/min_p 0..1, top_k >= 0, repeat_penalty 0..10,
    # max_tokens >= 1. A wider range here would let a stored value make a request fail.
    runner = {"temperature": (0, 5), "top_p": (0, 1), "top_k": (0, 1 << 20), "min_p": (0, 1),
              "repeat_penalty": (0, 10), "max_tokens": (1, math.inf), "seed": (-math.inf, math.inf)}
    assert set(runner) == set(FIELD_BY_NAME)
    for f in FIELDS:
        low, high = runner[f.name]
        assert low <= f.minimum <= f.maximum <= high, f.name


def test_parse_typed_text() -> None:
    assert parse(FIELD_BY_NAME["temperature"], " 0.25 ") == 0.25
    assert parse(FIELD_BY_NAME["top_k"], "40") == 40
    assert parse(FIELD_BY_NAME["seed"], "") is None
    # A decimal comma, as a German person types it (the panel shows "0,7" there).
    assert parse(FIELD_BY_NAME["temperature"], "0,7") == 0.7
    with pytest.raises(ValueError, match="from"):
        parse(FIELD_BY_NAME["top_k"], "4,5")  # a whole number field takes no decimals
    with pytest.raises(ValueError, match="from"):
        parse(FIELD_BY_NAME["temperature"], "1,000.5")
    for name, text in (("top_k", "4.5"), ("top_p", "2"), ("temperature", "warm"),
                       ("max_tokens", "0"), ("temperature", "inf")):
        with pytest.raises(ValueError, match="from"):
            parse(FIELD_BY_NAME[name], text)


# ---- the model file's defaults -------------------------------------------------------------------

def test_model_defaults_from_metadata() -> None:
    f32 = struct.unpack("<f", struct.pack("<f", 0.95))[0]  # as a GGUF float32 arrives
    meta = {"general.sampling.temp": 0.6, "general.sampling.top_p": f32,
            "general.sampling.top_k": 20, "general.sampling.min_p": 0.0,
            "general.sampling.penalty_repeat": 1.05, "general.sampling.sequence": "edskypmxt",
            "general.architecture": "qwen3"}
    assert model_defaults(meta) == Sampling(temperature=0.6, top_p=0.95, top_k=20, min_p=0.0,
                                            repeat_penalty=1.05, max_tokens=CHAT_MAX_TOKENS)


def test_a_chat_reply_ends_by_default_and_the_person_can_choose_longer() -> None:
    """Issue 25, 9: "no limit" with a 32k context let a base model ramble until Stop."""
    assert Sampling().to_params(model_defaults({}))["max_tokens"] == CHAT_MAX_TOKENS
    assert Sampling(max_tokens=8000).to_params(model_defaults({}))["max_tokens"] == 8000


def test_model_defaults_ignore_wrong_types_and_ranges() -> None:
    meta = {"general.sampling.temp": "0.7", "general.sampling.top_p": 7.0,
            "general.sampling.top_k": 2.5, "general.sampling.min_p": [0.1],
            "general.sampling.penalty_repeat": True, "general.sampling.temperature": 0.3}
    assert model_defaults(meta) == CHAT_DEFAULTS
    assert model_defaults({}) == CHAT_DEFAULTS
    # One bad key does not cost the good ones.
    assert model_defaults({"general.sampling.temp": float("inf"),
                           "general.sampling.top_k": 64}) == Sampling(top_k=64).over(CHAT_DEFAULTS)


def test_read_model_defaults_from_a_file(tmp_path: Path) -> None:
    gguf = pytest.importorskip("gguf")  # the writer the test models use (a runner dependency)
    path = tmp_path / "m.gguf"
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_float32("general.sampling.temp", 0.6)
    w.add_int32("general.sampling.top_k", 20)
    w.add_string("general.sampling.top_p", "high")  # wrong type: ignored
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    assert read_model_defaults(path) == Sampling(temperature=0.6, top_k=20,
                                                 max_tokens=CHAT_MAX_TOKENS)
    with pytest.raises(GGUFError):
        read_model_defaults(tmp_path / "missing.gguf")


# ---- presets -------------------------------------------------------------------------------------

def test_presets() -> None:
    names = [p.name for p in PRESETS]
    assert names[0] == "Model default" and {"Precise", "Balanced", "Creative"} <= set(names)
    by_name = {p.name: p for p in PRESETS}
    temps = [by_name[n].sampling.temperature or 0.0 for n in ("Precise", "Balanced", "Creative")]
    assert 0 < temps[0] < temps[1] < temps[2]
    for p in PRESETS:  # every preset is a request the runner accepts
        assert Sampling.from_dict(p.sampling.to_dict()) == p.sampling


def test_a_preset_keeps_max_tokens_and_seed() -> None:
    creative = next(p for p in PRESETS if p.name == "Creative")
    got = creative.apply(FULL)
    assert got.max_tokens == 256 and got.seed == 42
    assert got.temperature == creative.sampling.temperature
    assert preset_of(got) is creative
    assert preset_of(FULL) is None  # custom
    assert preset_of(Sampling(seed=1)) is PRESETS[0]  # model default style, own seed
    assert PRESETS[0].apply(FULL) == Sampling(max_tokens=256, seed=42)


# ---- system prompts on templates without a system role -------------------------------------------

def test_fold_system_moves_it_into_the_first_user_message() -> None:
    msgs = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": "Hello"}, {"role": "user", "content": "Bye"}]
    assert fold_system(msgs) == [{"role": "user", "content": "Be brief.\n\nHi"},
                                 {"role": "assistant", "content": "Hello"},
                                 {"role": "user", "content": "Bye"}]
    assert msgs[1]["content"] == "Hi"  # the caller's list is not changed
    assert fold_system(msgs[1:]) == msgs[1:]
    assert fold_system([{"role": "system", "content": "x"}]) == [{"role": "user", "content": "x"}]
