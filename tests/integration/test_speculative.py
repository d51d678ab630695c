"""Speculative decoding through the real runner: a draft model or prompt lookup changes how
fast the text comes, never the text (llama-server's rule: the target samples at every drafted
position), for one stream and several; /runner/status counts what was drafted and kept; a draft
that cannot draft for the model is refused with a message that says why."""

from __future__ import annotations

import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any

import pytest

from runner.wire.exits import ExitCode
from tests.fixtures.models import model_path
from tests.fixtures.speculative import DRAFT, STRANGER, TARGET
from tests.integration.conftest import Runner, running, spawn_runner

ASK = [{"role": "user", "content": "hello world the model"}]
KINDS = {
    "draft": lambda: ("--spec-draft-model", str(model_path(DRAFT)), "--spec-draft-n-max", "4"),
    "stranger": lambda: ("--spec-draft-model", str(model_path(STRANGER))),
    "lookup": lambda: ("--spec-type", "ngram-simple", "--spec-ngram-simple-size-n", "3"),
}


@pytest.fixture(scope="module")
def plain() -> Iterator[Runner]:
    with running("--parallel", "2", model=model_path(TARGET)) as r:
        yield r


@pytest.fixture(scope="module", params=sorted(KINDS))
def spec(request: pytest.FixtureRequest) -> Iterator[Runner]:
    with running("--parallel", "2", *KINDS[request.param](), model=model_path(TARGET)) as r:
        r.kind = request.param  # type: ignore[attr-defined]
        yield r


def chat(r: Runner, **extra: Any) -> str:
    body = {"messages": ASK, "max_tokens": 48, "ignore_eos": True, "cache_prompt": False, **extra}
    with r.client() as http:
        resp = http.post("/v1/chat/completions", json=body)
    assert resp.status_code == 200, resp.text
    return str(resp.json()["choices"][0]["message"]["content"])


def streamed(r: Runner, **extra: Any) -> str:
    body = {"messages": ASK, "max_tokens": 48, "ignore_eos": True, "stream": True, **extra}
    text = ""
    with r.client() as http, http.stream("POST", "/v1/chat/completions", json=body) as resp:
        for line in resp.iter_lines():
            if line.startswith("data: {"):
                for choice in json.loads(line[6:])["choices"]:
                    text += choice["delta"].get("content") or ""
    return text


@pytest.mark.parametrize("sampling", [{"temperature": 0}, {"temperature": 0.8, "seed": 11},
                                      {"temperature": 1.2, "seed": 3, "top_k": 0}])
def test_the_text_is_the_targets_own(plain: Runner, spec: Runner, sampling: dict[str, Any]
                                     ) -> None:
    want = chat(plain, **sampling)
    assert chat(spec, **sampling) == want
    assert streamed(spec, **sampling) == want


def test_several_streams_at_once_keep_their_texts(plain: Runner, spec: Runner) -> None:
    seeds = [21, 22]
    want = [chat(plain, temperature=0.8, seed=s) for s in seeds]
    with ThreadPoolExecutor(2) as pool:
        got = list(pool.map(lambda s: chat(spec, temperature=0.8, seed=s), seeds))
    assert got == want


def test_a_stop_string_and_max_tokens_end_where_they_would(plain: Runner, spec: Runner) -> None:
    text = chat(plain, temperature=0)
    stop = text.split()[5]
    for extra in ({"stop": [stop]}, {"max_tokens": 7}):
        assert chat(spec, temperature=0, **extra) == chat(plain, temperature=0, **extra)


def test_status_counts_what_was_drafted_and_kept(spec: Runner) -> None:
    chat(spec, temperature=0)
    with spec.client() as http:
        counts = http.get("/runner/status").json()["speculative"]
    kind = spec.kind  # type: ignore[attr-defined]
    assert counts["type"] == ("ngram-simple" if kind == "lookup" else "draft-simple")
    assert counts["steps"] > 0 and counts["drafted"] >= counts["accepted"] >= 0
    if kind == "draft":  # the draft computes what the target does
        assert counts["acceptance"] > 0.5 and counts["tokens_per_step"] > 2
    if kind == "stranger":  # another seed: it rarely agrees
        assert counts["acceptance"] < 0.3


def test_a_runner_without_speculation_says_so(plain: Runner) -> None:
    with plain.client() as http:
        assert http.get("/runner/status").json()["speculative"] is None


def test_a_draft_with_another_vocabulary_is_refused() -> None:
    other = model_path(replace(DRAFT, n_vocab=1024, name="hearth-spec-other-vocab"))
    r = spawn_runner("--spec-draft-model", str(other), model=model_path(TARGET))
    code = r.wait_exit()
    assert code == ExitCode.LOAD_FAILED, (code, r.stderr_text())
    assert "cannot draft for" in r.stderr_text() and "1024 tokens" in r.stderr_text()


def test_drafting_without_a_draft_model_is_a_bad_argument() -> None:
    r = spawn_runner("--spec-type", "draft-simple", model=model_path(TARGET))
    assert r.wait_exit() == ExitCode.BAD_ARGS
    assert "--spec-draft-model" in r.stderr_text()


def test_the_load_measures_whether_speculation_pays_and_acts_on_it(plain: Runner) -> None:
    # Which way it goes is the machine's to say (a stranger draft on a tiny model nearly always
    # loses); that the verdict follows the figures, and speculation the verdict, is the runner's.
    with running("--spec-draft-model", str(model_path(STRANGER)), "--spec-measure",
                 model=model_path(TARGET)) as r:
        with r.client() as http:
            status = http.get("/runner/status").json()
        spec, last = status["speculative"], status["last_request"]
        trial = spec["measured"]
        assert trial["replies"] >= 1 and trial["plain_tokens_per_s"] > 0
        assert trial["spec_tokens_per_s"] > 0 and trial["min_gain"] == 1.1
        assert trial["kept"] == (trial["gain"] >= trial["min_gain"]) == spec["active"]
        # The trial's own replies are not the person's: nothing counted yet.
        assert status["requests"]["total"] == 0 and last["completion_tokens"] == 0
        assert spec["steps"] == 0
        assert chat(r, temperature=0.8, seed=11) == chat(plain, temperature=0.8, seed=11)
        with r.client() as http:
            steps = http.get("/runner/status").json()["speculative"]["steps"]
        assert (steps > 0) == trial["kept"]


def test_a_draft_chosen_for_measuring_that_cannot_draft_is_set_aside(plain: Runner) -> None:
    # --spec-measure is the app's pick: the model still serves, and the status says why not.
    other = model_path(replace(DRAFT, n_vocab=1024, name="hearth-spec-other-vocab"))
    with running("--spec-draft-model", str(other), "--spec-measure",
                 model=model_path(TARGET)) as r:
        with r.client() as http:
            spec = http.get("/runner/status").json()["speculative"]
        assert spec["active"] is False and "1024 tokens" in spec["measured"]["refused"]
        assert spec["measured"]["kept"] is False
        assert chat(r, temperature=0) == chat(plain, temperature=0)


def test_a_request_with_an_image_is_not_speculated() -> None:
    # As llama-server: the image's positions are not tokens a draft could continue from. The
    # same text request on the same runner does speculate (prompt lookup needs no draft model).
    import base64

    from tests.fixtures.vision import png_bytes, vision_pair

    model, projector = vision_pair()
    image = "data:image/png;base64," + base64.b64encode(png_bytes(32, 32, 1)).decode()
    with running("--mmproj", str(projector), "--ctx-size", "512", "--spec-type", "ngram-simple",
                 "--spec-ngram-simple-size-n", "1", model=model) as r:
        def steps_after(content: Any) -> int:
            body = {"messages": [{"role": "user", "content": content}], "max_tokens": 48,
                    "ignore_eos": True, "temperature": 0}
            with r.client() as http:
                assert http.post("/v1/chat/completions", json=body).status_code == 200
                return int(http.get("/runner/status").json()["speculative"]["steps"])

        before = steps_after("what is this")
        assert before > 0  # a 1-gram lookup finds a repeat in 48 greedy tokens
        after = steps_after([{"type": "text", "text": "what is this"},
                             {"type": "image_url", "image_url": {"url": image}}])
        assert after == before


def test_the_status_measures_the_draft_s_memory_apart(spec: Runner) -> None:
    with spec.client() as http:
        memory = http.get("/runner/status").json()["memory"]
    cpu = next(row for row in memory if row["device"] == "CPU")
    if spec.kind == "lookup":  # type: ignore[attr-defined]
        assert not cpu.get("draft")
    else:  # what the draft's load allocated, beside the model's own figures
        assert cpu["draft"] > 0 and cpu["weights"] > 0
