"""The Ollama API subset that clients use, over the OpenAI APIs each model's runner speaks.

/api/chat and /api/generate become OpenAI Chat Completions (or Completions for ``raw``),
/api/embed becomes OpenAI Embeddings, and the replies and streams come back in Ollama's shapes:
NDJSON lines, one JSON object each, the last with ``"done": true`` and the counts and durations
(nanoseconds) that Ollama clients show as tokens per second. /api/tags, /api/ps, /api/show and
/api/version are made from plain dicts the server passes, one per library model:

    {"name": str, "size": int, "modified": float (unix time), "digest": str | None (sha256 hex),
     "family": str | None, "parameter_size": str | None, "quantization": str | None,
     "context": int | None (tokens), "loaded": bool, "expires_at": float | None (unix time;
     None: never, as for a pinned model), "size_vram": int}

Pure: standard library only. The server owns HTTP, model names, limits and timing; this module
owns the shapes, and checks the type of every field it reads from a request body.
"""
from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from server.request_error import RequestError

# Clients that check the server's version compare it with a minimum: VS Code's Copilot refuses
# anything below 0.6.4 (the release whose /api/show reports "capabilities", which show() does).
# 0.8.0 is where Ollama began streaming tool calls, which this module does; 0.9.0 added "think",
# which it does not, so a client that gates thinking on the version will not ask for it.
OLLAMA_VERSION = "0.8.0"

# What /api/ps says for a model that never expires (pinned, or keep_alive -1): Ollama itself
# reports a time centuries ahead, and clients show such a date as "forever".
_FOREVER = "9999-12-31T23:59:59Z"

# Go duration units (time.ParseDuration), which Ollama's keep_alive strings use, in seconds.
_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0,
          "h": 3600.0}
_NUMBER = r"(?:\d+(?:\.\d*)?|\.\d+)"
_PART = re.compile(rf"({_NUMBER})(ns|us|µs|μs|ms|s|m|h)")
_DURATION = re.compile(rf"(?:{_NUMBER}(?:ns|us|µs|μs|ms|s|m|h))+")

# Ollama's sampling options that the runner takes under the same OpenAI-side name.
_FLOAT_OPTIONS = ("temperature", "top_p", "min_p", "repeat_penalty", "presence_penalty",
                  "frequency_penalty")
_INT_OPTIONS = ("top_k", "seed")


# ---- reading request fields --------------------------------------------------------------------

def _kind(value: Any) -> str:
    """A JSON type name for error messages ("a list", "a number")."""
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN or Infinity"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    return "an object" if isinstance(value, dict) else type(value).__name__


def _wrong(where: str, what: str, value: Any) -> RequestError:
    return RequestError(f"'{where}' must be {what}, not {_kind(value)}.", param=where)


def _str(obj: dict[str, Any], key: str, where: str = "") -> str | None:
    value = obj.get(key)
    if value is None or isinstance(value, str):
        return value
    raise _wrong(where + key, "a string", value)


def _bool(obj: dict[str, Any], key: str, where: str = "") -> bool | None:
    value = obj.get(key)
    if value is None or isinstance(value, bool):
        return value
    raise _wrong(where + key, "true or false", value)


def _int(obj: dict[str, Any], key: str, where: str = "") -> int | None:
    value = obj.get(key)
    # bool is an int in Python, never in JSON.
    if value is None or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    raise _wrong(where + key, "a whole number", value)


def _number(obj: dict[str, Any], key: str, where: str = "") -> float | None:
    value = obj.get(key)
    if value is None:
        return None
    if isinstance(value, int | float) and not isinstance(value, bool):
        try:
            number = float(value)
        except OverflowError:  # a JSON integer past a float's range
            number = math.inf
        if math.isfinite(number):
            return number
    raise _wrong(where + key, "a number", value)


def _dict(obj: dict[str, Any], key: str, where: str = "") -> dict[str, Any] | None:
    value = obj.get(key)
    if value is None or isinstance(value, dict):
        return value
    raise _wrong(where + key, "an object", value)


def _list(obj: dict[str, Any], key: str, where: str = "") -> list[Any] | None:
    value = obj.get(key)
    if value is None or isinstance(value, list):
        return value
    raise _wrong(where + key, "a list", value)


def _model(body: dict[str, Any]) -> str:
    if not isinstance(body, dict):
        raise RequestError("The request body must be a JSON object.")
    model = _str(body, "model")
    if not model:
        raise RequestError("'model' is required: name the model to use, as /api/tags lists it.",
                           param="model")
    return model


def _images(obj: dict[str, Any], where: str = "") -> list[dict[str, Any]]:
    """Ollama's ``images`` (base64, no data-URL prefix) as Chat's image_url parts. The format
    is read from the data's first bytes for the data URL; the runner checks it again (and says
    whether the model sees images at all)."""
    out = []
    for i, image in enumerate(_list(obj, "images", where) or []):
        if not isinstance(image, str) or not image:
            raise RequestError(f"'{where}images[{i}]' must be a base64 string.",
                               param=f"{where}images")
        head = image[:16]
        mime = "image/png" if head.startswith("iVBOR") else \
            "image/jpeg" if head.startswith("/9j/") else "application/octet-stream"
        out.append({"type": "image_url", "image_url": {"url": f"data:{mime};base64,{image}"}})
    return out


def _with_images(content: str, images: list[dict[str, Any]]) -> str | list[dict[str, Any]]:
    return [*images, {"type": "text", "text": content}] if images else content


def _refuse_think(body: dict[str, Any]) -> None:
    think = body.get("think")
    if think is None or think is False:
        return
    if not isinstance(think, bool | str):
        raise _wrong("think", "true, false or a level", think)
    raise RequestError("'think' is not supported by this server: send the request without it.",
                       param="think")


def _stream(body: dict[str, Any]) -> bool:
    # Ollama streams unless told not to: an absent (or null) "stream" means true.
    stream = _bool(body, "stream")
    return True if stream is None else stream


def _streaming_fields(stream: bool) -> dict[str, Any]:
    # The usage chunk carries the counts that Ollama's closing line reports.
    return {"stream": True, "stream_options": {"include_usage": True}} if stream \
        else {"stream": False}


# ---- keep_alive and num_ctx: hints the server acts on ------------------------------------------

def keep_alive_seconds(value: Any) -> float | None:
    """Ollama's ``keep_alive`` -> seconds: None when not given, 0 to unload at once, math.inf
    to keep the model forever (any negative value, as in Ollama). Takes a number of seconds or a
    Go duration string ("5m", "1h30m", "0", "-1"); raises RequestError on anything else."""
    if value is None:
        return None
    if isinstance(value, int | float) and not isinstance(value, bool):
        # JSON integers have no size limit: one past a float's range is "longer than ever".
        if isinstance(value, int) and abs(value) > 2**63:
            return math.inf
        return _seconds(float(value))
    if isinstance(value, str):
        return _seconds(_parse_duration(value.strip()))
    raise _wrong("keep_alive", 'a number of seconds or a duration such as "5m"', value)


def _seconds(value: float) -> float:
    if math.isnan(value):
        raise RequestError("'keep_alive' is not a number of seconds.", param="keep_alive")
    return math.inf if value < 0 else value


def _parse_duration(text: str) -> float:
    sign = -1.0 if text.startswith("-") else 1.0
    rest = text[1:] if text[:1] in ("+", "-") else text
    if re.fullmatch(_NUMBER, rest):
        # A bare number: seconds (Go would want a unit; clients send "300" and mean seconds).
        return sign * float(rest)
    if not _DURATION.fullmatch(rest):
        raise RequestError(f"'keep_alive' {text!r} is not a duration: use seconds (300) or a "
                           'duration such as "5m", "1h", "0" (unload now) or "-1" (forever).',
                           param="keep_alive")
    return sign * sum(float(n) * _UNITS[unit] for n, unit in _PART.findall(rest))


def wanted_context(body: dict[str, Any]) -> int | None:
    """The context length (tokens) the request asks for in ``options.num_ctx``, or None. The
    model's runner keeps its own context; the server may use this to load a larger one."""
    options = _dict(body, "options") if isinstance(body, dict) else None
    if not options:
        return None
    num_ctx = _int(options, "num_ctx", "options.")
    if num_ctx is not None and num_ctx <= 0:
        raise RequestError("'options.num_ctx' must be a positive number of tokens.",
                           param="options.num_ctx")
    return num_ctx


def is_load_only(body: dict[str, Any]) -> bool:
    """The request only asks to load the model (Ollama's way: /api/generate with an empty prompt,
    /api/chat with no messages, /api/embed with empty input); the server loads (or, with
    keep_alive 0, unloads) and answers with load_reply(). A body of the wrong types is not
    load-only: the request functions then say what is wrong."""
    if not isinstance(body, dict):
        return False
    if "input" in body:
        return body["input"] in ("", [])
    return (body.get("messages") in (None, []) and body.get("prompt") in (None, "")
            and body.get("images") in (None, []))


def load_reply(model: str, *, chat: bool, unload: bool = False) -> dict[str, Any]:
    """Ollama's answer to a load-only request: /api/chat's shape when ``chat``, else
    /api/generate's."""
    out: dict[str, Any] = {"model": model, "created_at": _now()}
    if chat:
        out["message"] = {"role": "assistant", "content": ""}
    else:
        out["response"] = ""
    out.update(done=True, done_reason="unload" if unload else "load")
    return out


# ---- /api/chat ---------------------------------------------------------------------------------

def chat_request(body: dict[str, Any]) -> dict[str, Any]:
    """An Ollama /api/chat body -> an OpenAI chat/completions request body."""
    model = _model(body)
    _refuse_think(body)
    keep_alive_seconds(body.get("keep_alive"))  # a garbage keep_alive is the request's error
    wanted_context(body)
    messages = _list(body, "messages")
    if not messages:
        raise RequestError("'messages' must hold at least one message (an empty list only loads "
                           "the model).", param="messages")
    out: dict[str, Any] = {"model": model, "messages": _messages(messages)}
    out.update(_streaming_fields(_stream(body)))
    tools = _list(body, "tools")
    if tools:
        out["tools"] = [_tool(f"tools[{i}].", t) for i, t in enumerate(tools)]
    choice = _tool_choice(_dict(body, "options") or {}, bool(tools))
    if choice:
        out["tool_choice"] = choice
    response_format = _response_format(body.get("format"))
    if response_format:
        out["response_format"] = response_format
    out.update(_sampling(_dict(body, "options") or {}))
    return out


class _CallIds:
    """Ids for tool calls and their results. Ollama has none (or, lately, optional ones), OpenAI
    requires them: they are invented in order, so the same conversation always gets the same
    ids (and a runner's prompt cache keeps its prefix), and a result names its call by
    ``tool_name``, else takes the oldest call still unanswered."""

    def __init__(self) -> None:
        self._next = 0
        self._pending: list[tuple[str, str]] = []  # (id, function name), oldest first

    def _new(self) -> str:
        self._next += 1
        return f"call_{self._next}"

    def call(self, given: str | None, name: str) -> str:
        call_id = given or self._new()
        self._pending.append((call_id, name))
        return call_id

    def result(self, given: str | None, name: str | None) -> str:
        if given:
            self._pending = [p for p in self._pending if p[0] != given]
            return given
        for i, (call_id, pending_name) in enumerate(self._pending):
            if name is None or pending_name == name:
                del self._pending[i]
                return call_id
        if self._pending:
            return self._pending.pop(0)[0]
        return self._new()  # a result of no call we saw: still needs an id of its own


def _messages(messages: list[Any]) -> list[dict[str, Any]]:
    ids = _CallIds()
    return [_message(f"messages[{i}].", m, ids) for i, m in enumerate(messages)]


def _message(where: str, message: Any, ids: _CallIds) -> dict[str, Any]:
    if not isinstance(message, dict):
        raise _wrong(where.rstrip("."), "an object", message)
    role = _str(message, "role", where)
    if role not in ("system", "user", "assistant", "tool"):
        raise RequestError(f"'{where}role' must be system, user, assistant or tool.",
                           param=where + "role")
    images = _images(message, where)
    # "thinking" on earlier assistant turns is dropped: chat templates leave it out anyway.
    content = _str(message, "content", where) or ""
    out: dict[str, Any] = {"role": role, "content": _with_images(content, images)}
    if role == "assistant":
        calls = _list(message, "tool_calls", where) or []
        if calls:
            out["tool_calls"] = [_history_call(f"{where}tool_calls[{i}].", c, ids)
                                 for i, c in enumerate(calls)]
    elif role == "tool":
        name = _str(message, "tool_name", where) or _str(message, "name", where)
        out["tool_call_id"] = ids.result(_str(message, "tool_call_id", where), name)
        if name:
            out["name"] = name  # some chat templates print the tool's name with its result
    return out


def _history_call(where: str, call: Any, ids: _CallIds) -> dict[str, Any]:
    """An assistant message's tool call as Ollama sends it -> OpenAI's, arguments as JSON text."""
    if not isinstance(call, dict):
        raise _wrong(where.rstrip("."), "an object", call)
    function = _dict(call, "function", where)
    name = _str(function, "name", where + "function.") if function else None
    if not function or not name:
        raise RequestError(f"'{where}function.name' is required.", param=where + "function.name")
    arguments = function.get("arguments")
    if arguments is None:
        text = "{}"
    elif isinstance(arguments, dict):
        text = json.dumps(arguments, ensure_ascii=False)
    elif isinstance(arguments, str) and isinstance(_json_object(arguments), dict):
        text = arguments
    else:
        raise _wrong(where + "function.arguments", "an object", arguments)
    call_id = ids.call(_str(call, "id", where), name)
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": text}}


def _tool(where: str, tool: Any) -> dict[str, Any]:
    """Ollama's tools are OpenAI's shape already: checked, and copied field by field."""
    if not isinstance(tool, dict):
        raise _wrong(where.rstrip("."), "an object", tool)
    kind = _str(tool, "type", where) or "function"
    if kind != "function":
        raise RequestError(f"'{where}type' must be \"function\": only function tools exist here.",
                           param=where + "type")
    function = _dict(tool, "function", where)
    name = _str(function, "name", where + "function.") if function else None
    if not function or not name:
        raise RequestError(f"'{where}function.name' is required.", param=where + "function.name")
    out: dict[str, Any] = {"name": name}
    description = _str(function, "description", where + "function.")
    if description is not None:
        out["description"] = description
    parameters = _dict(function, "parameters", where + "function.")
    if parameters is not None:
        out["parameters"] = parameters
    return {"type": "function", "function": out}


def _response_format(value: Any) -> dict[str, Any] | None:
    """Ollama's ``format``: "json" (any JSON object) or a JSON schema the reply must follow."""
    if value is None or value == "":
        return None
    if value == "json":
        return {"type": "json_object"}
    if isinstance(value, dict):
        return {"type": "json_schema", "json_schema": {"name": "response", "schema": value}}
    raise RequestError("'format' must be \"json\" or a JSON schema object.", param="format")


def _tool_choice(options: dict[str, Any], tools: bool) -> str | None:
    """``options.tool_choice``: Hearth's addition, OpenAI's values. Ollama's API has no way to
    make a model call a tool, which agents need (and a small model may never choose to); an
    Ollama client passes any option, so one that wants a call sends ``"required"``."""
    choice = options.get("tool_choice")
    if choice is None:
        return None
    if choice not in ("auto", "none", "required"):
        raise _wrong("options.tool_choice", '"auto", "none" or "required"', choice)
    if choice == "required" and not tools:
        raise RequestError("'options.tool_choice' is \"required\" but the request has no "
                           "tools: send the tools the model may call.", param="options.tool_choice")
    return str(choice)


def _sampling(options: dict[str, Any]) -> dict[str, Any]:
    """Ollama's ``options`` -> OpenAI sampling fields. Load-time options (num_ctx, num_gpu, ...)
    are the server's business, and options Ollama knows but the runner lacks are dropped, as
    Ollama drops the ones a model ignores. No "max_tokens" when num_predict asks for no limit."""
    out: dict[str, Any] = {}
    for key in _FLOAT_OPTIONS:
        if (number := _number(options, key, "options.")) is not None:
            out[key] = number
    for key in _INT_OPTIONS:
        if (whole := _int(options, key, "options.")) is not None:
            out[key] = whole
    if (max_tokens := _max_tokens(_int(options, "num_predict", "options."))) is not None:
        out["max_tokens"] = max_tokens
    stop = options.get("stop")
    if isinstance(stop, str):
        stop = [stop]
    if stop is not None:
        if not isinstance(stop, list) or not all(isinstance(s, str) for s in stop):
            raise _wrong("options.stop", "a list of strings", stop)
        if stop:
            out["stop"] = stop
    return out


def _max_tokens(num_predict: int | None) -> int | None:
    # Ollama: -1 generates until the model stops, -2 until the context is full; both are
    # OpenAI's "no limit".
    if num_predict is None or num_predict in (-1, -2):
        return None
    if num_predict <= 0:
        raise RequestError("'options.num_predict' must be a positive number of tokens, or -1 "
                           "for no limit.", param="options.num_predict")
    return num_predict


# ---- /api/generate -----------------------------------------------------------------------------

def generate_request(body: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """An Ollama /api/generate body -> ("chat", an OpenAI chat/completions body), the prompt
    and system prompt as messages (the runner applies the chat template, as Ollama does), or
    with ``raw`` ("completions", an OpenAI /v1/completions body, the prompt untouched)."""
    model = _model(body)
    _refuse_think(body)
    images = _images(body)
    keep_alive_seconds(body.get("keep_alive"))
    wanted_context(body)
    for key, why in (("suffix", "fill-in-the-middle is not supported"),
                     ("template", "the model's own chat template is always used"),
                     ("context", "send the conversation as messages to /api/chat")):
        value = body.get(key)
        if value not in (None, "", []):
            raise RequestError(f"'{key}' is not supported here: {why}.", param=key)
    prompt = _str(body, "prompt") or ""
    system = _str(body, "system")
    sampling = _sampling(_dict(body, "options") or {})
    if _bool(body, "raw"):
        if images:
            raise RequestError("'images' cannot go with 'raw': a raw prompt has no place for "
                               "them. Leave out 'raw'.", param="images")
        return "completions", _raw_request(body, model, prompt, system, sampling)
    messages: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    messages.append({"role": "user", "content": _with_images(prompt, images)})
    out: dict[str, Any] = {"model": model, "messages": messages}
    out.update(_streaming_fields(_stream(body)))
    response_format = _response_format(body.get("format"))
    if response_format:
        out["response_format"] = response_format
    out.update(sampling)
    return "chat", out


def _raw_request(body: dict[str, Any], model: str, prompt: str, system: str | None,
                 sampling: dict[str, Any]) -> dict[str, Any]:
    if system:
        raise RequestError("'system' has no place in a raw prompt: write it into 'prompt' "
                           "yourself, or leave out 'raw'.", param="system")
    if _response_format(body.get("format")):
        raise RequestError("'format' is not supported with 'raw': leave out 'raw' to get JSON "
                           "replies.", param="format")
    out: dict[str, Any] = {"model": model, "prompt": prompt}
    out.update(_streaming_fields(_stream(body)))
    # /v1/completions stops after 16 tokens unless told; Ollama runs to the end: null is
    # OpenAI's "no limit" (num_predict, when given, replaces it).
    out["max_tokens"] = None
    out.update(sampling)
    return out


# ---- /api/embed --------------------------------------------------------------------------------

def embed_request(body: dict[str, Any]) -> dict[str, Any]:
    """An Ollama /api/embed body -> an OpenAI embeddings body. ``truncate`` is checked but not
    applied: an input longer than the model's context gets the runner's 400, as with
    ``truncate: false``."""
    model = _model(body)
    keep_alive_seconds(body.get("keep_alive"))
    _bool(body, "truncate")
    _dict(body, "options")
    value = body.get("input")
    inputs = [value] if isinstance(value, str) else value
    if not isinstance(inputs, list) or not all(isinstance(s, str) for s in inputs):
        raise _wrong("input", "a string or a list of strings", value)
    if not inputs or inputs == [""]:
        raise RequestError("'input' is empty: give the text to embed (empty input only loads "
                           "the model).", param="input")
    out: dict[str, Any] = {"model": model, "input": inputs, "encoding_format": "float"}
    dimensions = _int(body, "dimensions")
    if dimensions is not None:
        if dimensions <= 0:
            raise RequestError("'dimensions' must be a positive number.", param="dimensions")
        out["dimensions"] = dimensions
    return out


def embed_reply(embeddings: dict[str, Any], model: str, *, elapsed_ns: int = 0,
                load_ns: int = 0) -> dict[str, Any]:
    """An OpenAI embeddings reply -> Ollama's /api/embed reply."""
    data = sorted(embeddings.get("data") or [], key=lambda d: int(d.get("index", 0)))
    usage = embeddings.get("usage") or {}
    return {"model": model, "embeddings": [[float(x) for x in d["embedding"]] for d in data],
            "total_duration": load_ns + elapsed_ns, "load_duration": load_ns,
            "prompt_eval_count": int(usage.get("prompt_tokens") or 0)}


# ---- replies -----------------------------------------------------------------------------------

def _now() -> str:
    return _rfc3339(time.time())


def _rfc3339(unix: float) -> str:
    if not math.isfinite(unix):
        return _FOREVER
    try:
        return datetime.fromtimestamp(unix, UTC).isoformat().replace("+00:00", "Z")
    except (OverflowError, OSError, ValueError):
        # Past the year 9999 (a keep_alive of 10**15 seconds): forever, as far as anyone can tell.
        return _FOREVER


def _done_reason(finish_reason: Any) -> str:
    # Ollama knows "stop" and "length"; a turn that ends in tool calls is a "stop" there.
    return "length" if finish_reason == "length" else "stop"


def _json_object(text: str) -> dict[str, Any] | None:
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _ollama_calls(calls: list[tuple[str | None, str, str]]) -> tuple[list[dict[str, Any]], str]:
    """Complete OpenAI tool calls (id, name, arguments text) -> Ollama's tool_calls, whose
    arguments are an object, and the text of any call whose arguments are not one: like Ollama,
    what does not parse as a call stays in the reply's text, so nothing the model said is lost."""
    out: list[dict[str, Any]] = []
    text = ""
    for call_id, name, arguments in calls:
        parsed = _json_object(arguments or "{}")
        if parsed is None:
            text += json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False)
            continue
        call: dict[str, Any] = {"function": {"index": len(out), "name": name,
                                             "arguments": parsed}}
        if call_id:
            call["id"] = call_id
        out.append(call)
    return out, text


def _counts(usage: Any) -> tuple[int, int]:
    if not isinstance(usage, dict):
        return 0, 0
    return int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)


def _timing(usage: Any, load_ns: int, prompt_ns: int, eval_ns: int) -> dict[str, Any]:
    prompt_tokens, completion_tokens = _counts(usage)
    return {"total_duration": load_ns + prompt_ns + eval_ns, "load_duration": load_ns,
            "prompt_eval_count": prompt_tokens, "prompt_eval_duration": prompt_ns,
            "eval_count": completion_tokens, "eval_duration": eval_ns}


def _choice(reply: dict[str, Any]) -> dict[str, Any]:
    choices = reply.get("choices") or [{}]
    first = choices[0]
    return first if isinstance(first, dict) else {}


def _message_calls(message: dict[str, Any]) -> list[tuple[str | None, str, str]]:
    calls = []
    for call in message.get("tool_calls") or []:
        function = call.get("function") or {}
        calls.append((call.get("id"), str(function.get("name") or ""),
                      str(function.get("arguments") or "")))
    return calls


def reply(chat: dict[str, Any], model: str, *, elapsed_ns: int = 0,
          load_ns: int = 0) -> dict[str, Any]:
    """An OpenAI chat.completion -> Ollama's /api/chat reply. ``elapsed_ns``: how long the
    generation took, ``load_ns``: how long loading the model for it took (0 if it was loaded).
    A whole reply has no first-token time to split at: all of it counts as generating."""
    choice = _choice(chat)
    message = choice.get("message") or {}
    calls, extra = _ollama_calls(_message_calls(message))
    out_message: dict[str, Any] = {"role": "assistant",
                                   "content": (message.get("content") or "") + extra}
    if calls:
        out_message["tool_calls"] = calls
    return {"model": model, "created_at": _now(), "message": out_message, "done": True,
            "done_reason": _done_reason(choice.get("finish_reason")),
            **_timing(chat.get("usage"), load_ns, 0, elapsed_ns)}


def generate_reply(chat_or_completion: dict[str, Any], model: str, *, elapsed_ns: int = 0,
                   load_ns: int = 0) -> dict[str, Any]:
    """An OpenAI chat.completion or text_completion -> Ollama's /api/generate reply."""
    choice = _choice(chat_or_completion)
    text = choice.get("text")
    if text is None:
        text = (choice.get("message") or {}).get("content")
    return {"model": model, "created_at": _now(), "response": text or "", "done": True,
            "done_reason": _done_reason(choice.get("finish_reason")),
            **_timing(chat_or_completion.get("usage"), load_ns, 0, elapsed_ns)}


def error_body(status: int, message: str, code: str | None = None) -> dict[str, Any]:
    """Ollama's error shape: {"error": message}. Ollama has no status or code fields; the HTTP
    status says the rest, and ``code`` has nowhere to go."""
    del status, code
    return {"error": message}


# ---- streams -----------------------------------------------------------------------------------

def _line(obj: dict[str, Any]) -> bytes:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def _upstream_message(error: Any) -> str:
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return str(error["message"])
    return str(error)


class _Stream:
    """OpenAI chunks -> Ollama NDJSON lines: the part both endpoints share. Tool calls are held
    until complete (Ollama sends whole calls), the finish reason and usage until the end, where
    one ``done`` line carries them with the durations measured here: prompt evaluation until the
    first text, generation after it."""

    def __init__(self, model: str, *, load_ns: int = 0,
                 clock: Callable[[], int] = time.monotonic_ns) -> None:
        self._model = model
        self._load_ns = load_ns
        self._clock = clock
        self._start = clock()
        self._first: int | None = None
        self._reason = "stop"
        self._usage: Any = None
        self._calls: dict[int, list[str]] = {}  # index -> [id, name, arguments so far]
        self._closed = False

    def _frame(self, text: str, calls: list[dict[str, Any]], done: bool) -> dict[str, Any]:
        raise NotImplementedError

    def feed(self, chunk: dict[str, Any]) -> list[bytes]:
        """One parsed OpenAI chat.completion.chunk (or text_completion chunk) -> lines."""
        if self._closed:
            return []
        if "error" in chunk:
            return self.fail(_upstream_message(chunk["error"]))
        if chunk.get("usage"):
            self._usage = chunk["usage"]
        choice = _choice(chunk)
        delta = choice.get("delta") or {}
        text = choice.get("text") if "text" in choice else delta.get("content")
        lines = []
        if text:
            if self._first is None:
                self._first = self._clock()
            lines.append(self._line(text, []))
        self._take_calls(delta.get("tool_calls") or [])
        if choice.get("finish_reason"):
            self._reason = _done_reason(choice["finish_reason"])
            lines += self._flush_calls()
        return lines

    def _take_calls(self, deltas: list[Any]) -> None:
        for position, delta in enumerate(deltas):
            if not isinstance(delta, dict):
                continue
            index = delta.get("index", position)
            call = self._calls.setdefault(index, ["", "", ""])
            function = delta.get("function") or {}
            call[0] = call[0] or delta.get("id") or ""
            call[1] += function.get("name") or ""
            call[2] += function.get("arguments") or ""

    def _flush_calls(self) -> list[bytes]:
        if not self._calls:
            return []
        pending = [(c[0] or None, c[1], c[2]) for _, c in sorted(self._calls.items())]
        self._calls = {}
        calls, text = _ollama_calls(pending)
        return [self._line(text, calls)]

    def _line(self, text: str, calls: list[dict[str, Any]]) -> bytes:
        head = {"model": self._model, "created_at": _now()}
        return _line({**head, **self._frame(text, calls, False), "done": False})

    def finish(self) -> list[bytes]:
        """The stream ended ([DONE]): any held tool calls, then the ``done`` line."""
        if self._closed:
            return []
        lines = self._flush_calls()
        self._closed = True
        end = self._clock()
        first = end if self._first is None else self._first
        done = {"model": self._model, "created_at": _now(), **self._frame("", [], True),
                "done": True, "done_reason": self._reason,
                **_timing(self._usage, self._load_ns, first - self._start, end - first)}
        return [*lines, _line(done)]

    def fail(self, message: str) -> list[bytes]:
        """The upstream failed mid-stream: Ollama's error line, which its clients raise."""
        if self._closed:
            return []
        self._closed = True
        return [_line({"error": message})]


class StreamTranslator(_Stream):
    """OpenAI chunks -> /api/chat's NDJSON lines ({"message": {...}, "done": false}, ...)."""

    def _frame(self, text: str, calls: list[dict[str, Any]], done: bool) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": text}
        if calls:
            message["tool_calls"] = calls
        return {"message": message}


class GenerateStreamTranslator(_Stream):
    """OpenAI chat or completion chunks -> /api/generate's NDJSON lines ({"response": text})."""

    def _frame(self, text: str, calls: list[dict[str, Any]], done: bool) -> dict[str, Any]:
        # /api/generate sends no tools, so no calls come back; any text stays.
        return {"response": text}


# ---- /api/tags, /api/ps, /api/show, /api/version -----------------------------------------------

def strip_latest(name: str) -> str:
    """A model name without Ollama's default tag: clients add ":latest" to names that have no
    tag, and the library knows the name without it."""
    return name.removesuffix(":latest")


def _ollama_name(name: str) -> str:
    # Ollama names always carry a tag; clients that split "name:tag" get the one they expect,
    # and the ":latest" they send back is stripped again by strip_latest().
    return name if ":" in name.rsplit("/", 1)[-1] else f"{name}:latest"


def _details(model: dict[str, Any]) -> dict[str, Any]:
    family = model.get("family")
    return {"parent_model": "", "format": "gguf", "family": family or "",
            "families": [family] if family else None,
            "parameter_size": model.get("parameter_size") or "",
            "quantization_level": model.get("quantization") or ""}


def _entry(model: dict[str, Any]) -> dict[str, Any]:
    name = _ollama_name(str(model["name"]))
    return {"name": name, "model": name, "size": int(model.get("size") or 0),
            "digest": model.get("digest") or "", "details": _details(model)}


def tags(models: list[dict[str, Any]]) -> dict[str, Any]:
    """/api/tags: every library model."""
    return {"models": [{**_entry(m), "modified_at": _rfc3339(float(m.get("modified") or 0))}
                       for m in models]}


def ps(models: list[dict[str, Any]]) -> dict[str, Any]:
    """/api/ps: the loaded models, with when each unloads and how much of it is in VRAM."""
    out = []
    for model in models:
        if not model.get("loaded"):
            continue
        expires = model.get("expires_at")
        entry = {**_entry(model),
                 "expires_at": _FOREVER if expires is None else _rfc3339(float(expires)),
                 "size_vram": int(model.get("size_vram") or 0)}
        if model.get("context"):
            entry["context_length"] = int(model["context"])
        out.append(entry)
    return {"models": out}


def _capabilities(template: str | None, vision: bool = False) -> list[str]:
    # Only what is known: every model completes text; tools where its chat template takes them
    # (Ollama's own test: the template uses "tools"); vision where a projector loads with it.
    # No "thinking" (think is refused), no "insert" (suffix is refused).
    found = ["completion"]
    if template and re.search(r"\btools\b", template):
        found.append("tools")
    if vision:
        found.append("vision")
    return found


def _model_info(model: dict[str, Any]) -> dict[str, Any]:
    # Clients read "<general.architecture>.context_length" for the context window.
    family = model.get("family")
    if not family:
        return {}
    info: dict[str, Any] = {"general.architecture": family}
    if model.get("context"):
        info[f"{family}.context_length"] = int(model["context"])
    return info


def show(model: dict[str, Any], template: str | None) -> dict[str, Any]:
    """/api/show for one library model; ``template``: its chat template, None if unknown. There
    is no Modelfile, license or parameter list to show: those are empty."""
    return {"license": "", "modelfile": "", "parameters": "", "template": template or "",
            "details": _details(model), "model_info": _model_info(model),
            "capabilities": _capabilities(template, bool(model.get("vision"))),
            "modified_at": _rfc3339(float(model.get("modified") or 0))}


def version() -> dict[str, Any]:
    """/api/version."""
    return {"version": OLLAMA_VERSION}
