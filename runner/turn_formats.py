"""A chat format for models whose GGUF carries no chat template (base models, many conversions).

llama-server falls back to ChatML, which a model that never saw ChatML's markers does not follow:
a Gemma base file echoes the question and prints ``<|im_end|>`` into the chat. A vocabulary
still tells which turn format its model was trained around: the special tokens it has. The
markers are control tokens, so the reply stops at the format's end-of-turn (llama.cpp marks
those as end-of-generation) and never shows one. The first format whose markers the vocabulary
has wins; none: ChatML, as before.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class TurnFormat:
    name: str
    markers: tuple[str, ...]  # special tokens the vocabulary must have, one token each
    template: str  # Jinja, rendered by llama-cpp-python's sandboxed formatter


CHATML = TurnFormat("chatml", ("<|im_start|>", "<|im_end|>"), (
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] "
    "+ '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}"
    "{{ '<|im_start|>assistant\n' }}{% endif %}"))

FORMATS: tuple[TurnFormat, ...] = (
    # Gemma: "model" is the assistant's role; a system message is a user turn.
    TurnFormat("gemma", ("<start_of_turn>", "<end_of_turn>"), (
        "{{ bos_token }}{% for message in messages %}"
        "{% set role = 'model' if message['role'] == 'assistant' else 'user' %}"
        "{{ '<start_of_turn>' + role + '\n' + message['content'] + '<end_of_turn>\n' }}"
        "{% endfor %}{% if add_generation_prompt %}{{ '<start_of_turn>model\n' }}{% endif %}")),
    TurnFormat("llama3", ("<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"), (
        "{{ bos_token }}{% for message in messages %}"
        "{{ '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n' "
        "+ message['content'] + '<|eot_id|>' }}{% endfor %}{% if add_generation_prompt %}"
        "{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}{% endif %}")),
    CHATML,
    TurnFormat("phi3", ("<|user|>", "<|assistant|>", "<|end|>"), (
        "{% for message in messages %}{{ '<|' + message['role'] + '|>\n' + message['content'] "
        "+ '<|end|>\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|assistant|>\n' }}"
        "{% endif %}")),
    TurnFormat("mistral", ("[INST]", "[/INST]"), (
        "{{ bos_token }}{% for message in messages %}{% if message['role'] == 'assistant' %}"
        "{{ message['content'] + eos_token }}{% else %}{{ '[INST] ' + message['content'] "
        "+ ' [/INST]' }}{% endif %}{% endfor %}")),
)


def guess_format(is_special_token: Callable[[str], bool]) -> TurnFormat:
    """The turn format of the first family whose markers are all special tokens, else ChatML.

    ``is_special_token(text)``: the vocabulary has ``text`` as one (control) token.
    """
    for fmt in FORMATS:
        if all(is_special_token(m) for m in fmt.markers):
            return fmt
    return CHATML
