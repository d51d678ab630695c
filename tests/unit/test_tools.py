"""Tool-call dialects: detection, parsing, streaming hold-back, and forcing grammars."""

from __future__ import annotations

import json

import pytest

from runner.tools import ToolStream, forced_call_schema, parse, tool_format, wrap_grammar

NAMES = ["get_weather", "add"]
CALL = '{"name": "get_weather", "arguments": {"city": "Oslo"}}'


@pytest.mark.parametrize(("template", "fmt"), [
    ("{% for m in messages %}{{ m.content }}{% endfor %}", None),
    ("{% if tools %}<tool_call>{% endif %}", "hermes"),
    ("{% if tools %}[TOOL_CALLS]{% endif %}", "mistral"),
    ("{% if tools %}{{ tools | tojson }}<|python_tag|>{% endif %}", "json"),
])
def test_tool_format(template: str, fmt: str | None) -> None:
    assert tool_format(template) == fmt


@pytest.mark.parametrize(("fmt", "text", "content", "calls"), [
    ("hermes", f"<tool_call>\n{CALL}\n</tool_call>", "", [("get_weather", {"city": "Oslo"})]),
    ("hermes", f"Let me look.\n<tool_call>{CALL}</tool_call>\n<tool_call>"
               '{"name": "add", "arguments": "{\\"a\\": 1}"}</tool_call>', "Let me look.",
     [("get_weather", {"city": "Oslo"}), ("add", {"a": 1})]),
    ("hermes", f"<tool_call>{CALL}", "", [("get_weather", {"city": "Oslo"})]),  # cut at EOS
    ("hermes", "<tool_call>{not json}</tool_call>", None, []),
    ("hermes", '<tool_call>{"name": "rm_rf", "arguments": {}}</tool_call>', None, []),
    ("hermes", "just text", None, []),
    ("mistral", f"[TOOL_CALLS][{CALL}]", "", [("get_weather", {"city": "Oslo"})]),
    ("mistral", "[TOOL_CALLS] nope", None, []),
    ("json", '{"name": "add", "parameters": {"a": 1, "b": 2}}', "", [("add", {"a": 1, "b": 2})]),
    ("json", '<|python_tag|>{"name": "add", "parameters": {}}', "", [("add", {})]),
    ("json", f"[{CALL}, {CALL}]", "", [("get_weather", {"city": "Oslo"})] * 2),
    ("json", '{"name": "add", "parameters": [1, 2]}', None, []),
    ("json", '{"answer": 42}', None, []),
    ("json", "[" * 5000, None, []),
])
def test_parse(fmt: str, text: str, content: str | None,
               calls: list[tuple[str, dict[str, object]]]) -> None:
    got_text, got = parse(text, fmt, NAMES)  # type: ignore[arg-type]
    assert [(c.name, json.loads(c.arguments)) for c in got] == calls
    assert got_text == (text if content is None else content)
    assert len({c.id for c in got}) == len(got)


@pytest.mark.parametrize(("fmt", "text"), [
    ("hermes", f"Sure. <tool_call>\n{CALL}\n</tool_call>"),
    ("hermes", "a < b and <tool_ is not a call"),
    ("mistral", f"[TOOL_CALLS][{CALL}]"),
    ("mistral", "[TOOL] no"),
    ("json", f"  {CALL}"),
    ("json", "<|python_tag|>" + CALL.replace("arguments", "parameters")),
    ("json", "<|python is not the tag"),
    ("json", "plain words {with braces}"),
    ("json", "{broken"),
])
def test_stream_in_any_pieces_equals_parse(fmt: str, text: str) -> None:
    want_text, want_calls = parse(text, fmt, NAMES)  # type: ignore[arg-type]
    for size in (1, 2, 3, 7, len(text)):
        ts = ToolStream(fmt, NAMES)  # type: ignore[arg-type]
        sent = "".join(ts.feed(text[i:i + size]) for i in range(0, len(text), size))
        rest, calls = ts.finish()
        assert [(c.name, c.arguments) for c in calls] == [(c.name, c.arguments) for c in want_calls]
        if calls:
            assert (sent + rest).strip() == want_text
        else:
            assert sent + rest == text  # nothing lost, nothing invented


def test_stream_sends_plain_text_at_once() -> None:
    ts = ToolStream("hermes", NAMES)
    assert ts.feed("Hello there") == "Hello there"
    assert ts.feed(" <tool") == " "  # may be the start of a call: held
    assert ts.feed("box>") == "<toolbox>"


def test_forced_grammar_shape() -> None:
    tools = [{"type": "function", "function": {"name": n, "parameters": {"type": "object"}}}
             for n in NAMES]
    one = forced_call_schema(tools, "hermes", only="add")
    assert one["properties"]["name"] == {"const": "add"} and "arguments" in one["properties"]
    both = forced_call_schema(tools, "json")
    assert len(both["anyOf"]) == 2 and "parameters" in both["anyOf"][0]["properties"]
    g = wrap_grammar('root ::= "{" "}"\nspace ::= " "?', "hermes")
    assert g.splitlines()[0] == 'root ::= "<tool_call>\\n" tool-call "\\n</tool_call>"'
    assert 'tool-call ::= "{" "}"' in g and g.count("root ::=") == 1


def test_a_call_whose_string_holds_a_raw_control_character_stays_a_call() -> None:
    # Seen from a forced call: the grammar let a byte token (U+0012) into a string.
    text = '<tool_call>\n{"name": "calculate", "arguments": {"expression": "1\x12+1"}}\n</tool_call>'
    content, calls = parse(text, "hermes", ["calculate"])
    assert content == "" and [c.name for c in calls] == ["calculate"]
    assert json.loads(calls[0].arguments) == {"expression": "1\x12+1"}  # valid JSON out
