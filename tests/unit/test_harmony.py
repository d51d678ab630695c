"""gpt-oss's channel format: recorded replies read into content (thinking folded) and tool
calls, whole and streamed in any pieces; the history gpt-oss's own template takes."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from app.chat.streaming import split_reasoning
from runner.harmony import HEADER_MAX, HarmonyStream, template_messages
from runner.template import BoundedChatFormatter
from runner.tools import ToolCall, tool_format, tool_names
from tests.fixtures.harmony_replies import REPLIES, WEATHER, Reply

TEMPLATE = (Path(__file__).parents[1] / "fixtures" / "templates" / "gpt-oss.jinja").read_text()


def as_runner_sees(text: str) -> str:
    """The reply as llama.cpp hands it to the runner: <|end|> is a control token it does not
    render, <|return|> and <|call|> end generation before they are text."""
    for marker in ("<|end|>", "<|return|>", "<|call|>"):
        text = text.replace(marker, "")
    return text


def read(reply: Reply, text: str, pieces: list[str] | None = None) -> tuple[str, list[ToolCall]]:
    stream = HarmonyStream(tool_names(reply.tools))
    if pieces is None:
        return stream.whole(text)
    out = "".join(stream.feed(p) for p in pieces)
    rest, calls = stream.finish()
    return out + rest, calls


def shown(content: str) -> tuple[str | None, str]:
    """What the app shows: the folded thinking and the answer."""
    r = split_reasoning(content)
    return (r.reasoning.strip() if r.reasoning is not None else None), r.answer.strip()


def calls_of(calls: list[ToolCall]) -> list[tuple[str, Any]]:
    return [(c.name, json.loads(c.arguments)) for c in calls]


def random_pieces(text: str, seed: int) -> list[str]:
    rng = random.Random(seed)
    out, i = [], 0
    while i < len(text):
        n = rng.randint(1, 12)
        out.append(text[i:i + n])
        i += n
    return out


@pytest.mark.parametrize("reply", REPLIES, ids=lambda r: r.source[:60])
def test_a_recorded_reply_as_written(reply: Reply) -> None:
    content, calls = read(reply, reply.text)
    assert content == reply.content
    assert calls_of(calls) == reply.calls
    assert all(c.id.startswith("call_") for c in calls)


@pytest.mark.parametrize("reply", REPLIES, ids=lambda r: r.source[:60])
def test_a_recorded_reply_as_the_runner_sees_it_in_any_pieces(reply: Reply) -> None:
    text = as_runner_sees(reply.text)
    want = shown(reply.content)
    whole, whole_calls = read(reply, text)
    assert shown(whole) == want
    assert calls_of(whole_calls) == reply.calls
    for pieces in ([*text], random_pieces(text, 1), random_pieces(text, 2)):
        content, calls = read(reply, text, pieces)
        assert content == whole
        assert calls_of(calls) == reply.calls
        assert "<|" not in content


def test_thinking_and_the_answer_stream_as_they_are_written() -> None:
    stream = HarmonyStream([])
    assert stream.feed("<|channel|>analysis<|message|>The user") == "<think>The user"
    assert stream.feed(" greets.<|sta") == " greets."  # a marker's start is held back
    assert stream.feed("rt|>assistant<|channel|>final<|message|>Hi") == "</think>\n\nHi"
    assert stream.feed(" there") == " there"
    assert stream.finish() == ("", [])


def test_a_call_is_held_until_the_reply_ends() -> None:
    stream = HarmonyStream(["get_weather"])
    out = stream.feed('<|channel|>commentary to=functions.get_weather <|constrain|>json'
                      '<|message|>{"city":')
    out += stream.feed('"Oslo"}')
    assert out == ""
    rest, calls = stream.finish()
    assert rest == "" and calls_of(calls) == [("get_weather", {"city": "Oslo"})]


def test_a_reply_cut_while_thinking_closes_its_fold() -> None:
    stream = HarmonyStream([])
    assert stream.feed("<|channel|>analysis<|message|>Let me think") == "<think>Let me think"
    assert stream.finish() == ("</think>", [])


def test_a_reply_cut_inside_a_header_shows_nothing_of_it() -> None:
    stream = HarmonyStream([])
    text = stream.feed("<|channel|>analysis<|message|>Hm.<|start|>assistant<|channel|>fin")
    rest, _ = stream.finish()
    assert text + rest == "<think>Hm.</think>"


@pytest.mark.parametrize("text", [
    "Plain text, as a reply being continued goes on.",
    "<b>bold</b> is not a marker",
    "<| almost a marker, and |> not one",
    "\n\nA blank line first",
])
def test_text_without_a_header_is_the_answer(text: str) -> None:
    assert HarmonyStream([]).whole(text) == (text, [])


def test_a_header_that_never_ends_is_text_after_all() -> None:
    text = "<|channel|>" + "x" * (HEADER_MAX + 10)
    stream = HarmonyStream([])
    out = stream.feed(text)
    assert out == text  # not held for ever
    assert stream.finish() == ("", [])


def test_only_offered_tools_are_called() -> None:
    reply = ('<|channel|>commentary to=functions.delete_everything <|constrain|>json<|message|>'
             '{"really": true}')
    content, calls = HarmonyStream(["get_weather"]).whole(reply)
    assert calls == [] and content == '{"really": true}'


def test_arguments_that_are_not_an_object_are_no_call() -> None:
    reply = '<|channel|>commentary to=functions.get_weather json<|message|>["Oslo"]'
    content, calls = HarmonyStream(["get_weather"]).whole(reply)
    assert calls == [] and content == '["Oslo"]'


def test_analysis_after_the_answer_is_not_shown_as_the_answer() -> None:
    reply = ("<|channel|>final<|message|>Four.<|start|>assistant<|channel|>analysis<|message|>"
             "secret plan")
    content, _ = HarmonyStream([]).whole(reply)
    assert content == "Four."


def test_the_template_is_recognised() -> None:
    assert tool_format(TEMPLATE) == "harmony"


# ---- the history -----------------------------------------------------------------------------

def test_thinking_goes_to_its_own_field() -> None:
    messages = [
        {"role": "user", "content": "<think>a user's text is theirs</think>"},
        {"role": "assistant", "content": "<think>\nR\n</think>\n\nAnswer"},
        {"role": "assistant", "content": "Plain"},
        {"role": "assistant", "content": "Shown", "reasoning_content": "given"},
        {"role": "assistant", "content": "<think>R2</think>Before", "tool_calls": [{"id": "c"}]},
    ]
    out = template_messages(messages)
    assert out[0] == messages[0]
    assert out[1] == {"role": "assistant", "content": "Answer", "thinking": "R"}
    assert out[2] == {"role": "assistant", "content": "Plain"}
    assert out[3] == {"role": "assistant", "content": "Shown", "thinking": "given"}
    # With a call, the template takes its analysis from content or thinking, never both.
    assert out[4] == {"role": "assistant", "content": "", "thinking": "R2\n\nBefore",
                      "tool_calls": [{"id": "c"}]}


def render(messages: list[dict[str, Any]], **kwargs: Any) -> str:
    fmt = BoundedChatFormatter(TEMPLATE, eos_token="<|return|>", bos_token="<|startoftext|>",
                               max_seconds=5, max_chars=1_000_000)
    return str(fmt(messages=messages, **kwargs).prompt)


def test_gpt_oss_template_takes_a_tool_round_as_the_app_sends_it() -> None:
    # The app sends what the runner gave it: the thinking folded in <think>, then the call.
    messages = template_messages([
        {"role": "user", "content": "Weather in Berlin?"},
        {"role": "assistant", "content": "<think>Use get_weather.</think>", "tool_calls": [
            {"id": "call_1", "type": "function",
             "function": {"name": "get_weather", "arguments": {"city": "Berlin"}}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
    ])
    prompt = render(messages, tools=[WEATHER], reasoning_effort="high")
    assert "Reasoning: high" in prompt
    assert "<|start|>assistant<|channel|>analysis<|message|>Use get_weather.<|end|>" in prompt
    assert ('<|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>'
            '{"city": "Berlin"}<|call|>') in prompt
    assert '<|start|>functions.get_weather to=assistant<|channel|>commentary<|message|>"sunny"' \
        in prompt
    assert prompt.endswith("<|start|>assistant")
    assert "<think>" not in prompt


def test_gpt_oss_template_drops_earlier_thinking() -> None:
    messages = template_messages([
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "<think>They greet.</think>\n\nHello!"},
        {"role": "user", "content": "Again"},
    ])
    prompt = render(messages)
    assert "<|start|>assistant<|channel|>final<|message|>Hello!<|end|>" in prompt
    assert "They greet." not in prompt and "<think>" not in prompt
