"""The pure helpers of the model server's benchmark (tests/bench/server.py)."""

from __future__ import annotations

import json

from tests.bench.server import (
    budget_mib,
    chunk_content,
    cold_target_s,
    smaps_committed,
    smaps_memory,
    within,
)

SMAPS = """\
55d0c0000000-55d0c0021000 r--p 00000000 fe:01 123 /usr/bin/python3.11
Size:                132 kB
Rss:                 128 kB
Anonymous:             0 kB
7f0000000000-7f0005d33000 r--p 00000000 fe:01 456 /tmp/home/models/bench a.gguf
Size:              95436 kB
Rss:               95436 kB
Pss:               95436 kB
Anonymous:             0 kB
7f0010000000-7f0014000000 rw-p 00000000 00:00 0
Size:              65536 kB
Rss:               65536 kB
Anonymous:         65536 kB
7f0020000000-7f0020100000 rw-p 00000000 00:00 0 [heap]
Size:               1024 kB
Rss:                 512 kB
Anonymous:           512 kB
7f0030000000-7f0030001000 rw-p 00001000 fe:01 456 /tmp/home/models/bench a.gguf
Rss:                   4 kB
Anonymous:             4 kB
"""


def test_smaps_memory_sums_the_model_files_pages_and_all_anonymous_memory() -> None:
    file_rss, anon = smaps_memory(SMAPS, "/tmp/home/models/bench a.gguf")
    assert file_rss == (95436 + 4) * 1024  # a path with a space, two mappings
    assert anon == (65536 + 512 + 4) * 1024
    assert smaps_memory(SMAPS, "/tmp/home/models/other.gguf")[0] == 0


def test_smaps_committed_sums_the_files_mappings_and_private_writable_ones() -> None:
    file_size, anon_size = smaps_committed(SMAPS, "/tmp/home/models/bench a.gguf")
    assert file_size == 95436 * 1024  # the second mapping gives no Size line
    assert anon_size == (65536 + 1024) * 1024  # the buffer and [heap], not python's text
    assert smaps_committed(SMAPS, "/tmp/home/models/other.gguf") == (0, (65536 + 1024) * 1024)


def test_chunk_content_is_the_deltas_text_only() -> None:
    role = {"choices": [{"index": 0, "delta": {"role": "assistant"}}]}
    text = {"choices": [{"index": 0, "delta": {"content": " the"}}]}
    usage = {"choices": [], "usage": {"completion_tokens": 4}}
    assert chunk_content(json.dumps(role)) == ""
    assert chunk_content(json.dumps(text)) == " the"
    assert chunk_content(json.dumps(usage)) == ""
    assert chunk_content("[DONE]") == ""
    assert chunk_content("not json") == ""


def test_targets_and_budget() -> None:
    assert abs(cold_target_s(2.0) - 2.25) < 1e-9  # 1.1x + 50 ms
    need = 225 * 2**20
    assert 2 * need <= budget_mib(need) * 2**20 < 3 * need
    assert within(102.9, 100) and within(97.1, 100) and not within(103.1, 100)
    assert not within(1, 0)
