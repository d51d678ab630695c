"""gpt-oss's reply format ("harmony"): messages in channels, read back into what the API sends.

A gpt-oss reply is a run of messages, each a header and a body::

    <|channel|>analysis<|message|>We need the weather…<|end|>
    <|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{…}
    <|start|>assistant<|channel|>final<|message|>It is sunny in Berlin.

The first header's ``<|start|>assistant`` is the prompt's last text. The recipient (``to=…``) may
stand before the channel instead of after it, the constraint may be a bare word (``json``,
``code``), and gpt-oss-20b sometimes writes a stray ``<|channel|>commentary to=assistant`` before
a header. ``<|return|>`` and ``<|call|>`` end generation (llama.cpp counts them end-of-generation)
and never reach the text. llama.cpp renders ``<|channel|>``, ``<|message|>``, ``<|start|>`` and
``<|constrain|>`` as text (it marks them user-defined for this vocabulary) but not ``<|end|>``, a
control token: a body therefore also ends where the next ``<|start|>`` or ``<|channel|>`` begins.

What the client gets is what it gets from other thinking models: the analysis as a leading
``<think>…</think>`` in the content (the app folds it, as it folds Qwen 3's), the final message
and a commentary message without a recipient (a preamble) as content, and a message to
``functions.NAME`` as a tool call when NAME was offered and its body is a JSON object. Anything
else the model wrote is shown as text: nothing it writes is trusted, and nothing is lost, except
analysis written after the answer began (the template never asks for that). Pure logic, no
llama.cpp.
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Callable
from typing import Any

from runner.holdback import overlap
from runner.tools import ToolCall, loads

CHANNEL, MESSAGE, START, END = "<|channel|>", "<|message|>", "<|start|>", "<|end|>"
RETURN, CALL, CONSTRAIN = "<|return|>", "<|call|>", "<|constrain|>"
# What may begin a reply's first header (the role is in the prompt; leading blanks aside), and
# what ends a body.
_OPENERS = (CHANNEL, START, "to=")
_BODY_ENDS = (START, CHANNEL, END, RETURN, CALL)
HEADER_MAX = 512  # a "header" longer than this without <|message|> is text after all
THINK_OPEN, THINK_CLOSE = "<think>", "</think>"
_RECIPIENT = re.compile(r"to=([^\s<]+)")
_CHANNEL_NAME = re.compile(re.escape(CHANNEL) + r"\s*([A-Za-z_]+)")
FUNCTIONS = "functions."


def read_header(header: str) -> tuple[str, str | None]:
    """A message's kind ("analysis", "text" or "call") and, for a call, its recipient."""
    # "to=assistant" is the stray header gpt-oss-20b writes before a real one, not a recipient.
    recipients = [r for r in _RECIPIENT.findall(header) if r != "assistant"]
    if recipients:
        return "call", recipients[-1]
    channels = _CHANNEL_NAME.findall(header)
    return ("analysis" if channels and channels[-1] == "analysis" else "text"), None


def call_name(recipient: str, names: list[str]) -> str | None:
    """The offered tool a recipient names, or None. A model whose <|constrain|> was lost glues
    the constraint to the name ("functions.get_weatherjson"); that still names the tool."""
    if not recipient.startswith(FUNCTIONS):
        return None  # a built-in tool (python, browser.search) nobody offered
    name = recipient[len(FUNCTIONS):]
    if name in names:
        return name
    for suffix in ("json", "code"):
        if name.endswith(suffix) and name[: -len(suffix)] in names:
            return name[: -len(suffix)]
    return None


class HarmonyStream:
    """Streams a harmony reply as content (thinking folded in ``<think>``) and tool calls.

    The same two methods as :class:`runner.tools.ToolStream`: ``feed`` returns the content that
    can go to the client now, ``finish`` the rest and the calls. Text that may be the start of a
    marker is held back, as with stop strings.
    """

    def __init__(self, names: list[str]) -> None:
        self.names = names
        self.state = "start"  # "start" (before a header), "header" or "body"
        self.buf = ""  # the header so far, or body text held back
        self.kind = "text"  # the current body's: "analysis", "text" or "call"
        self.recipient: str | None = None
        self.captured: list[str] = []  # a call's body
        self.thinking = False  # <think> sent and not closed yet
        self.shown = False  # content beyond the thinking sent
        self.in_message = False  # the current body has sent text (separators between messages)
        self.calls: list[ToolCall] = []

    def feed(self, text: str) -> str:
        out: list[str] = []
        self.buf += text
        while self._step(out.append):
            pass
        return "".join(out)

    def finish(self) -> tuple[str, list[ToolCall]]:
        out: list[str] = []
        if self.state == "start":
            self._text(self.buf, out.append)  # a reply cut inside what looked like a marker
        elif self.state == "body":
            self._body(self.buf, out.append)
            self._close(out.append)
        # An unfinished header is markup only: nothing to show.
        self.buf = ""
        if self.thinking:
            out.append(THINK_CLOSE)
            self.thinking = False
        return "".join(out), self.calls

    def whole(self, text: str) -> tuple[str, list[ToolCall]]:
        """A finished reply's content and calls."""
        head = self.feed(text)
        rest, calls = self.finish()
        return head + rest, calls

    # ---- the state machine ----------------------------------------------------------------

    def _step(self, emit: Callable[[str], None]) -> bool:
        """Take what the buffer allows; True when there may be more to take."""
        if self.state == "start":
            lead = self.buf.lstrip()
            if not lead or any(o.startswith(lead) and o != lead for o in _OPENERS):
                return False  # undecided yet
            if lead.startswith(_OPENERS):
                self.state, self.buf = "header", lead
            else:  # no header: text in the final channel (a reply being continued, a fine-tune)
                self._open("text", None)
            return True
        if self.state == "header":
            at = self.buf.find(MESSAGE)
            if at < 0:
                if len(self.buf) <= HEADER_MAX:
                    return False
                text, self.buf = self.buf, ""
                self._open("text", None)
                self._text(text, emit)
                return True
            kind, recipient = read_header(self.buf[:at])
            self.buf = self.buf[at + len(MESSAGE):]
            self._open(kind, recipient)
            return True
        ends = [(at, m) for m in _BODY_ENDS if (at := self.buf.find(m)) >= 0]
        if not ends:
            hold = max(overlap(self.buf, m) for m in _BODY_ENDS)
            self._body(self.buf[: len(self.buf) - hold], emit)
            self.buf = self.buf[len(self.buf) - hold:] if hold else ""
            return False
        at, marker = min(ends)
        self._body(self.buf[:at], emit)
        self._close(emit)
        if marker in (START, CHANNEL):
            self.state, self.buf = "header", self.buf[at:]
        else:
            self.state, self.buf = "start", self.buf[at + len(marker):]
        return True

    def _open(self, kind: str, recipient: str | None) -> None:
        self.state, self.kind, self.recipient = "body", kind, recipient
        self.captured, self.in_message = [], False

    def _body(self, text: str, emit: Callable[[str], None]) -> None:
        if not text:
            return
        if self.kind == "call":
            self.captured.append(text)
        elif self.kind == "analysis":
            self._analysis(text, emit)
        else:
            self._text(text, emit)

    def _close(self, emit: Callable[[str], None]) -> None:
        """The current message ended: a call's body becomes a call, or text when it is none."""
        if self.kind == "call":
            body = "".join(self.captured)
            call = self._call(body)
            if call is not None:
                self.calls.append(call)
            else:
                self._text(body.strip(), emit)
        self.state, self.captured = "start", []

    def _call(self, body: str) -> ToolCall | None:
        name = call_name(self.recipient or "", self.names)
        args = loads(body)
        if name is None or not isinstance(args, dict):
            return None
        return ToolCall(name, json.dumps(args, ensure_ascii=False), "call_" + secrets.token_hex(12))

    def _analysis(self, text: str, emit: Callable[[str], None]) -> None:
        if self.shown:
            return  # thinking after the answer began: nowhere to fold it
        if not self.thinking:
            emit(THINK_OPEN)
            self.thinking = True
        elif not self.in_message:
            emit("\n\n")  # a second analysis message, in the same fold
        self.in_message = True
        emit(text)

    def _text(self, text: str, emit: Callable[[str], None]) -> None:
        if not text:
            return
        if self.thinking:
            emit(THINK_CLOSE + "\n\n")
            self.thinking = False
            text = text.lstrip()
            if not text:
                return
        elif self.shown and not self.in_message:
            emit("\n\n")  # a preamble, then the answer
        self.shown = self.in_message = True
        emit(text)


# ---- the history the template gets ----------------------------------------------------------

def template_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Messages as gpt-oss's template takes them: an assistant reply's thinking in ``thinking``,
    not in its content (the template refuses channel markup there and would show ``<think>``
    to the model as part of the answer). Takes the ``<think>`` fold this module writes, or
    ``reasoning_content`` (llama-server's field)."""
    out = []
    for m in messages:
        if m.get("role") != "assistant" or not isinstance(m.get("content"), str):
            out.append(m)
            continue
        thinking, answer = _split_think(m["content"])
        given = m.get("thinking") or m.get("reasoning_content")
        m = {k: v for k, v in m.items() if k != "reasoning_content"}
        if isinstance(given, str) and given:
            thinking = "\n\n".join(p for p in (given, thinking) if p)
        if m.get("tool_calls"):
            # The template takes a call's analysis from content or thinking, never both.
            thinking = "\n\n".join(p for p in (thinking, answer) if p)
            answer = ""
        m["content"] = answer
        if thinking:
            m["thinking"] = thinking
        out.append(m)
    return out


def _split_think(content: str) -> tuple[str, str]:
    lead = content.lstrip()
    if not lead.startswith(THINK_OPEN):
        return "", content
    body = lead[len(THINK_OPEN):]
    end = body.find(THINK_CLOSE)
    if end < 0:
        return body.strip(), ""
    return body[:end].strip(), body[end + len(THINK_CLOSE):].lstrip()


# ---- forcing a call -------------------------------------------------------------------------

def call_grammar(args_rules: dict[str, str], rules: str) -> str:
    """A grammar for one call in harmony's header: ``args_rules`` maps each tool's name to the
    rule for its arguments in ``rules`` (GBNF from the schema converter)."""
    # json.dumps writes a GBNF string literal too (the same escapes, \\uXXXX included).
    alternatives = " | ".join(
        f"{json.dumps(f'{name} {CONSTRAIN}json{MESSAGE}')} {rule}"
        for name, rule in args_rules.items())
    return (f"root ::= {json.dumps(f'{CHANNEL}commentary to={FUNCTIONS}')} harmony-call\n"
            f"harmony-call ::= {alternatives}\n{rules}")
