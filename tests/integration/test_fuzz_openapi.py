"""Property-based fuzzing of every operation in the runner's own OpenAPI document: no 5xx.

Schemathesis generates requests that fit the schema and requests that break it (wrong types,
missing fields, out-of-range numbers, odd unicode); each goes over real HTTP to a real runner.
Any 5xx, or an error that is not in OpenAI's error format, fails the test.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from schemathesis.generation.modes import GenerationMode

from tests.integration.conftest import Runner, running

EXAMPLES = 150  # per operation and mode; well under a minute in all on 2 cores


@pytest.fixture(scope="module", params=["chat", "embedding"])
def fuzz_runner(request: pytest.FixtureRequest, tiny_model: Path) -> Iterator[Runner]:
    # A small context bounds the work of any generated request (max_tokens can be huge).
    extra = ["--embedding"] if request.param == "embedding" else []
    with running("--ctx-size", "256", "--parallel", "2", *extra, model=tiny_model) as r:
        yield r


def _operations(r: Runner) -> list[Any]:
    schema = schemathesis.openapi.from_url(r.url + "/openapi.json", headers=r.headers)
    return [result.ok() for result in schema.get_all_operations()]


def test_every_operation_is_fuzzed(fuzz_runner: Runner) -> None:
    paths = {(op.method.upper(), op.path) for op in _operations(fuzz_runner)}
    assert {("POST", "/v1/chat/completions"), ("POST", "/v1/completions"),
            ("POST", "/v1/embeddings"), ("GET", "/runner/status")} <= paths


# A hang guard for hundreds of real requests: about a minute on 2 idle cores, five times that
# where other programs take most of them (the suite's default guard is 300 s).
@pytest.mark.timeout(900)
@pytest.mark.parametrize("mode", list(GenerationMode), ids=str)
def test_no_server_errors(fuzz_runner: Runner, mode: GenerationMode) -> None:
    seen: dict[str, set[int]] = {}
    for op in _operations(fuzz_runner):
        if mode is GenerationMode.NEGATIVE and op.method.upper() != "POST":
            continue  # nothing to break in a request without parameters or body

        @given(case=op.as_strategy(generation_mode=mode))
        # No shrinking: each example is a real request, and the first failure says enough.
        @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck),
                  database=None, phases=[Phase.explicit, Phase.generate])
        def check(case: Any) -> None:
            response = case.call(base_url=fuzz_runner.url, headers=fuzz_runner.headers, timeout=60)
            seen.setdefault(f"{case.method} {case.path}", set()).add(response.status_code)
            assert response.status_code < 500, (case.method, case.path, case.body,
                                                response.text[:500])
            if response.status_code >= 400:
                error = response.json()["error"]
                assert error["message"] and error["type"], response.text
            assert fuzz_runner.process.poll() is None, fuzz_runner.stderr_text()[-3000:]

        check()
    if mode is GenerationMode.POSITIVE:  # valid requests did reach the model, not only 4xx
        served = ["/v1/embeddings"] if "--embedding" in fuzz_runner.process.args else \
            ["/v1/chat/completions", "/v1/completions"]  # type: ignore[operator]
        assert all(200 in seen[f"POST {path}"] for path in served), seen
