"""The chat template's turn boundary, decoded ahead while the runner is idle (runner.server)."""

from __future__ import annotations

from llama_cpp.llama_chat_format import Jinja2ChatFormatter

from runner.server import turn_boundary
from tests.fixtures.models import CHATML_TEMPLATE

LLAMA3 = ("{{ bos_token }}{% for message in messages %}{{ '<|start_header_id|>' + message['role'] "
          "+ '<|end_header_id|>\\n\\n' + message['content'] | trim + '<|eot_id|>' }}{% endfor %}"
          "{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}"
          "{% endif %}")
STRICT = "{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant') }}"


class Spelling:
    """Stands in for the model's tokenizer: one 'token' per text, to see what was asked for."""

    def tokenize(self, text: str, add_bos: bool, special: bool) -> list[str]:
        assert not add_bos and special
        return [text]


def boundary(template: str) -> list[str]:
    fmt = Jinja2ChatFormatter(template=template, eos_token="</s>", bos_token="<s>")
    return turn_boundary(fmt, Spelling())  # type: ignore[return-value]


def test_chatml_and_llama3_boundaries() -> None:
    assert boundary(CHATML_TEMPLATE) == ["<|im_end|>\n<|im_start|>user\n"]
    assert boundary(LLAMA3) == ["<|eot_id|><|start_header_id|>user<|end_header_id|>\n\n"]


def test_a_template_that_refuses_gives_no_boundary() -> None:
    assert boundary(STRICT) == []
    assert boundary("{{ 'no messages at all' }}") == []
