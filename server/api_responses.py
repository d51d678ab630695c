"""OpenAI's Responses API (``POST /v1/responses``) over the runners' Chat Completions.

Coding agents such as Codex speak Responses; every runner speaks Chat Completions. This module
translates a Responses request into a chat/completions request, and the runner's answer (a
``chat.completion``, or its ``chat.completion.chunk`` stream) back into a ``response`` object or
Responses' SSE events. It is pure: standard library only, no I/O, so the server and the tests
drive it the same way.

What it leaves out, on purpose: this server stores nothing, so ``previous_response_id``,
``conversation``, ``background`` and stored ``prompt`` templates are refused with a sentence saying
to send the whole conversation in ``input``; OpenAI's hosted tools (web search, file search,
computer use...) have no counterpart on a local model and are refused by name; a user message's
``input_image`` parts go on as image_url parts (the runner says whether the model sees them),
files and audio are refused. The model's reasoning text (``reasoning_content``) is not
turned into reasoning items, so clients never replay it.
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass
from typing import Any, TypeGuard

from server.request_error import RequestError

# A Responses message's roles. "developer" becomes Chat's "system": the runner hands roles to the
# model's own chat template, and GGUF templates know system, user, assistant and tool only (some
# drop an unknown role, some raise), and OpenAI's own docs call developer messages the newer name
# for system messages.
_ROLES = ("user", "assistant", "system", "developer")
_TEXT_PARTS = ("input_text", "output_text")
_MEDIA_PARTS = ("input_image", "input_file", "input_audio")
_TOOL_CHOICES = ("auto", "required", "none")

# Fields that only make sense against a server that keeps responses or runs in the background.
_STATEFUL = {
    "previous_response_id": "this server stores no responses: send the whole conversation in "
                            "`input` (earlier messages, function calls and their outputs)",
    "conversation": "this server keeps no conversations: send the whole conversation in `input`",
    "prompt": "this server keeps no stored prompt templates: send the instructions and input "
              "themselves",
}


# ---- request: Responses -> Chat Completions --------------------------------------------------

def chat_request(body: dict[str, Any]) -> dict[str, Any]:
    """A Responses request body -> an OpenAI chat/completions request body.

    ``model`` is kept exactly as given (the server resolves names); ``store`` is ignored because
    nothing is ever stored here, and ``reasoning`` because the runners have no effort setting.
    """
    if not isinstance(body, dict):
        raise RequestError("The request body must be a JSON object.")
    _refuse_stateful(body)
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise RequestError("`model` is required: name a model of the library, as a string.",
                           "model")
    out: dict[str, Any] = {"model": model, "messages": _messages(body)}
    stream = _optional(body, "stream", bool, "true or false")
    out["stream"] = bool(stream)
    if stream:
        out["stream_options"] = {"include_usage": True}
    out.update(_sampling(body))
    tools = _tools(body.get("tools"))
    if tools:
        out["tools"] = tools
    choice = _tool_choice(body.get("tool_choice"), [t["function"]["name"] for t in tools])
    if choice is not None:
        out["tool_choice"] = choice
    parallel = _optional(body, "parallel_tool_calls", bool, "true or false")
    if parallel is not None:
        out["parallel_tool_calls"] = parallel
    response_format = _response_format(body.get("text"))
    if response_format is not None:
        out["response_format"] = response_format
    return out


def _refuse_stateful(body: dict[str, Any]) -> None:
    for name, why in _STATEFUL.items():
        if body.get(name) is not None:
            raise RequestError(f"`{name}` is not supported: {why}.", name)
    if body.get("background"):
        raise RequestError("`background` is not supported: this server stores no responses to "
                           "fetch later; leave it out and read the reply (or stream it).",
                           "background")


def _optional(body: dict[str, Any], name: str, kind: type | tuple[type, ...], what: str) -> Any:
    """``body[name]`` when present and of ``kind`` (a bool is never taken for a number)."""
    value = body.get(name)
    if value is None:
        return None
    if (isinstance(value, bool) and kind is not bool) or not isinstance(value, kind):
        raise RequestError(f"`{name}` must be {what}.", name)
    return value


def _sampling(body: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    limit = _optional(body, "max_output_tokens", int, "a whole number of tokens")
    if limit is not None:
        out["max_tokens"] = limit
    for name in ("temperature", "top_p"):
        value = _optional(body, name, (int, float), "a number")
        if value is not None:
            out[name] = value
    return out


# ---- input items -> chat messages ------------------------------------------------------------

def _messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    instructions = body.get("instructions")
    if instructions is not None:
        if not isinstance(instructions, str):
            raise RequestError("`instructions` must be a string.", "instructions")
        messages.append({"role": "system", "content": instructions})
    raw = body.get("input")
    if isinstance(raw, str):
        messages.append({"role": "user", "content": raw})
    elif isinstance(raw, list):
        for i, item in enumerate(raw):
            _add_item(messages, item, f"input[{i}]")
    elif raw is not None:
        raise RequestError("`input` must be a string or a list of input items.", "input")
    if not messages:
        raise RequestError("`input` is required: send the conversation as a string or a list "
                           "of messages.", "input")
    return messages


def _add_item(messages: list[dict[str, Any]], item: Any, where: str) -> None:
    if not isinstance(item, dict):
        raise RequestError(f"`{where}` must be an object (a message or a function call item).",
                           where)
    kind = item.get("type")
    if kind is None:
        # The SDK's "easy" messages carry no type; an item with only an id is a reference.
        kind = "message" if "role" in item else "item_reference"
    if kind == "message":
        messages.append(_message(item, where))
    elif kind == "function_call":
        _add_call(messages, item, where)
    elif kind == "function_call_output":
        messages.append(_call_output(item, where))
    elif kind == "reasoning":
        # Reasoning another server produced (often encrypted) means nothing to a local model;
        # dropping it keeps a conversation replayed from elsewhere usable.
        return
    elif kind == "item_reference":
        raise RequestError(f"`{where}` refers to a stored item, and this server stores none: "
                           "send the item itself.", where)
    else:
        raise RequestError(f"`{where}` has type {kind!r}, which this server does not take: it "
                           "takes messages, function_call and function_call_output items.",
                           where)


def _message(item: dict[str, Any], where: str) -> dict[str, Any]:
    role = item.get("role")
    if role not in _ROLES:
        raise RequestError(f"`{where}.role` must be one of {', '.join(_ROLES)}.", f"{where}.role")
    content = item.get("content")
    images = role == "user" and isinstance(content, list) and any(
        isinstance(p, dict) and p.get("type") == "input_image" for p in content)
    return {"role": "system" if role == "developer" else role,
            "content": _parts(list(content or ()), f"{where}.content") if images else
            _text(content, f"{where}.content")}


def _parts(content: list[Any], where: str) -> list[dict[str, Any]]:
    """A user message with images: its text and image parts in order, as Chat's parts."""
    out: list[dict[str, Any]] = []
    for j, part in enumerate(content):
        at = f"{where}[{j}]"
        if isinstance(part, dict) and part.get("type") == "input_image":
            url = part.get("image_url")
            if not isinstance(url, str) or not url:
                raise RequestError(f"`{at}.image_url` must be a data URL or a link (file_id "
                                   "is not supported here).", f"{at}.image_url")
            out.append({"type": "image_url", "image_url": {"url": url}})
        else:
            out.append({"type": "text", "text": _part_text(part, at)})
    return out


def _text(content: Any, where: str) -> str:
    """A message's content (a string, or a list of text parts) as one string."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise RequestError(f"`{where}` must be a string or a list of content parts.", where)
    texts: list[str] = []
    for j, part in enumerate(content):
        texts.append(_part_text(part, f"{where}[{j}]"))
    # The runner joins text parts with nothing between them too: parts continue one text.
    return "".join(texts)


def _part_text(part: Any, where: str) -> str:
    if not isinstance(part, dict):
        raise RequestError(f"`{where}` must be a content part object.", where)
    kind = part.get("type")
    if kind in _MEDIA_PARTS:
        raise RequestError(f"`{where}` is {kind!r}: this server takes text here (and "
                           "input_image in user messages); send the content as input_text.",
                           where)
    field = "refusal" if kind == "refusal" else "text"
    if kind not in (*_TEXT_PARTS, "refusal"):
        raise RequestError(f"`{where}` has type {kind!r}; content parts must be input_text or "
                           "output_text.", where)
    text = part.get(field)
    if not isinstance(text, str):
        raise RequestError(f"`{where}.{field}` must be a string.", f"{where}.{field}")
    return text


def _add_call(messages: list[dict[str, Any]], item: dict[str, Any], where: str) -> None:
    """A function_call item becomes a tool call of an assistant message: of the one just before
    when there is one (Responses lists a turn's text and its calls as separate items, Chat keeps
    them in one message), else of a new one."""
    call: dict[str, Any] = {"type": "function"}
    fields = {}
    for name in ("call_id", "name", "arguments"):
        value = item.get(name)
        if not isinstance(value, str):
            raise RequestError(f"`{where}.{name}` must be a string.", f"{where}.{name}")
        fields[name] = value
    call["id"] = fields["call_id"]
    call["function"] = {"name": fields["name"], "arguments": fields["arguments"]}
    last = messages[-1] if messages else None
    if last is not None and last["role"] == "assistant":
        last.setdefault("tool_calls", []).append(call)
    else:
        messages.append({"role": "assistant", "content": None, "tool_calls": [call]})


def _call_output(item: dict[str, Any], where: str) -> dict[str, Any]:
    call_id = item.get("call_id")
    if not isinstance(call_id, str) or not call_id:
        raise RequestError(f"`{where}.call_id` must name the function call it answers.",
                           f"{where}.call_id")
    return {"role": "tool", "tool_call_id": call_id,
            "content": _text(item.get("output"), f"{where}.output")}


# ---- tools, tool choice, text format ----------------------------------------------------------

def _tools(raw: Any) -> list[dict[str, Any]]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise RequestError("`tools` must be a list of function tools.", "tools")
    return [_tool(tool, f"tools[{i}]") for i, tool in enumerate(raw)]


def _tool(tool: Any, where: str) -> dict[str, Any]:
    """Responses' flat function tool -> Chat's nested one."""
    if not isinstance(tool, dict):
        raise RequestError(f"`{where}` must be a tool object.", where)
    kind = tool.get("type")
    if kind != "function":
        raise RequestError(f"`{where}` is a {kind!r} tool, which a local model cannot run: this "
                           "server takes only function tools (type \"function\"), which your "
                           "program runs.", where)
    name = tool.get("name")
    if not isinstance(name, str) or not name:
        raise RequestError(f"`{where}.name` must be a non-empty string.", f"{where}.name")
    function: dict[str, Any] = {"name": name}
    description = tool.get("description")
    if description is not None:
        if not isinstance(description, str):
            raise RequestError(f"`{where}.description` must be a string.",
                               f"{where}.description")
        function["description"] = description
    parameters = tool.get("parameters")
    if parameters is not None:
        if not isinstance(parameters, dict):
            raise RequestError(f"`{where}.parameters` must be a JSON schema object.",
                               f"{where}.parameters")
        function["parameters"] = parameters
    strict = tool.get("strict")
    if strict is not None:
        if not isinstance(strict, bool):
            raise RequestError(f"`{where}.strict` must be true or false.", f"{where}.strict")
        function["strict"] = strict
    return {"type": "function", "function": function}


def _tool_choice(raw: Any, names: list[str]) -> str | dict[str, Any] | None:
    if raw is None:
        return None
    if isinstance(raw, str):
        if raw not in _TOOL_CHOICES:
            raise RequestError(f"`tool_choice` must be one of {', '.join(_TOOL_CHOICES)}, or "
                               "{\"type\": \"function\", \"name\": ...}.", "tool_choice")
        return raw
    if not isinstance(raw, dict):
        raise RequestError("`tool_choice` must be a string or an object.", "tool_choice")
    if raw.get("type") != "function":
        raise RequestError(f"`tool_choice` of type {raw.get('type')!r} is not supported: use "
                           "auto, required, none, or {\"type\": \"function\", \"name\": ...}.",
                           "tool_choice")
    name = raw.get("name")
    if not isinstance(name, str) or name not in names:
        raise RequestError(f"`tool_choice` names {name!r}, which is not among the function "
                           "tools sent.", "tool_choice")
    return {"type": "function", "function": {"name": name}}


def _response_format(text: Any) -> dict[str, Any] | None:
    """``text.format`` -> Chat's ``response_format`` (None for plain text). ``text.verbosity``
    has no counterpart and is ignored."""
    if text is None:
        return None
    if not isinstance(text, dict):
        raise RequestError("`text` must be an object such as {\"format\": {...}}.", "text")
    fmt = text.get("format")
    if fmt is None:
        return None
    if not isinstance(fmt, dict):
        raise RequestError("`text.format` must be an object.", "text.format")
    kind = fmt.get("type")
    if kind == "text":
        return None
    if kind == "json_object":
        return {"type": "json_object"}
    if kind != "json_schema":
        raise RequestError("`text.format.type` must be text, json_object or json_schema.",
                           "text.format.type")
    return {"type": "json_schema", "json_schema": _json_schema(fmt)}


def _json_schema(fmt: dict[str, Any]) -> dict[str, Any]:
    name, schema = fmt.get("name"), fmt.get("schema")
    if not isinstance(name, str) or not name:
        raise RequestError("`text.format.name` must be a non-empty string.", "text.format.name")
    if not isinstance(schema, dict):
        raise RequestError("`text.format.schema` must be a JSON schema object.",
                           "text.format.schema")
    out: dict[str, Any] = {"name": name, "schema": schema}
    for key, kind in (("strict", bool), ("description", str)):
        value = fmt.get(key)
        if value is not None:
            if not isinstance(value, kind):
                raise RequestError(f"`text.format.{key}` has the wrong type.",
                                   f"text.format.{key}")
            out[key] = value
    return out


# ---- reply: chat.completion -> response --------------------------------------------------------

def reply(chat: dict[str, Any], model: str) -> dict[str, Any]:
    """An OpenAI chat.completion (non-streaming) -> a Responses ``response`` object."""
    message, finish = _first_choice(chat)
    status, incomplete = _status(finish)
    item_status = "incomplete" if status == "incomplete" else "completed"
    output: list[dict[str, Any]] = []
    content = message.get("content")
    text = content if isinstance(content, str) else ""
    calls = [c for c in _list(message.get("tool_calls")) if isinstance(c, dict)]
    if text or not calls:
        output.append(_message_item(_new_id("msg"), text, item_status))
    for call in calls:
        function = _dict(call.get("function"))
        output.append(_call_item(_new_id("fc"), _str(call.get("id")) or _new_id("call"),
                                 _str(function.get("name")), _str(function.get("arguments")),
                                 item_status))
    created = chat.get("created")
    return _response(
        _new_id("resp"), created if _is_int(created) else int(time.time()), model, status,
        output, usage=_usage(chat.get("usage")), incomplete=incomplete)


def _first_choice(chat: Any) -> tuple[dict[str, Any], str | None]:
    for choice in _list(_dict(chat).get("choices")):
        if isinstance(choice, dict) and choice.get("index", 0) == 0:
            finish = choice.get("finish_reason")
            return _dict(choice.get("message")), finish if isinstance(finish, str) else None
    return {}, None


def _status(finish: str | None) -> tuple[str, dict[str, Any] | None]:
    """Chat's finish reason -> the response's status and ``incomplete_details``."""
    if finish == "length":
        return "incomplete", {"reason": "max_output_tokens"}
    if finish == "content_filter":
        return "incomplete", {"reason": "content_filter"}
    return "completed", None


def _usage(raw: Any) -> dict[str, Any] | None:
    usage = _dict(raw)
    if not usage:
        return None
    prompt, completion = _int(usage.get("prompt_tokens")), _int(usage.get("completion_tokens"))
    total = usage.get("total_tokens")
    cached = _int(_dict(usage.get("prompt_tokens_details")).get("cached_tokens"))
    return {
        "input_tokens": prompt,
        # The SDK's model requires cache_write_tokens; llama.cpp's cache costs nothing to write.
        "input_tokens_details": {"cached_tokens": cached, "cache_write_tokens": 0},
        "output_tokens": completion,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": total if _is_int(total) else prompt + completion,
    }


def _message_item(item_id: str, text: str, status: str) -> dict[str, Any]:
    return {"type": "message", "id": item_id, "status": status, "role": "assistant",
            "content": [_text_part(text)]}


def _text_part(text: str) -> dict[str, Any]:
    return {"type": "output_text", "text": text, "annotations": [], "logprobs": []}


def _call_item(item_id: str, call_id: str, name: str, arguments: str,
               status: str) -> dict[str, Any]:
    return {"type": "function_call", "id": item_id, "call_id": call_id, "name": name,
            "arguments": arguments, "status": status}


def _response(response_id: str, created: int, model: str, status: str,
              output: list[dict[str, Any]], *, usage: dict[str, Any] | None = None,
              incomplete: dict[str, Any] | None = None,
              error: dict[str, Any] | None = None) -> dict[str, Any]:
    """The ``response`` object. The interface hands the reply no request, so the fields the SDK
    requires that echo it (tools, tool_choice, parallel_tool_calls) carry Responses' defaults."""
    return {
        "id": response_id, "object": "response", "created_at": created, "status": status,
        "completed_at": int(time.time()) if status == "completed" else None,
        "background": False, "error": error, "incomplete_details": incomplete,
        "instructions": None, "max_output_tokens": None, "model": model, "output": output,
        "parallel_tool_calls": True, "previous_response_id": None, "reasoning": None,
        "store": False,  # never stored: see _STATEFUL
        "temperature": None, "text": {"format": {"type": "text"}}, "tool_choice": "auto",
        "tools": [], "top_p": None, "truncation": "disabled", "usage": usage, "metadata": {},
        "user": None,
    }


# ---- streaming: chat.completion.chunk -> Responses SSE events -----------------------------------

@dataclass
class _Item:
    """One output item being streamed: a message (text) or a function call (its arguments)."""

    kind: str
    item_id: str
    index: int
    text: str = ""
    call_id: str = ""
    name: str = ""
    status: str = "in_progress"

    def body(self) -> dict[str, Any]:
        if self.kind == "message":
            return _message_item(self.item_id, self.text, self.status)
        return _call_item(self.item_id, self.call_id, self.name, self.text, self.status)


@dataclass
class _PendingCall:
    """A tool call whose name has not arrived yet: Responses announces an item with its name."""

    call_id: str = ""
    name: str = ""
    arguments: str = ""


class StreamTranslator:
    """Chat completion chunks -> Responses' SSE events, in the order OpenAI sends them:
    ``response.created`` and ``response.in_progress`` first; each output item opened
    (``output_item.added``), filled (text or argument deltas) and closed (``...done``); a
    ``response.completed`` (or ``response.incomplete``) carrying the whole response last. Every
    event has a ``sequence_number`` counting from 0."""

    def __init__(self, model: str) -> None:
        self._model = model
        self._id = _new_id("resp")
        self._created = int(time.time())
        self._seq = 0
        self._started = False
        self._closed = False
        self._items: list[_Item] = []
        self._text: _Item | None = None          # the message item open for text deltas
        self._calls: dict[int, _Item] = {}       # Chat's tool call index -> its open item
        self._pending: dict[int, _PendingCall] = {}
        self._finish: str | None = None
        self._usage: dict[str, Any] | None = None

    def feed(self, chunk: dict[str, Any]) -> list[bytes]:
        """One parsed OpenAI chat.completion.chunk -> zero or more SSE frames."""
        if self._closed:
            return []
        frames = self._start()
        chunk = _dict(chunk)
        usage = _usage(chunk.get("usage"))
        if usage is not None:
            self._usage = usage
        for choice in _list(chunk.get("choices")):
            if isinstance(choice, dict) and choice.get("index", 0) == 0:
                frames += self._choice(choice)
        return frames

    def finish(self) -> list[bytes]:
        """The stream ended ([DONE]): every open item closed, then the final response."""
        if self._closed:
            return []
        frames = self._start()
        status, incomplete = _status(self._finish)
        item_status = "incomplete" if status == "incomplete" else "completed"
        frames += self._close_text(item_status)
        for index in sorted(self._pending):
            # A call whose name never came is surfaced all the same when it carries anything,
            # so the client sees what the model did; an empty one is noise.
            pending = self._pending[index]
            if pending.call_id or pending.arguments:
                frames += self._open_call(index, pending)
        for item in sorted(self._calls.values(), key=lambda it: it.index):
            frames += self._close_call(item, item_status)
        self._closed = True
        response = self._snapshot(status, usage=self._usage, incomplete=incomplete)
        kind = "response.completed" if status == "completed" else "response.incomplete"
        return [*frames, self._event(kind, {"response": response})]

    def fail(self, message: str) -> list[bytes]:
        """The upstream failed mid-stream: an ``error`` event, then ``response.failed`` (the
        terminal event clients wait for) with the message in its ``error``."""
        if self._closed:
            return []
        frames = self._start()
        self._closed = True
        for item in self._items:
            if item.status == "in_progress":
                item.status = "incomplete"
        error = {"code": "server_error", "message": message}
        frames.append(self._event("error", {**error, "param": None}))
        frames.append(self._event("response.failed",
                                  {"response": self._snapshot("failed", error=error)}))
        return frames

    # -- events --

    def _event(self, kind: str, fields: dict[str, Any]) -> bytes:
        data = {"type": kind, "sequence_number": self._seq, **fields}
        self._seq += 1
        return _frame(kind, data)

    def _snapshot(self, status: str, **extra: Any) -> dict[str, Any]:
        output = [item.body() for item in self._items]
        return _response(self._id, self._created, self._model, status, output, **extra)

    def _start(self) -> list[bytes]:
        if self._started:
            return []
        self._started = True
        return [self._event(kind, {"response": self._snapshot("in_progress")})
                for kind in ("response.created", "response.in_progress")]

    def _choice(self, choice: dict[str, Any]) -> list[bytes]:
        frames: list[bytes] = []
        delta = _dict(choice.get("delta"))
        content = delta.get("content")
        if isinstance(content, str) and content:
            frames += self._text_delta(content)
        for call in _list(delta.get("tool_calls")):
            if isinstance(call, dict):
                frames += self._call_delta(call)
        finish = choice.get("finish_reason")
        if isinstance(finish, str):
            self._finish = finish
        return frames

    def _add(self, kind: str, prefix: str) -> _Item:
        item = _Item(kind, _new_id(prefix), len(self._items))
        self._items.append(item)
        return item

    def _text_delta(self, text: str) -> list[bytes]:
        frames: list[bytes] = []
        item = self._text
        if item is None:
            item = self._text = self._add("message", "msg")
            # Announced empty: the content part comes with its own event, and the SDK appends it.
            frames.append(self._event("response.output_item.added", {
                "output_index": item.index, "item": {**item.body(), "content": []}}))
            frames.append(self._event("response.content_part.added",
                                      {**self._where(item), "part": _text_part("")}))
        item.text += text
        frames.append(self._event("response.output_text.delta",
                                  {**self._where(item), "delta": text, "logprobs": []}))
        return frames

    @staticmethod
    def _where(item: _Item) -> dict[str, Any]:
        return {"item_id": item.item_id, "output_index": item.index, "content_index": 0}

    def _close_text(self, status: str = "completed") -> list[bytes]:
        item = self._text
        if item is None:
            return []
        self._text = None
        item.status = status
        where = self._where(item)
        return [
            self._event("response.output_text.done",
                        {**where, "text": item.text, "logprobs": []}),
            self._event("response.content_part.done", {**where, "part": _text_part(item.text)}),
            self._event("response.output_item.done",
                        {"output_index": item.index, "item": item.body()}),
        ]

    def _call_delta(self, call: dict[str, Any]) -> list[bytes]:
        index = _int(call.get("index"))
        function = _dict(call.get("function"))
        arguments = _str(function.get("arguments"))
        item = self._calls.get(index)
        if item is not None:
            return self._arguments(item, arguments)
        pending = self._pending.setdefault(index, _PendingCall())
        pending.call_id = pending.call_id or _str(call.get("id"))
        pending.name = pending.name or _str(function.get("name"))
        pending.arguments += arguments
        return self._open_call(index, pending) if pending.name else []

    def _open_call(self, index: int, pending: _PendingCall) -> list[bytes]:
        """Announce a function call item (closing the text before it: Responses gives a turn's
        text and its calls as separate items), then the arguments that came with it."""
        del self._pending[index]
        frames = self._close_text()
        item = self._calls[index] = self._add("function_call", "fc")
        item.call_id = pending.call_id or _new_id("call")
        item.name = pending.name
        frames.append(self._event("response.output_item.added",
                                  {"output_index": item.index, "item": item.body()}))
        return frames + self._arguments(item, pending.arguments)

    def _arguments(self, item: _Item, delta: str) -> list[bytes]:
        if not delta:
            return []
        item.text += delta
        return [self._event("response.function_call_arguments.delta",
                            {"item_id": item.item_id, "output_index": item.index,
                             "delta": delta})]

    def _close_call(self, item: _Item, status: str) -> list[bytes]:
        # Calls close only at the end: Chat may interleave argument deltas of parallel calls.
        # A call cut by the token limit is "incomplete": its arguments are likely cut too.
        item.status = status
        return [
            self._event("response.function_call_arguments.done",
                        {"item_id": item.item_id, "output_index": item.index,
                         "name": item.name, "arguments": item.text}),
            self._event("response.output_item.done",
                        {"output_index": item.index, "item": item.body()}),
        ]


def _frame(kind: str, data: dict[str, Any]) -> bytes:
    return f"event: {kind}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


# ---- errors --------------------------------------------------------------------------------------

def error_body(status: int, message: str, code: str | None = None,
               param: str | None = None) -> dict[str, Any]:
    """OpenAI's error shape, which the SDK reads for every non-2xx answer (``param`` is a
    :class:`RequestError`'s, where there is one)."""
    kind = "server_error" if status >= 500 else "invalid_request_error"
    return {"error": {"message": message, "type": kind, "code": code, "param": param}}


# ---- small helpers: nothing from a body is trusted -----------------------------------------------

def _new_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex}"


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _is_int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _int(value: Any) -> int:
    return value if _is_int(value) else 0
