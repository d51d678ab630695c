"""``chat_template_kwargs`` and ``reasoning_effort`` reach the chat template (llama-server's
names: Qwen 3's ``enable_thinking``, gpt-oss's effort), and a request cannot use them to replace
the template's own variables."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import openai
import pytest

from tests.fixtures.models import TINY, model_path
from tests.integration.conftest import openai_client, running

# A ChatML template that says more when thinking is turned off and names the effort.
TEMPLATE = (
    "{%- if enable_thinking is defined and enable_thinking is false %}<|im_start|>system\n"
    "no thinking: answer at once, answer at once, answer at once<|im_end|>\n{% endif %}"
    "{%- if reasoning_effort is defined %}<|im_start|>system\nreasoning effort "
    "{{ reasoning_effort }} {{ reasoning_effort }} {{ reasoning_effort }}<|im_end|>\n"
    "{% endif %}"
    "{%- for message in messages %}<|im_start|>{{ message.role }}\n{{ message.content }}"
    "<|im_end|>\n{%- endfor %}{%- if add_generation_prompt %}<|im_start|>assistant\n"
    "{% endif %}"
)
ASK = [{"role": "user", "content": "hello"}]


@pytest.fixture(scope="module")
def oai() -> Iterator[openai.OpenAI]:
    with running(model=model_path(replace(TINY, chat_template=TEMPLATE,
                                          name="hearth-kwargs"))) as r, \
            openai_client(r) as client:
        yield client


def _prompt_tokens(oai: openai.OpenAI, **extra: object) -> int:
    r = oai.chat.completions.create(model="m", messages=ASK, max_tokens=1,  # type: ignore[arg-type]
                                    extra_body=extra or None)
    assert r.usage is not None
    return r.usage.prompt_tokens


def test_template_variables_reach_the_template(oai: openai.OpenAI) -> None:
    plain = _prompt_tokens(oai)
    assert _prompt_tokens(oai, chat_template_kwargs={"enable_thinking": True}) == plain
    assert _prompt_tokens(oai, chat_template_kwargs={"enable_thinking": False}) > plain
    assert _prompt_tokens(oai, reasoning_effort="high") > plain


@pytest.mark.parametrize("kwargs", [{"messages": []}, {"raise_exception": 1},
                                    {"bad name": True}, {"x": {"nested": 1}}, {"x": "y" * 300}])
def test_a_request_cannot_replace_the_templates_own_variables(
        oai: openai.OpenAI, kwargs: dict[str, object]) -> None:
    with pytest.raises(openai.BadRequestError, match="chat_template_kwargs"):
        _prompt_tokens(oai, chat_template_kwargs=kwargs)


def test_an_unknown_effort_is_refused(oai: openai.OpenAI) -> None:
    with pytest.raises(openai.BadRequestError):
        _prompt_tokens(oai, reasoning_effort="extreme")


