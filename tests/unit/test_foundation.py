"""Unit tests for the foundation's pure parts: runner command, settings, stores, stop strings."""

from __future__ import annotations

import argparse
import json
import logging

import pytest

from app.runner_client.command import build_launch
from runner.logs import JsonFormatter
from runner.settings import LoadSettings, add_load_flags, settings_from_args


def test_launch_keeps_key_out_of_argv() -> None:
    launch = build_launch("/models/m.gguf", ["--ctx-size", "8192"], base_env={"PATH": "/bin"})
    assert launch.key and len(launch.key) >= 32
    assert launch.env["HEARTH_API_KEY"] == launch.key
    assert all(launch.key not in a for a in [launch.program, *launch.args])
    assert launch.args[-2:] == ["--ctx-size", "8192"]
    i = launch.args.index("serve")
    assert launch.args[i + 1:i + 3] == ["--model", "/models/m.gguf"]
    assert launch.args[launch.args.index("--host") + 1] == "127.0.0.1"
    assert build_launch("m.gguf").key != build_launch("m.gguf").key  # fresh per start


def _parse(*argv: str) -> LoadSettings:
    p = argparse.ArgumentParser()
    add_load_flags(p)
    return settings_from_args(p.parse_args(["--model", "m.gguf", *argv]))


def test_settings_flags_named_like_llama_server() -> None:
    s = _parse("--ctx-size", "8192", "--n-gpu-layers", "12", "--batch-size", "256",
               "--ubatch-size", "1024", "--threads", "3", "--flash-attn", "on",
               "--cache-type-k", "q8_0", "--cache-type-v", "q4_0", "--no-mmap", "--mlock")
    assert (s.ctx_size, s.n_gpu_layers, s.batch_size, s.threads, s.threads_batch) == \
        (8192, 12, 256, 3, 3)
    assert s.ubatch_size == 256  # never larger than the batch
    assert (s.flash_attn, s.cache_type_k, s.cache_type_v, s.mmap, s.mlock) == \
        ("on", "q8_0", "q4_0", False, True)
    assert _parse().threads >= 1


@pytest.mark.parametrize("bad", [["--batch-size", "0"], ["--ctx-size", "-1"],
                                 ["--flash-attn", "maybe"], ["--cache-type-k", "q3"]])
def test_settings_reject_bad_values(bad: list[str]) -> None:
    with pytest.raises(SystemExit):
        _parse(*bad)


def test_json_log_lines_carry_extras() -> None:
    record = logging.LogRecord("runner", logging.ERROR, __file__, 1, "failed %s", ("x",), None)
    record.event = "load_failed"
    line = json.loads(JsonFormatter().format(record))
    assert line["msg"] == "failed x" and line["level"] == "error" and line["event"] == "load_failed"
