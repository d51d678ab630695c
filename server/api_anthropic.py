"""Anthropic's Messages API (``POST /v1/messages``) over a runner's OpenAI Chat Completions.

Coding agents (Claude Code and the like) and the official ``anthropic`` SDK speak this API; every
runner speaks OpenAI's. This module is the translation both ways and nothing else: standard library
only, no I/O, so the server's request handling stays thin and the rules here are unit-tested.

What it takes: a system prompt (a string or text blocks), messages whose content is a string or
text / tool_use / tool_result blocks (consecutive turns of one role are combined, as Anthropic
does), sampling settings, custom tools and tool_choice, and ``output_config.format`` (a JSON
schema, which the runner enforces with a grammar). Unknown top-level fields (Anthropic adds new
ones often) are ignored; every field used is type-checked. What it refuses
with a sentence: documents (images go to the runner as image_url parts), Anthropic's built-in
tools, and block types it does not know. ``metadata``, ``thinking``, ``cache_control`` and the
``anthropic-version`` header change nothing for a local model and are ignored.

Choices worth knowing:
- A finish on a stop string cannot be told apart from a natural end (OpenAI's ``finish_reason``
  says "stop" for both), so ``stop_reason`` is "end_turn" and ``stop_sequence`` is null.
- A non-streaming tool call whose arguments are not a JSON object gets ``input: {}`` and a text
  block before it saying so, with the model's text: the client's schema check then fails loudly
  and the words show why. A streamed call's arguments are passed on as they arrive (Anthropic's
  own streams do the same); the SDK reports text that is not JSON when it accumulates it.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from typing import Any

from server.request_error import RequestError

# Blocks a later runtime with vision may take; named apart so the refusal says "text only".
_MEDIA_BLOCKS = frozenset({"image", "document"})  # images only in user turns
# The model's own reasoning from an earlier turn: Anthropic drops it from earlier turns too, and
# this server never writes it, so a client replaying it (or a moved conversation) loses nothing.
_DROPPED_BLOCKS = frozenset({"thinking", "redacted_thinking"})


# ---- request: Anthropic -> OpenAI -------------------------------------------------------------

def chat_request(body: dict[str, Any]) -> dict[str, Any]:
    """An Anthropic Messages request body -> an OpenAI chat/completions request body."""
    if not isinstance(body, dict):
        raise RequestError("The request body must be a JSON object.")
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise RequestError('"model" is required: name a model of the library (a string).', "model")
    out: dict[str, Any] = {
        "model": model,
        "messages": _messages(body.get("messages"), _system(body.get("system"))),
        "max_tokens": _max_tokens(body.get("max_tokens")),
    }
    stream = body.get("stream", False)
    if not isinstance(stream, bool):
        raise RequestError('"stream" must be true or false.', "stream")
    out["stream"] = stream
    if stream:
        out["stream_options"] = {"include_usage": True}
    out.update(_sampling(body))
    tools = _tools(body.get("tools"))
    if tools:
        out["tools"] = tools
    out.update(_tool_choice(body.get("tool_choice")))
    response_format = _output_format(body)
    if response_format is not None:
        out["response_format"] = response_format
    return out


def _max_tokens(value: Any) -> int:
    # Anthropic requires it (no server default): a client that omits it is written for another API.
    if value is None:
        raise RequestError('"max_tokens" is required by the Messages API: say how many tokens the '
                           "reply may have at most.", "max_tokens")
    if not _is_int(value) or value < 1:
        raise RequestError('"max_tokens" must be a whole number of at least 1.', "max_tokens")
    return int(value)


def _system(value: Any) -> list[dict[str, Any]]:
    if value is None:
        return []
    if isinstance(value, str):
        text = value
    elif isinstance(value, list):
        text = _texts(value, "system", "the system prompt")
    else:
        raise RequestError('"system" must be a string or a list of text blocks.', "system")
    return [{"role": "system", "content": text}] if text else []


def _texts(blocks: list[Any], param: str, what: str) -> str:
    """Blocks that may only be text (a system prompt) -> one string."""
    parts = []
    for i, block in enumerate(blocks):
        where = f"{param}[{i}]" if param == "system" else f"{param}.content[{i}]"
        kind = _block_type(block, where)
        if kind != "text":
            raise RequestError(f'{where} is a "{kind}" block; {what} takes text blocks only.',
                               where)
        parts.append(_text_of(block, where))
    return "\n\n".join(parts)


def _messages(value: Any, out: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The turns, translated and appended to ``out`` (which holds the system prompt, if any)."""
    if not isinstance(value, list) or not value:
        raise RequestError('"messages" must be a non-empty list of {"role", "content"} objects.',
                           "messages")
    for i, message in enumerate(value):
        param = f"messages[{i}]"
        if not isinstance(message, dict):
            raise RequestError(f'{param} must be an object with "role" and "content".', param)
        blocks = _content_blocks(message.get("content"), f"{param}.content")
        role = message.get("role")
        if role == "user":
            turn = _user(blocks, param)
        elif role == "assistant":
            turn = [_assistant(blocks, param)]
        elif role == "system":  # newer SDKs let system instructions sit among the turns
            turn = [{"role": "system", "content": _texts(blocks, param, "a system message")}]
        else:
            raise RequestError(f'{param}.role must be "user", "assistant" or "system".',
                               f"{param}.role")
        for one in turn:
            _append(out, one)
    return out


def _append(out: list[dict[str, Any]], message: dict[str, Any]) -> None:
    """Add a message, joining it to the last one of the same role: Anthropic combines
    consecutive turns of one role, and many chat templates refuse two in a row."""
    last = out[-1] if out else None
    if last is None or last["role"] != message["role"] or message["role"] == "tool":
        out.append(message)
        return
    last["content"] = "\n\n".join(t for t in (last["content"], message["content"]) if t)
    if message.get("tool_calls"):
        last["tool_calls"] = [*last.get("tool_calls", []), *message["tool_calls"]]


def _content_blocks(value: Any, param: str) -> list[dict[str, Any]]:
    if isinstance(value, str):
        return [{"type": "text", "text": value}]
    if isinstance(value, list):
        return value
    raise RequestError(f"{param} must be a string or a list of content blocks.", param)


def _user(blocks: list[Any], param: str) -> list[dict[str, Any]]:
    """One Anthropic user turn -> OpenAI "tool" messages (one per tool_result), then the text."""
    results: list[dict[str, Any]] = []
    texts: list[str] = []
    parts: list[dict[str, Any]] = []  # text and images in order, where there are images
    for i, block in enumerate(blocks):
        where = f"{param}.content[{i}]"
        kind = _block_type(block, where)
        if kind == "text":
            texts.append(_text_of(block, where))
            parts.append({"type": "text", "text": texts[-1]})
        elif kind == "image":
            parts.append(_image(block, where))
        elif kind == "tool_result":
            results.append(_tool_result(block, where))
        elif kind == "tool_use":
            raise RequestError(f"{where} is a tool_use block in a user turn; tool calls belong to "
                               "assistant turns.", where)
        else:
            _refuse(kind, where)
    # Chat templates expect tool messages right after the assistant's calls, so the results go
    # first even if a client put text ahead of them (Anthropic itself asks for results first).
    out = results
    if len(parts) > len(texts):  # images: the parts as they came (the runner says if it sees)
        out.append({"role": "user", "content": parts})
    elif texts or not results:
        out.append({"role": "user", "content": "\n\n".join(texts)})
    return out


def _image(block: dict[str, Any], param: str) -> dict[str, Any]:
    """An image block as Chat Completions' image_url part: base64 data as a data URL, a URL as
    it is (the runner fetches links only where the person allowed it)."""
    source = block.get("source")
    kind = source.get("type") if isinstance(source, dict) else None
    if kind == "base64" and isinstance(source, dict):
        media, data = source.get("media_type"), source.get("data")
        if not isinstance(media, str) or not isinstance(data, str):
            raise RequestError(f"{param}.source needs media_type and data strings.",
                               f"{param}.source")
        return {"type": "image_url", "image_url": {"url": f"data:{media};base64,{data}"}}
    if kind == "url" and isinstance(source, dict) and isinstance(source.get("url"), str):
        return {"type": "image_url", "image_url": {"url": source["url"]}}
    raise RequestError(f'{param}.source must be {{"type": "base64", ...}} or {{"type": "url", '
                       "...}.", f"{param}.source")


def _tool_result(block: dict[str, Any], param: str) -> dict[str, Any]:
    call_id = block.get("tool_use_id")
    if not isinstance(call_id, str) or not call_id:
        raise RequestError(f"{param}.tool_use_id must name the tool_use block it answers.",
                           f"{param}.tool_use_id")
    content = block.get("content")
    if content is None:
        text = ""
    elif isinstance(content, str):
        text = content
    elif isinstance(content, list):
        parts = []
        for i, inner in enumerate(content):
            where = f"{param}.content[{i}]"
            kind = _block_type(inner, where)
            if kind != "text":
                _refuse(kind, where)
            parts.append(_text_of(inner, where))
        text = "\n\n".join(parts)
    else:
        raise RequestError(f"{param}.content must be a string or a list of text blocks.",
                           f"{param}.content")
    is_error = block.get("is_error", False)
    if not isinstance(is_error, bool):
        raise RequestError(f"{param}.is_error must be true or false.", f"{param}.is_error")
    if is_error:
        # OpenAI's tool message has no error flag: the model learns it from the words.
        text = f"Error: {text}"
    return {"role": "tool", "tool_call_id": call_id, "content": text}


def _assistant(blocks: list[Any], param: str) -> dict[str, Any]:
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    for i, block in enumerate(blocks):
        where = f"{param}.content[{i}]"
        kind = _block_type(block, where)
        if kind == "text":
            texts.append(_text_of(block, where))
        elif kind == "tool_use":
            calls.append(_tool_call(block, where))
        elif kind == "tool_result":
            raise RequestError(f"{where} is a tool_result block in an assistant turn; tool results "
                               "belong to user turns.", where)
        elif kind not in _DROPPED_BLOCKS:
            _refuse(kind, where)
    # "" rather than null beside tool calls: some chat templates concatenate content unguarded.
    message: dict[str, Any] = {"role": "assistant", "content": "\n\n".join(texts)}
    if calls:
        message["tool_calls"] = calls
    return message


def _tool_call(block: dict[str, Any], param: str) -> dict[str, Any]:
    call_id, name, args = block.get("id"), block.get("name"), block.get("input", {})
    if not isinstance(call_id, str) or not call_id:
        raise RequestError(f"{param}.id must be the tool call's id (a string).", f"{param}.id")
    if not isinstance(name, str) or not name:
        raise RequestError(f"{param}.name must be the tool's name (a string).", f"{param}.name")
    if not isinstance(args, dict):
        raise RequestError(f"{param}.input must be a JSON object.", f"{param}.input")
    return {"id": call_id, "type": "function",
            "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)}}


def _block_type(block: Any, param: str) -> str:
    if not isinstance(block, dict):
        raise RequestError(f'{param} must be a content block (an object with a "type").', param)
    kind = block.get("type")
    if not isinstance(kind, str):
        raise RequestError(f'{param}.type must be a string such as "text".', f"{param}.type")
    return kind


def _text_of(block: dict[str, Any], param: str) -> str:
    text = block.get("text")
    if not isinstance(text, str):
        raise RequestError(f"{param}.text must be a string.", f"{param}.text")
    return text


def _refuse(kind: str, param: str) -> None:
    if kind in _MEDIA_BLOCKS:
        raise RequestError(f'{param} is an "{kind}" block, which this server does not take '
                           "here: it takes text, and images in user turns (for a model that "
                           "sees them). Send a document's content as text.", param)
    raise RequestError(f'{param} has the block type "{kind}", which this server does not take '
                       "here; it takes text, tool_use (assistant) and tool_result (user) blocks.",
                       param)


def _sampling(body: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in ("temperature", "top_p"):
        value = body.get(name)
        if value is None:
            continue
        if not _is_number(value):
            raise RequestError(f'"{name}" must be a number.', name)
        out[name] = value
    top_k = body.get("top_k")
    if top_k is not None:
        if not _is_int(top_k):
            raise RequestError('"top_k" must be a whole number.', "top_k")
        out["top_k"] = top_k
    stops = body.get("stop_sequences")
    if stops is not None:
        if not isinstance(stops, list) or not all(isinstance(s, str) for s in stops):
            raise RequestError('"stop_sequences" must be a list of strings.', "stop_sequences")
        if stops:
            out["stop"] = list(stops)
    return out


def _tools(value: Any) -> list[dict[str, Any]]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise RequestError('"tools" must be a list of {"name", "description", "input_schema"}.',
                           "tools")
    out = []
    for i, tool in enumerate(value):
        param = f"tools[{i}]"
        if not isinstance(tool, dict):
            raise RequestError(f"{param} must be an object.", param)
        kind = tool.get("type")
        if kind not in (None, "custom"):
            # bash_*, text_editor_*, web_search_* ...: their schemas live in Anthropic's models.
            raise RequestError(f'{param} is Anthropic\'s built-in "{kind}" tool, which a local '
                               "model does not know; describe it as a custom tool (name, "
                               "description, input_schema) instead.", param)
        name, description = tool.get("name"), tool.get("description")
        schema = tool.get("input_schema")
        if not isinstance(name, str) or not name:
            raise RequestError(f"{param}.name must be the tool's name (a string).", f"{param}.name")
        if description is not None and not isinstance(description, str):
            raise RequestError(f"{param}.description must be a string.", f"{param}.description")
        if not isinstance(schema, dict):
            raise RequestError(f"{param}.input_schema must be a JSON schema object.",
                               f"{param}.input_schema")
        function: dict[str, Any] = {"name": name, "parameters": schema}
        if description:
            function["description"] = description
        out.append({"type": "function", "function": function})
    return out


def _tool_choice(value: Any) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise RequestError('"tool_choice" must be an object such as {"type": "auto"}.',
                           "tool_choice")
    kind = value.get("type")
    out: dict[str, Any]
    if kind == "auto":
        out = {"tool_choice": "auto"}
    elif kind == "any":
        out = {"tool_choice": "required"}
    elif kind == "none":
        out = {"tool_choice": "none"}
    elif kind == "tool":
        name = value.get("name")
        if not isinstance(name, str) or not name:
            raise RequestError('"tool_choice" of type "tool" needs "name": the tool to call.',
                               "tool_choice.name")
        out = {"tool_choice": {"type": "function", "function": {"name": name}}}
    else:
        raise RequestError('"tool_choice.type" must be "auto", "any", "tool" or "none".',
                           "tool_choice.type")
    serial = value.get("disable_parallel_tool_use")
    if serial is not None:
        if not isinstance(serial, bool):
            raise RequestError('"tool_choice.disable_parallel_tool_use" must be true or false.',
                               "tool_choice.disable_parallel_tool_use")
        out["parallel_tool_calls"] = not serial
    return out


def _output_format(body: dict[str, Any]) -> dict[str, Any] | None:
    """Structured outputs: ``output_config.format`` (or the beta's top-level ``output_format``)."""
    config = body.get("output_config")
    if config is not None and not isinstance(config, dict):
        raise RequestError('"output_config" must be an object.', "output_config")
    fmt, param = (config or {}).get("format"), "output_config.format"
    if fmt is None:
        fmt, param = body.get("output_format"), "output_format"
    if fmt is None:
        return None
    if not isinstance(fmt, dict) or fmt.get("type") != "json_schema" \
            or not isinstance(fmt.get("schema"), dict):
        raise RequestError(f'"{param}" must be {{"type": "json_schema", "schema": {{...}}}}.',
                           param)
    return {"type": "json_schema",
            "json_schema": {"name": "output", "schema": fmt["schema"], "strict": True}}


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


# ---- reply: OpenAI -> Anthropic ----------------------------------------------------------------

def reply(chat: dict[str, Any], model: str) -> dict[str, Any]:
    """An OpenAI chat.completion (non-streaming) -> an Anthropic Message."""
    choices = chat.get("choices")
    choice = choices[0] if isinstance(choices, list) and choices \
        and isinstance(choices[0], dict) else {}
    message = choice.get("message")
    message = message if isinstance(message, dict) else {}
    content: list[dict[str, Any]] = []
    text = message.get("content")
    if isinstance(text, str) and text:
        content.append({"type": "text", "text": text})
    calls = message.get("tool_calls")
    calls = [c for c in calls if isinstance(c, dict)] if isinstance(calls, list) else []
    for call in calls:
        content.extend(_tool_use_blocks(call))
    usage = _usage(chat.get("usage"))
    return {"id": _message_id(), "type": "message", "role": "assistant", "model": model,
            "content": content, "stop_reason": _stop_reason(choice.get("finish_reason"),
                                                            bool(calls)),
            "stop_sequence": None,
            "usage": {"input_tokens": usage[0] or 0, "output_tokens": usage[1] or 0}}


def _tool_use_blocks(call: dict[str, Any]) -> list[dict[str, Any]]:
    function = call.get("function")
    function = function if isinstance(function, dict) else {}
    name = function.get("name") if isinstance(function.get("name"), str) else ""
    raw = function.get("arguments")
    args = _arguments(raw)
    block = {"type": "tool_use", "id": _call_id(call.get("id")), "name": name,
             "input": args if args is not None else {}}
    if args is not None:
        return [block]
    shown = raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False)
    note = {"type": "text", "text": f"(The model called the tool {name!r} with arguments that are "
                                    f"not a JSON object, so its input is empty. It wrote: {shown})"}
    return [note, block]


def _arguments(raw: Any) -> dict[str, Any] | None:
    """OpenAI's JSON-text arguments -> the object Anthropic's input is; None if there is none."""
    if isinstance(raw, dict):  # some servers send the object itself
        return raw
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return {}  # a call without arguments
    if not isinstance(raw, str):
        return None
    try:
        value = json.loads(raw)
        if isinstance(value, str):  # arguments encoded twice, as some models write them
            value = json.loads(value)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _stop_reason(finish: Any, called: bool) -> str:
    if finish == "length":
        return "max_tokens"
    if called or finish in ("tool_calls", "function_call"):
        return "tool_use"
    if finish == "content_filter":
        return "refusal"
    return "end_turn"


def _usage(usage: Any) -> tuple[int | None, int | None]:
    """(input, output) token counts from OpenAI's usage; None where it does not say."""
    if not isinstance(usage, dict):
        return None, None
    prompt, completion = usage.get("prompt_tokens"), usage.get("completion_tokens")
    return (prompt if _is_int(prompt) else None, completion if _is_int(completion) else None)


def _message_id() -> str:
    return f"msg_{uuid.uuid4().hex}"


def _call_id(value: Any) -> str:
    # The runner's id is kept: the client sends it back as tool_use_id with the result.
    return value if isinstance(value, str) and value else f"toolu_{uuid.uuid4().hex}"


# ---- streaming ---------------------------------------------------------------------------------

def _frame(event: dict[str, Any]) -> bytes:
    data = json.dumps(event, ensure_ascii=False, separators=(",", ":"))
    return f"event: {event['type']}\ndata: {data}\n\n".encode()


@dataclass
class _Call:
    """One OpenAI tool call being streamed: its block index once its name is known."""

    id: str = ""
    name: str = ""
    block: int | None = None
    pending: list[str] = field(default_factory=list)  # arguments that came before the name


class StreamTranslator:
    """OpenAI chat.completion.chunk objects -> Anthropic's stream events, in Anthropic's order:
    message_start, ping, (content_block_start, content_block_delta..., content_block_stop)...,
    message_delta, message_stop."""

    def __init__(self, model: str) -> None:
        self._model = model
        self._id = _message_id()
        self._started = False
        self._ended = False
        self._blocks = 0  # the next block's index
        self._open: int | None = None  # the index of the block open now
        self._open_text = False
        self._calls: dict[int, _Call] = {}
        self._finish: Any = None
        self._input_tokens: int | None = None
        self._output_tokens: int | None = None

    def feed(self, chunk: dict[str, Any]) -> list[bytes]:
        """One parsed OpenAI chat.completion.chunk -> zero or more SSE frames."""
        if self._ended or not isinstance(chunk, dict):
            return []
        error = chunk.get("error")
        if error is not None:  # the runner's mid-stream failure arrives as a data line
            message = error.get("message") if isinstance(error, dict) else None
            return self.fail(message if isinstance(message, str) else "The model failed.")
        frames = self._start()
        input_tokens, output_tokens = _usage(chunk.get("usage"))
        self._input_tokens = input_tokens if input_tokens is not None else self._input_tokens
        self._output_tokens = output_tokens if output_tokens is not None else self._output_tokens
        choices = chunk.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            return frames
        choice = choices[0]
        delta = choice.get("delta")
        if isinstance(delta, dict):
            text = delta.get("content")
            if isinstance(text, str) and text:
                frames += self._text(text)
            calls = delta.get("tool_calls")
            for call in calls if isinstance(calls, list) else []:
                if isinstance(call, dict):
                    frames += self._tool_delta(call)
        if choice.get("finish_reason") is not None:
            self._finish = choice["finish_reason"]
        return frames

    def finish(self) -> list[bytes]:
        """The upstream stream ended: close the open block, then message_delta and message_stop."""
        if self._ended:
            return []
        frames = self._start()
        for call in self._calls.values():
            if call.block is None:  # a call whose name never came: its arguments still count
                frames += self._open_tool(call)
        frames += self._close()
        self._ended = True
        usage: dict[str, int] = {"output_tokens": self._output_tokens or 0}
        if self._input_tokens is not None:
            # message_start went out before the runner counted the prompt; the SDK takes this.
            usage["input_tokens"] = self._input_tokens
        stop_reason = _stop_reason(self._finish, bool(self._calls))
        frames.append(_frame({"type": "message_delta",
                              "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                              "usage": usage}))
        frames.append(_frame({"type": "message_stop"}))
        return frames

    def fail(self, message: str) -> list[bytes]:
        """The upstream failed mid-stream: Anthropic's error event (the SDK raises on it)."""
        if self._ended:
            return []
        self._ended = True
        return [_frame({"type": "error", "error": {"type": "api_error", "message": message}})]

    def _start(self) -> list[bytes]:
        if self._started:
            return []
        self._started = True
        message: dict[str, Any] = {
            "id": self._id, "type": "message", "role": "assistant", "model": self._model,
            "content": [], "stop_reason": None, "stop_sequence": None,
            "usage": {"input_tokens": 0, "output_tokens": 0}}
        return [_frame({"type": "message_start", "message": message}), _frame({"type": "ping"})]

    def _text(self, text: str) -> list[bytes]:
        frames = []
        if not self._open_text:
            frames = self._close()
            self._open, self._open_text = self._new_block(), True
            frames.append(_frame({"type": "content_block_start", "index": self._open,
                                  "content_block": {"type": "text", "text": ""}}))
        frames.append(_frame({"type": "content_block_delta", "index": self._open,
                              "delta": {"type": "text_delta", "text": text}}))
        return frames

    def _tool_delta(self, delta: dict[str, Any]) -> list[bytes]:
        call = self._calls.setdefault(self._call_index(delta), _Call())
        call_id = delta.get("id")
        if isinstance(call_id, str) and call_id and not call.id:
            call.id = call_id
        function = delta.get("function")
        function = function if isinstance(function, dict) else {}
        name, args = function.get("name"), function.get("arguments")
        if call.block is None and isinstance(name, str):
            call.name += name
        if isinstance(args, str) and args:
            call.pending.append(args)
        if call.block is None:
            # content_block_start must carry the name, so arguments wait until it comes.
            return self._open_tool(call) if call.name else []
        return self._flush_args(call)

    def _call_index(self, delta: dict[str, Any]) -> int:
        index = delta.get("index")
        if isinstance(index, int) and not isinstance(index, bool):
            return index
        # No index (not OpenAI's way, but seen): a new id starts a new call, else the last goes on.
        call_id = delta.get("id")
        known = any(c.id == call_id for c in self._calls.values())
        if not self._calls or (isinstance(call_id, str) and call_id and not known):
            return max(self._calls, default=-1) + 1
        return max(self._calls)

    def _open_tool(self, call: _Call) -> list[bytes]:
        frames = self._close()
        call.id = _call_id(call.id)
        call.block = self._open = self._new_block()
        self._open_text = False
        frames.append(_frame({"type": "content_block_start", "index": call.block,
                              "content_block": {"type": "tool_use", "id": call.id,
                                                "name": call.name, "input": {}}}))
        return frames + self._flush_args(call)

    def _flush_args(self, call: _Call) -> list[bytes]:
        if not call.pending or call.block is None:
            return []
        partial, call.pending = "".join(call.pending), []
        # A call's block is normally the open one. If a stream interleaved two calls, the late
        # arguments still go to their own index: the SDK files deltas by index, nothing is lost.
        return [_frame({"type": "content_block_delta", "index": call.block,
                        "delta": {"type": "input_json_delta", "partial_json": partial}})]

    def _new_block(self) -> int:
        index, self._blocks = self._blocks, self._blocks + 1
        return index

    def _close(self) -> list[bytes]:
        if self._open is None:
            return []
        index, self._open, self._open_text = self._open, None, False
        return [_frame({"type": "content_block_stop", "index": index})]


# ---- errors ------------------------------------------------------------------------------------

_ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error",
                403: "permission_error", 404: "not_found_error", 413: "request_too_large",
                429: "rate_limit_error", 503: "overloaded_error", 504: "timeout_error",
                529: "overloaded_error"}


def error_body(status: int, message: str, code: str | None = None) -> dict[str, Any]:
    """Anthropic's error shape for an HTTP error; ``code`` (e.g. "insufficient_memory") rides
    along in the error object, where Anthropic's clients ignore it and people can read it."""
    kind = _ERROR_TYPES.get(status) or ("invalid_request_error" if 400 <= status < 500
                                        else "api_error")
    error: dict[str, Any] = {"type": kind, "message": message}
    if code:
        error["code"] = code
    return {"type": "error", "error": error}
