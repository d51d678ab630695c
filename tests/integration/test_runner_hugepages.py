"""A served runner restarts itself with huge pages for its big buffers (runner/hugepages.py): the
same process, pipes and answers, with glibc's tunable in its environment."""

from __future__ import annotations

import json
import os
from pathlib import Path

import httpx2
import pytest

from runner.hugepages import restart_command
from tests.integration.conftest import Runner, StartRunner

pytestmark = pytest.mark.skipif(
    restart_command({k: v for k, v in os.environ.items()
                     if k not in ("GLIBC_TUNABLES", "HEARTH_NO_HUGEPAGES")}) is None,
    reason="no huge pages for malloc here (not Linux with glibc 2.35+ and THP)")


def _huge_pages(r: Runner) -> bool:
    """What the runner logged about huge pages (it reads its own environment: /proc's copy of
    it may show the one it started with)."""
    (event,) = [json.loads(line) for line in r.stderr_lines if '"huge_pages"' in line]
    return bool(event["on"])


def test_the_served_runner_is_the_same_process_with_huge_pages(start_runner: StartRunner,
                                                                tiny_model: Path) -> None:
    r = start_runner(model=tiny_model, env={"GLIBC_TUNABLES": "glibc.malloc.arena_max=4"})
    pid = r.pid
    assert _huge_pages(r)
    with r.client() as http:
        assert http.get("/health").json()["status"] == "ok"
        reply = http.post("/v1/chat/completions", json={
            "messages": [{"role": "user", "content": "hi"}], "max_tokens": 2})
        assert reply.status_code == 200, reply.text
    assert r.pid == pid and r.process.poll() is None  # the same process, still serving
    assert len([line for line in r.stdout_lines if '"listening"' in line]) == 1


def test_turned_off_it_stays_as_started(start_runner: StartRunner, tiny_model: Path) -> None:
    r = start_runner(model=tiny_model, env={"HEARTH_NO_HUGEPAGES": "1"})
    assert not _huge_pages(r)
    assert httpx2.get(r.url + "/health", headers=r.headers, trust_env=False,
                      timeout=30).status_code == 200
