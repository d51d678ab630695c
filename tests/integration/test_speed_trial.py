"""The speed settings trial through the real runner (``--tune-speed``): once the model is ready
and idle it measures each candidate in a context of its own, reports the figures and the choice
in /runner/status, sets its work aside when a request arrives and finishes later, and never
changes what the serving context writes."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from runner.speed_trial import Candidate, Figures, choose
from runner.wire.exits import ExitCode
from tests.fixtures.models import TINY, model_path
from tests.fixtures.speculative import BENCH_TARGET
from tests.integration.conftest import Runner, running, spawn_runner

ASK = [{"role": "user", "content": "hello world the model"}]
WAIT_S = 120.0  # a hang guard only


def chat(r: Runner) -> str:
    body = {"messages": ASK, "max_tokens": 24, "temperature": 0, "ignore_eos": True,
            "cache_prompt": False}
    with r.client() as http:
        resp = http.post("/v1/chat/completions", json=body)
    assert resp.status_code == 200, resp.text
    return str(resp.json()["choices"][0]["message"]["content"])


def trial(r: Runner) -> dict[str, Any]:
    with r.client() as http:
        found = http.get("/runner/status").json()["speed_trial"]
    assert isinstance(found, dict)
    return found


def until(r: Runner, state: str) -> dict[str, Any]:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        found = trial(r)
        if found["state"] == state or found["state"] == "done":
            return found
        time.sleep(0.05)
    raise AssertionError(f"the trial never reached {state}: {trial(r)}")


@pytest.fixture(scope="module")
def plain() -> Iterator[Runner]:
    with running("--ubatch-size", "64", "--batch-size", "256", model=model_path(TINY)) as r:
        yield r


def test_the_trial_measures_every_candidate_and_chooses_among_them(plain: Runner) -> None:
    # A budget far beyond what the tiny model needs: however busy the machine, the trial sizes
    # its prompts long enough for every micro-batch.
    with running("--ubatch-size", "64", "--batch-size", "256", "--flash-attn", "on",
                 "--tune-budget", "60", "--tune-speed", "fa=off;ub=128,256",
                 model=model_path(TINY)) as r:
        done = until(r, "done")
        assert done["state"] == "done" and done["why"] is None, done
        measured = {(m["flash_attn"], m["n_ubatch"]): m for m in done["measured"]}
        assert set(measured) == {("on", 64), ("off", 64), ("on", 128), ("on", 256)}
        assert all(m["prompt_tokens_per_s"] > 0 and m["gen_tokens_per_s"] > 0
                   for m in measured.values())
        assert done["base"] == {"flash_attn": "on", "cache_type": "f16", "n_ubatch": 64}
        # The choice follows the figures it reports (attention by a turn's time, the
        # micro-batch by prompt speed, each only past the minimum gain).
        figures = {Candidate(m["flash_attn"], m["cache_type"], m["n_ubatch"]):
                   Figures(m["prompt_tokens_per_s"], m["gen_tokens_per_s"])
                   for m in done["measured"]}
        want = choose(Candidate("on", "f16", 64), figures)
        chosen = done["chosen"]
        assert Candidate(chosen["flash_attn"], chosen["cache_type"], chosen["n_ubatch"]) == \
            want.chosen
        assert done["gain"] == pytest.approx(want.gain, rel=0.01) and done["gain"] >= 1.0
        assert chosen["n_batch"] == max(256, chosen["n_ubatch"])
        assert 0 < done["seconds"] and done["prompt_tokens"] >= 256
        # The serving context is the plan's, and writes what a runner without the trial does.
        with r.client() as http:
            settings = http.get("/runner/status").json()["settings"]
        assert (settings["flash_attn"], settings["ubatch_size"]) == ("on", 64)
        assert chat(r) == chat(plain)


def test_a_request_sets_the_trial_aside_and_it_finishes_afterwards() -> None:
    # A model slow enough, and a budget long enough, that the trial is still measuring when
    # the request comes (it sizes its prompts to fill the budget).
    with running("--ubatch-size", "64", "--batch-size", "256", "--tune-budget", "8",
                 "--tune-speed", "fa=off;ub=128", model=model_path(BENCH_TARGET)) as r:
        seen = until(r, "measuring")
        assert seen["state"] == "measuring", "the trial ended before a request could come"
        during = chat(r)
        aside = trial(r)
        assert aside["set_aside"] >= 1, aside
        done = until(r, "done")
        assert done["chosen"] is not None and done["budget_s"] == 8, done
        assert chat(r) == during  # the trial never touched the serving context


def test_a_spec_the_runner_does_not_take_is_a_bad_argument() -> None:
    r = spawn_runner("--tune-speed", "fa=sometimes", model=model_path(TINY))
    assert r.wait_exit() == ExitCode.BAD_ARGS
    assert "sometimes" in r.stderr_text()


def test_embedding_runners_measure_nothing() -> None:
    with running("--embedding", "--tune-speed", "fa=off", model=model_path(TINY)) as r:
        with r.client() as http:
            assert http.get("/runner/status").json()["speed_trial"] is None
