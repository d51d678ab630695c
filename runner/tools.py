"""Tool calls: which format a chat template uses, a grammar to force one, and parsing them back.

Models write tool calls as text in their own dialect. Three cover the open models people run:

- ``hermes``: ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>`` (Qwen 2.5/3, Hermes,
  many fine-tunes), possibly after some ordinary text, possibly several;
- ``mistral``: ``[TOOL_CALLS][{"name": ..., "arguments": {...}}, ...]``;
- ``json``: the whole reply is ``{"name": ..., "parameters": {...}}`` (Llama 3.1+, optionally
  after ``<|python_tag|>``), or a list of such objects;
- ``harmony``: gpt-oss's channels, a call being a message to ``functions.NAME``
  (runner/harmony.py reads those replies, with or without tools).

Nothing the model writes is trusted: a call only counts when it is well-formed JSON and names a
tool the client offered; anything else stays ordinary text. Pure logic, no llama.cpp.
"""

from __future__ import annotations

import json
import re
import secrets
from dataclasses import dataclass
from typing import Any, Literal

from runner.holdback import overlap

ToolFormat = Literal["hermes", "mistral", "json", "harmony"]

HERMES_OPEN, HERMES_CLOSE = "<tool_call>", "</tool_call>"
MISTRAL_MARK = "[TOOL_CALLS]"
PYTHON_TAG = "<|python_tag|>"
HARMONY_MARK = "<|channel|>"  # gpt-oss's channels (llama.cpp's own test for the format)


def tool_format(template: str) -> ToolFormat | None:
    """The dialect a chat template teaches its model, or None when it knows no tools."""
    if HARMONY_MARK in template:
        return "harmony"
    if "tools" not in template:
        return None
    if HERMES_OPEN in template:
        return "hermes"
    if MISTRAL_MARK in template:
        return "mistral"
    return "json"


@dataclass(frozen=True)
class ToolCall:
    name: str
    arguments: str  # a JSON object, as text: what OpenAI sends
    id: str

    def to_openai(self, index: int | None = None) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "type": "function",
                               "function": {"name": self.name, "arguments": self.arguments}}
        if index is not None:
            out["index"] = index
        return out


def tool_names(tools: list[dict[str, Any]]) -> list[str]:
    return [t["function"]["name"] for t in tools]


# ---- forcing a call (tool_choice "required" or a named function) -----------------------------

def forced_call_schema(tools: list[dict[str, Any]], fmt: ToolFormat,
                       only: str | None = None) -> dict[str, Any]:
    """A JSON schema for one call of one of ``tools`` (or of ``only``), in the format's keys."""
    key = "parameters" if fmt == "json" else "arguments"
    alternatives = []
    for tool in tools:
        fn = tool["function"]
        if only is not None and fn["name"] != only:
            continue
        params = fn.get("parameters") or {"type": "object"}
        alternatives.append({"type": "object", "properties": {
            "name": {"const": fn["name"]}, key: params}, "required": ["name", key]})
    return alternatives[0] if len(alternatives) == 1 else {"anyOf": alternatives}


def wrap_grammar(call_gbnf: str, fmt: ToolFormat) -> str:
    """Put a grammar for one call's JSON inside the format's markers."""
    body = re.sub(r"^root ::=", "tool-call ::=", call_gbnf, count=1, flags=re.MULTILINE)
    root = {
        "hermes": f'root ::= "{HERMES_OPEN}\\n" tool-call "\\n{HERMES_CLOSE}"',
        "mistral": 'root ::= "[TOOL_CALLS][" tool-call "]"',
        "json": "root ::= tool-call",
    }[fmt]
    return root + "\n" + body


# ---- reading calls back ----------------------------------------------------------------------

def parse(text: str, fmt: ToolFormat, names: list[str]) -> tuple[str, list[ToolCall]]:
    """Split a finished reply into ordinary text and tool calls."""
    if fmt == "hermes":
        return _parse_hermes(text, names)
    if fmt == "mistral":
        at = text.find(MISTRAL_MARK)
        if at < 0:
            return text, []
        calls = _calls(loads(text[at + len(MISTRAL_MARK):]), names)
        return (text[:at].strip(), calls) if calls else (text, [])
    body = text.strip()
    if body.startswith(PYTHON_TAG):
        body = body[len(PYTHON_TAG):]
    calls = _calls(loads(body), names)
    return ("", calls) if calls else (text, [])


def _parse_hermes(text: str, names: list[str]) -> tuple[str, list[ToolCall]]:
    calls: list[ToolCall] = []
    kept: list[str] = []
    pos = 0
    while (start := text.find(HERMES_OPEN, pos)) >= 0:
        end = text.find(HERMES_CLOSE, start)
        inner_end = end if end >= 0 else len(text)  # a reply cut at EOS may lack the close tag
        found = _calls(loads(text[start + len(HERMES_OPEN):inner_end]), names)
        if not found:
            break  # not a call after all: keep the rest as text
        kept.append(text[pos:start])
        calls += found
        pos = inner_end + len(HERMES_CLOSE) if end >= 0 else len(text)
    kept.append(text[pos:])
    return ("".join(kept).strip(), calls) if calls else (text, [])


def loads(text: str) -> Any:
    # strict=False: a raw control character inside a string (a byte token the grammar let
    # through, seen in a forced call) keeps the call a call; its arguments go out re-encoded.
    try:
        return json.loads(text.strip(), strict=False)
    except (ValueError, RecursionError):
        return None


def _calls(value: Any, names: list[str]) -> list[ToolCall]:
    items = value if isinstance(value, list) else [value]
    out: list[ToolCall] = []
    for item in items:
        if not isinstance(item, dict) or item.get("name") not in names:
            return []
        args = item.get("arguments", item.get("parameters", {}))
        if isinstance(args, str):  # some models write the arguments as a JSON string already
            args = loads(args)
        if not isinstance(args, dict):
            return []
        out.append(ToolCall(item["name"], json.dumps(args, ensure_ascii=False),
                            "call_" + secrets.token_hex(12)))
    return out


# ---- streaming ------------------------------------------------------------------------------

class ToolStream:
    """Streams ordinary text at once and holds back what may be a tool call.

    ``feed`` returns the text that can go to the client now; ``finish`` returns the rest of the
    text and the calls. Text that might be the start of a marker is held, as with stop strings.
    """

    def __init__(self, fmt: ToolFormat, names: list[str]) -> None:
        self.fmt = fmt
        self.names = names
        self.buf = ""  # everything from the first possible marker on
        self.sent_any = False
        self.capturing = False

    def feed(self, text: str) -> str:
        if self.capturing:
            self.buf += text
            return ""
        if self.fmt == "json":
            return self._feed_json(text)
        buf = self.buf + text
        marker = HERMES_OPEN if self.fmt == "hermes" else MISTRAL_MARK
        at = buf.find(marker)
        if at >= 0:
            self.capturing = True
            self.buf = buf[at:]
            return buf[:at]
        hold = overlap(buf, marker)
        self.buf = buf[len(buf) - hold:] if hold else ""
        return buf[: len(buf) - hold]

    def _feed_json(self, text: str) -> str:
        # Only a whole reply can be a call: decide on its first non-blank characters.
        if self.sent_any:
            return text
        buf = self.buf + text
        lead = buf.lstrip()
        if lead and (lead[0] in "{[" or lead.startswith(PYTHON_TAG)):
            self.capturing = True
        elif lead and not PYTHON_TAG.startswith(lead):
            self.buf = ""
            self.sent_any = True
            return buf
        self.buf = buf  # blank so far, or maybe the start of <|python_tag|>
        return ""

    def whole(self, text: str) -> tuple[str, list[ToolCall]]:
        """A finished reply's text and calls."""
        return parse(text, self.fmt, self.names)

    def finish(self) -> tuple[str, list[ToolCall]]:
        """Text still to send, and the calls (an unparsable capture is sent as text)."""
        if not self.capturing:
            return self.buf, []
        text, calls = parse(self.buf, self.fmt, self.names)
        return (text, calls) if calls else (self.buf, [])
