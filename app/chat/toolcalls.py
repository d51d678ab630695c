"""A reply's tool calls, as the conversation keeps them (no Qt).

A reply that calls tools is one message to the person and several to the model: each round is
the text the model wrote, the calls it made in that turn and what each gave back; the reply's
``content`` is its text after the last round. The rounds live in the reply's ``meta`` under
:data:`ROUNDS`, so they are saved, branched and exported with it, and :func:`api_turns` spells
them out as Chat Completions messages (an assistant message with ``tool_calls``, then one
``tool`` message per call) whenever the conversation is sent again.

Everything in a call came from the model (its name and arguments) or from a tool (its result):
the view shows it as text, never as markup, and a call's result is bounded before it is kept.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from app.chat.message import Message
from app.i18n import T_, english

ROUNDS = "tool_rounds"
MAX_CALLS = 16  # calls kept from one turn of the model: more is a runaway, not a plan
MAX_ARGUMENTS = 64 * 1024  # characters of one call's arguments kept

# A call's state. Waiting: "asking" (the person decides), "running". Done: the rest.
ASKING, RUNNING = "asking", "running"
OK, ERROR, DENIED, TIMED_OUT, CANCELLED, UNKNOWN = (
    "ok", "error", "denied", "timed_out", "cancelled", "unknown")
DONE = frozenset({OK, ERROR, DENIED, TIMED_OUT, CANCELLED, UNKNOWN})
# The note under a reply whose calls named tools the conversation did not offer (kept in
# English with the reply; the view shows it translated).
IGNORED_CALLS_NOTE = str(T_("The model tried to call tools this conversation does not offer; "
                            "its calls were ignored."))


@dataclass(frozen=True)
class ModelCall:
    """A call as the model wrote it (from the stream's ``tool_calls``), not yet trusted."""

    id: str
    name: str
    arguments: str

    @staticmethod
    def from_openai(raw: Any, n: int) -> ModelCall | None:
        """One ``tool_calls`` entry; None when it is not a function call with a name."""
        if not isinstance(raw, dict):
            return None
        fn = raw.get("function")
        if not isinstance(fn, dict) or not isinstance(fn.get("name"), str) or not fn["name"]:
            return None
        args = fn.get("arguments")
        if not isinstance(args, str):
            args = json.dumps(args) if isinstance(args, dict) else "{}"
        call_id = raw.get("id") if isinstance(raw.get("id"), str) and raw.get("id") else \
            f"call_{n}"
        return ModelCall(str(call_id)[:64], fn["name"][:128], args[:MAX_ARGUMENTS])


def rounds_of(m: Message) -> list[dict[str, Any]]:
    """The reply's rounds (an empty list for a message without calls or with odd meta)."""
    rounds = m.meta.get(ROUNDS) if m.role == "assistant" else None
    if not isinstance(rounds, list):
        return []
    return [r for r in rounds if isinstance(r, dict) and isinstance(r.get("calls"), list)]


def calls_of(round_: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for c in round_.get("calls") or [] if isinstance(c, dict)]


def begin_round(m: Message, calls: list[ModelCall], tools: dict[str, str]) -> dict[str, Any]:
    """The reply's text so far becomes a round with ``calls`` (at most :data:`MAX_CALLS`);
    ``tools`` maps the names the model was offered to the tools' keys: a call of any other
    name is :data:`UNKNOWN` at once. The reply's text starts again, empty, for what the model
    writes after the results."""
    records = []
    for call in calls[:MAX_CALLS]:
        key = tools.get(call.name)
        records.append({"id": call.id, "name": call.name, "tool": key or "",
                        "arguments": call.arguments, "status": ASKING if key else UNKNOWN,
                        "result": "" if key else str(english("There is no tool named {name}.",
                                                        name=call.name)),
                        "ms": 0})
    round_ = {"text": m.content, "calls": records}
    m.meta.setdefault(ROUNDS, [])
    m.meta[ROUNDS].append(round_)
    m.content = ""
    return round_


def settle(call: dict[str, Any], status: str, result: str = "", ms: int = 0) -> None:
    """A call's outcome: its status, the text the model gets and how long it took."""
    call["status"] = status
    call["result"] = result or outcome_text(status)
    call["ms"] = ms


def outcome_text(status: str, timeout_s: float | None = None) -> str:
    """What the model is told of a call that gave no result of its own."""
    if status == DENIED:
        return str(english("The person did not allow this call. Do not call it again for this; "
                      "answer without it or ask them."))
    if status == CANCELLED:
        return str(english("The call was cancelled before it finished."))
    if status == TIMED_OUT:
        return str(english("The call took longer than its time limit and was cancelled."))
    return ""


def open_calls(m: Message) -> list[dict[str, Any]]:
    """The calls of the reply's last round that have no outcome yet."""
    rounds = rounds_of(m)
    return [c for c in calls_of(rounds[-1]) if c.get("status") not in DONE] if rounds else []


def end_open_calls(m: Message, status: str = CANCELLED) -> None:
    """Every call still waiting ends as ``status`` (Stop, the window closing, a failure)."""
    for call in open_calls(m):
        settle(call, status)


def api_turns(m: Message, content: bool = True) -> list[dict[str, Any]]:
    """The Chat Completions messages a reply with rounds stands for: each round's assistant
    turn with its calls and the calls' results, then (``content``) the text after them."""
    out: list[dict[str, Any]] = []
    for round_ in rounds_of(m):
        calls = calls_of(round_)
        text = round_.get("text") if isinstance(round_.get("text"), str) else ""
        out.append({"role": "assistant", "content": text or None, "tool_calls": [
            {"id": str(c.get("id")), "type": "function",
             "function": {"name": str(c.get("name")), "arguments": str(c.get("arguments"))}}
            for c in calls]})
        for c in calls:
            result = c.get("result") if c.get("status") in DONE else outcome_text(CANCELLED)
            out.append({"role": "tool", "tool_call_id": str(c.get("id")),
                        "content": str(result or "")})
    if content and m.content:
        out.append({"role": "assistant", "content": m.content})
    return out


def rounds_text(m: Message) -> str:
    """All the text the rounds add to what is sent (for the context budget's estimate)."""
    parts = []
    for round_ in rounds_of(m):
        parts.append(str(round_.get("text") or ""))
        for c in calls_of(round_):
            parts += [str(c.get("name")), str(c.get("arguments")), str(c.get("result"))]
    return "\n".join(parts)
