"""A conversation's sampling settings, sent the way the app sends them (``RunnerClient.stream_chat``
with ``Sampling.to_params()``), take effect in the real runner; and a system prompt on a template
that has no system role."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from app.chat.sampling import RUNNER_DEFAULTS, Sampling, fold_system
from app.runner_client.client import RunnerApiError, RunnerClient
from tests.fixtures.models import ModelSpec, model_path
from tests.integration.conftest import Runner, StartRunner

# Gemma 2's own chat template (abridged only in whitespace): it has no system role and says so.
GEMMA2_TEMPLATE = (
    "{{ bos_token }}{% if messages[0]['role'] == 'system' %}"
    "{{ raise_exception('System role not supported') }}{% endif %}"
    "{% for message in messages %}"
    "{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}"
    "{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}"
    "{% endif %}{% if (message['role'] == 'assistant') %}{% set role = 'model' %}"
    "{% else %}{% set role = message['role'] %}{% endif %}"
    "{{ '<start_of_turn>' + role + '\\n' + message['content'] | trim + '<end_of_turn>\\n' }}"
    "{% endfor %}{% if add_generation_prompt %}{{'<start_of_turn>model\\n'}}{% endif %}"
)
NO_SYSTEM_ROLE = ModelSpec(chat_template=GEMMA2_TEMPLATE,
                           markers=("<start_of_turn>", "<end_of_turn>"),
                           name="hearth-test-no-system-role")
N = 24  # tokens per reply: enough that two different samplings almost surely differ


@pytest.fixture
def client(runner: Runner) -> Iterator[RunnerClient]:
    with RunnerClient(runner.url, runner.key, timeout=60) as c:
        yield c


def reply(client: RunnerClient, sampling: Sampling, **extra: Any) -> tuple[str, Any]:
    """The text and end of one streamed reply. A fresh question each call, so no test leans on
    another's cached prompt; ``ignore_eos`` keeps the tiny model talking for all N tokens."""
    messages = [{"role": "user", "content": extra.pop("question", "tell me of the warm fire")}]
    params = {"max_tokens": N, "ignore_eos": True, **sampling.to_params(), **extra}
    stream = client.stream_chat(messages, **params)
    text = "".join(stream)
    return text, stream.end


def test_the_same_seed_gives_the_same_reply(client: RunnerClient) -> None:
    hot = Sampling(temperature=1.5, top_k=0, top_p=1.0, min_p=0.0)
    first, _ = reply(client, Sampling(**{**hot.to_params(), "seed": 1234}))
    again, _ = reply(client, Sampling(**{**hot.to_params(), "seed": 1234}))
    assert first == again and first
    others = {reply(client, Sampling(**{**hot.to_params(), "seed": s}))[0] for s in (1, 2, 3)}
    assert others - {first}, "the seed changed nothing: the sampling is not random at all"


def test_max_tokens_limits_the_reply(client: RunnerClient) -> None:
    _, end = reply(client, Sampling(max_tokens=5, temperature=0.0))
    assert end.finish_reason == "length"
    assert end.usage["completion_tokens"] == 5


@pytest.mark.parametrize("narrow", [Sampling(top_k=1), Sampling(min_p=1.0), Sampling(top_p=0.0)],
                         ids=["top_k", "min_p", "top_p"])
def test_filters_are_honoured(client: RunnerClient, narrow: Sampling) -> None:
    # At a high temperature, a filter that keeps only the likeliest token makes any seed give
    # the greedy reply: a runner that dropped the parameter would give each seed its own text.
    greedy, _ = reply(client, Sampling(temperature=0.0))
    for seed in (11, 22, 33):
        hot = Sampling(**{**narrow.to_params(), "temperature": 2.0, "seed": seed})
        assert reply(client, hot)[0] == greedy


def test_repeat_penalty_is_honoured(client: RunnerClient) -> None:
    # Greedy either way, so only the penalty can change the text.
    plain, _ = reply(client, Sampling(temperature=0.0, repeat_penalty=1.0))
    penalised, _ = reply(client, Sampling(temperature=0.0, repeat_penalty=3.0))
    assert plain != penalised


def test_the_mirrored_runner_defaults_are_the_runners(client: RunnerClient) -> None:
    # The panel shows RUNNER_DEFAULTS where the model file names none; sending them must sample
    # exactly as sending nothing does.
    question = f"{uuid.uuid4().hex[:6]} hello model"
    implicit, _ = reply(client, Sampling(seed=77), question=question)
    explicit, _ = reply(client, RUNNER_DEFAULTS.over(Sampling(seed=77)), question=question)
    assert implicit == explicit
    other, _ = reply(client, Sampling(seed=77, temperature=1.3, top_k=200), question=question)
    assert other != implicit  # the comparison can tell settings apart


def test_a_system_prompt_on_a_template_without_a_system_role(start_runner: StartRunner) -> None:
    r = start_runner(model=model_path(NO_SYSTEM_ROLE))
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hello"}]
    with RunnerClient(r.url, r.key, timeout=60) as c:
        # The runner renders the model's own template as it is: no system-role polyfill.
        with pytest.raises(RunnerApiError) as err:
            c.chat(messages, max_tokens=2)
        assert err.value.status == 400 and err.value.code == "template_error"
        assert "System role not supported" in str(err.value)
        # Folded into the first user message, the same prompt is accepted.
        body = c.chat(fold_system(messages), max_tokens=2, temperature=0.0)
        assert body["choices"][0]["finish_reason"] in ("length", "stop")
