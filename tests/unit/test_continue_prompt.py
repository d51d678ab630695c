"""Continue: a conversation ending with an assistant message is rendered to end inside it."""

from __future__ import annotations

from typing import Any

import pytest

from runner.server import _render_chat
from runner.turn_formats import CHATML, FORMATS

llama_chat_format = pytest.importorskip("llama_cpp.llama_chat_format")


def _formatter(template: str) -> Any:
    return llama_chat_format.Jinja2ChatFormatter(template=template, eos_token="</s>",
                                                 bos_token="<s>")


def test_a_cut_reply_is_continued_in_the_same_turn() -> None:
    f = _formatter(CHATML.template)
    messages = [{"role": "user", "content": "Tell a story"},
                {"role": "assistant", "content": "Once upon a"}]
    prompt = _render_chat(f, messages, None, None)
    assert prompt.endswith("<|im_start|>assistant\nOnce upon a")
    assert prompt.count("<|im_end|>") == 1  # the user's turn only: the reply stays open


@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f.name)
def test_every_turn_format_continues_without_closing_the_reply(fmt: Any) -> None:
    f = _formatter(fmt.template)
    prompt = _render_chat(f, [{"role": "user", "content": "Q"},
                              {"role": "assistant", "content": "partial"}], None, None)
    assert prompt.endswith("partial")
    assert "hearth-prefill" not in prompt


def test_a_normal_conversation_gets_the_generation_prompt() -> None:
    f = _formatter(CHATML.template)
    prompt = _render_chat(f, [{"role": "user", "content": "Q"}], None, None)
    assert prompt.endswith("<|im_start|>assistant\n")
