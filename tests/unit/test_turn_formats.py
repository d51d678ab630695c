"""A model without a chat template gets the turn format its vocabulary names."""

from __future__ import annotations

import pytest

from runner.turn_formats import CHATML, FORMATS, guess_format


@pytest.mark.parametrize(("tokens", "name"), [
    ({"<start_of_turn>", "<end_of_turn>"}, "gemma"),
    ({"<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"}, "llama3"),
    ({"<|im_start|>", "<|im_end|>"}, "chatml"),
    ({"<|user|>", "<|assistant|>", "<|end|>"}, "phi3"),
    ({"[INST]", "[/INST]"}, "mistral"),
    (set(), "chatml"),  # nothing known: llama-server's fallback
    ({"<start_of_turn>"}, "chatml"),  # half a format is no format
])
def test_the_vocabulary_picks_the_format(tokens: set[str], name: str) -> None:
    assert guess_format(tokens.__contains__).name == name


def test_every_format_renders_its_own_markers_and_ends_ready_for_the_reply() -> None:
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"},
                {"role": "assistant", "content": "Hello."}, {"role": "user", "content": "Why?"}]
    for fmt in (*FORMATS, CHATML):
        prompt = Jinja2ChatFormatter(template=fmt.template, eos_token="</s>",
                                     bos_token="<s>")(messages=messages).prompt
        assert all(m in prompt for m in fmt.markers), fmt.name
        assert "Be brief." in prompt and "Why?" in prompt
        if fmt.name != "chatml":
            assert "<|im_start|>" not in prompt, fmt.name
        # the reply comes next: the prompt ends with the assistant's opening (or the user's turn)
        assert prompt.rstrip().endswith(("model", "assistant<|end_header_id|>", "assistant",
                                         "<|assistant|>", "[/INST]")), (fmt.name, prompt[-40:])
