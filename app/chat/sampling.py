"""A conversation's sampling settings and system prompt, and the model's own defaults (no Qt).

A :class:`Sampling` holds only what the user chose: ``None`` means "the model's default". The
runner does not read a GGUF's ``general.sampling.*`` keys itself (it starts from llama-server's
built-in values), so the defaults the settings panel shows are made true by sending them:
``sampling.to_params(model_defaults(metadata))`` fills every unset field from the file.

Stored settings come back through :meth:`ChatSettings.from_json`, which keeps what it understands
and drops the rest: a conversation saved by a later Hearth, or edited by hand, still opens.
"""

from __future__ import annotations

import json
import logging
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from app.i18n import T_

log = logging.getLogger(__name__)

SCHEMA_VERSION = 1


@dataclass(frozen=True)
class Field:
    """One sampling setting: its request name, kind, the range the runner accepts, and the GGUF
    key (``general.sampling.*``, llama.cpp's gguf-py names) a model file gives its default in."""

    name: str
    label: str
    kind: type  # int or float
    minimum: float
    maximum: float
    gguf_key: str | None
    help: str


# The ranges are the runner's own request validation (runner/server.py `_Sampling`), or tighter,
# so a stored value can never make a request the runner refuses.
FIELDS: tuple[Field, ...] = (
    Field("temperature", T_("Temperature"), float, 0.0, 5.0, "general.sampling.temp",
          T_("Higher is more varied, 0 always picks the most likely word.")),
    Field("top_p", T_("Top-p"), float, 0.0, 1.0, "general.sampling.top_p",
          T_("Pick only among the most likely words that together make up this share.")),
    Field("top_k", T_("Top-k"), int, 0, 1 << 20, "general.sampling.top_k",
          T_("Pick only among this many most likely words (0: no limit).")),
    Field("min_p", T_("Min-p"), float, 0.0, 1.0, "general.sampling.min_p",
          T_("Leave out words less likely than this share of the most likely one.")),
    Field("repeat_penalty", T_("Repeat penalty"), float, 0.0, 10.0, "general.sampling.penalty_repeat",
          T_("Above 1 makes repeating recent words less likely (1: off).")),
    Field("max_tokens", T_("Max tokens"), int, 1, 1 << 24, None,
          T_("Stop a reply after this many tokens (empty: Hearth's default; a larger number for "
             "longer replies).")),
    Field("seed", T_("Seed"), int, 0, 2**31 - 1, None,
          T_("The same seed, settings and conversation give the same reply (empty: random).")),
)
FIELD_BY_NAME: dict[str, Field] = {f.name: f for f in FIELDS}

# The fields a preset sets; max tokens and the seed are the user's, whatever the style.
STYLE_FIELDS = ("temperature", "top_p", "top_k", "min_p", "repeat_penalty")


@dataclass(frozen=True)
class Sampling:
    """The sampling settings of one conversation; ``None``: the model's default."""

    temperature: float | None = None
    top_p: float | None = None
    top_k: int | None = None
    min_p: float | None = None
    repeat_penalty: float | None = None
    max_tokens: int | None = None
    seed: int | None = None

    def over(self, defaults: Sampling) -> Sampling:
        """These settings with every unset field taken from ``defaults``."""
        return Sampling(**{f.name: v if (v := getattr(self, f.name)) is not None
                           else getattr(defaults, f.name) for f in FIELDS})

    def to_params(self, defaults: Sampling | None = None) -> dict[str, Any]:
        """The keyword arguments for ``RunnerClient.stream_chat`` (the runner's request names).

        Unset fields are filled from ``defaults`` (the model file's, :func:`model_defaults`);
        what is still unset is left out, so the runner uses its own default.
        """
        chosen = self.over(defaults) if defaults is not None else self
        return {f.name: v for f in FIELDS if (v := getattr(chosen, f.name)) is not None}

    def to_dict(self) -> dict[str, Any]:
        """The set fields, JSON-ready."""
        return self.to_params()

    @classmethod
    def from_dict(cls, data: Any) -> Sampling:
        """Settings from stored data; unknown keys and bad values are dropped, never raised."""
        if not isinstance(data, Mapping):
            return cls()
        values: dict[str, Any] = {}
        for f in FIELDS:
            if f.name in data:
                value = check(f, data[f.name])
                if value is None and data[f.name] is not None:
                    log.info("dropping stored %s=%r: not a valid value", f.name, data[f.name])
                values[f.name] = value
        return cls(**values)

    def is_default(self) -> bool:
        return self == Sampling()


def check(f: Field, value: Any) -> int | float | None:
    """``value`` as field ``f``'s kind if it is one and in range, else ``None``.

    Booleans are not numbers here (JSON ``true`` is no temperature). Floats are accepted for int
    fields only when whole; ints for float fields always.
    """
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, float):
        if not math.isfinite(value):
            return None
        if f.kind is int:
            if not value.is_integer():
                return None
            value = int(value)
    if not f.minimum <= value <= f.maximum:
        return None
    return int(value) if f.kind is int else float(value)


def parse(f: Field, text: str) -> int | float | None:
    """A value typed by the user: ``None`` for empty text (the default). A decimal comma is
    read as a point ("0,7" as in German is 0.7): the panel shows numbers in the locale's format.

    Raises ValueError, whose ``str()`` says the valid range, for text that is no valid value.
    """
    text = text.strip()
    if not text:
        return None
    if f.kind is float and text.count(",") == 1 and "." not in text:
        text = text.replace(",", ".")
    try:
        number: float = int(text) if f.kind is int else float(text)
    except ValueError:
        number = math.nan
    value = check(f, number)
    if value is None:
        low, high = show(f, f.minimum), show(f, f.maximum)
        raise ValueError(T_("{label} is a whole number from {low} to {high}.", label=f.label,
                            low=low, high=high) if f.kind is int else
                         T_("{label} is a number from {low} to {high}.", label=f.label, low=low,
                            high=high))
    return value


def show(f: Field, value: float | None) -> str:
    """A value as text in English ("0.7", "40"): messages, logs; the panel formats numbers for
    the locale itself."""
    if value is None:
        return ""
    if f.kind is int:
        return str(int(value))
    return f"{value:.6g}"


# ---- presets ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Preset:
    """A named style: the style fields it sets (``None``: the model's default)."""

    name: str
    sampling: Sampling

    def apply(self, current: Sampling) -> Sampling:
        """``current`` with this preset's style; max tokens and the seed are kept."""
        return replace(current, **{n: getattr(self.sampling, n) for n in STYLE_FIELDS})

    def matches(self, current: Sampling) -> bool:
        return all(getattr(self.sampling, n) == getattr(current, n) for n in STYLE_FIELDS)


PRESETS: tuple[Preset, ...] = (
    Preset(T_("Model default"), Sampling()),
    Preset(T_("Precise"), Sampling(temperature=0.2, top_p=0.9, top_k=40, min_p=0.05,
                               repeat_penalty=1.0)),
    Preset(T_("Balanced"), Sampling(temperature=0.7, top_p=0.95, top_k=40, min_p=0.05,
                                repeat_penalty=1.0)),
    Preset(T_("Creative"), Sampling(temperature=1.1, top_p=0.98, top_k=100, min_p=0.02,
                                repeat_penalty=1.05)),
)


def preset_of(sampling: Sampling) -> Preset | None:
    """The preset whose style ``sampling`` has, or None (custom settings)."""
    return next((p for p in PRESETS if p.matches(sampling)), None)


# ---- the model's defaults -----------------------------------------------------------------------

# What the runner samples with when neither the request nor the model says (llama-server's
# defaults, mirrored from runner/engine.py `Sampling`; the integration test checks they agree).
RUNNER_DEFAULTS = Sampling(temperature=0.8, top_p=0.95, top_k=40, min_p=0.05, repeat_penalty=1.0)

# The chat's own default length of a reply. Without one a base model (or a chat model that
# misses its end token) writes until the context is full: minutes of text before Stop. 2048
# tokens is some 1,500 words, longer than nearly every answer; a person who wants more sets
# it per conversation. The API keeps OpenAI's meaning (no max_tokens: until the end or the
# context): this applies to the app's chat only.
CHAT_MAX_TOKENS = 2048
CHAT_DEFAULTS = Sampling(max_tokens=CHAT_MAX_TOKENS)


def model_defaults(metadata: Mapping[str, Any]) -> Sampling:
    """The sampling defaults a GGUF's metadata names (``general.sampling.temp`` ...), over the
    chat's own (:data:`CHAT_DEFAULTS`).

    A value of the wrong type or out of range is ignored: a file is not trusted to make a
    request the runner refuses. Floats are rounded to 6 digits (GGUF stores float32, so 0.95
    arrives as 0.949999988...).
    """
    values: dict[str, Any] = {}
    for f in FIELDS:
        if f.gguf_key is None or f.gguf_key not in metadata:
            continue
        value = check(f, metadata[f.gguf_key])
        if value is None:
            log.info("ignoring %s=%r in the model file", f.gguf_key, metadata[f.gguf_key])
            continue
        values[f.name] = round(value, 6) if isinstance(value, float) else value
    return Sampling(**values).over(CHAT_DEFAULTS)


def read_model_defaults(path: str | os.PathLike[str]) -> Sampling:
    """The sampling defaults of a local model file; reads only its header (call it off the GUI
    thread). For a split model the first part's header holds them.

    Raises :class:`app.gguf.errors.GGUFError` for a file that cannot be read.
    """
    from app.gguf.model import read_header_file, split_paths

    first = split_paths(Path(path))[0]
    return model_defaults(read_header_file(first).metadata)


# ---- the conversation's settings ----------------------------------------------------------------

MAX_SYSTEM_PROMPT = 1 << 20  # characters: far beyond any context window, still a bounded load


@dataclass(frozen=True)
class ChatSettings:
    """What a conversation stores: its system prompt and its sampling settings."""

    system_prompt: str = ""
    sampling: Sampling = Sampling()

    def to_json(self) -> str:
        return json.dumps({"version": SCHEMA_VERSION, "system_prompt": self.system_prompt,
                           "sampling": self.sampling.to_dict()}, sort_keys=True)

    @classmethod
    def from_json(cls, text: str | bytes | Mapping[str, Any] | None) -> ChatSettings:
        """Settings from :meth:`to_json`'s text (or its parsed dict); anything unreadable gives
        the defaults for that part, never an error."""
        data: Any = text
        if isinstance(text, str | bytes):
            try:
                data = json.loads(text)
            except ValueError:
                log.info("stored chat settings are not JSON; using the defaults")
                return cls()
        if not isinstance(data, Mapping):
            return cls()
        prompt = data.get("system_prompt")
        if not isinstance(prompt, str):
            prompt = ""
        return cls(system_prompt=prompt[:MAX_SYSTEM_PROMPT],
                   sampling=Sampling.from_dict(data.get("sampling")))


# A conversation's thinking choice (in its settings): "" the model's default, "on"/"off" for a
# template with enable_thinking, "low"/"medium"/"high" for one with reasoning_effort.
THINKING = "thinking"
EFFORTS = ("low", "medium", "high")


def thinking_params(control: str, choice: str) -> dict[str, Any]:
    """The request parameters for ``choice`` on a model whose template has ``control``
    (app/loading/endpoint.py thinking_control): nothing when they do not match."""
    if control == "toggle" and choice in ("on", "off"):
        return {"chat_template_kwargs": {"enable_thinking": choice == "on"}}
    if control == "effort" and choice in EFFORTS:
        return {"reasoning_effort": choice}
    return {}


def fold_system(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages with a leading system message moved into the first user message.

    For chat templates with no system role (Gemma 2's raises "System role not supported", and
    the runner answers 400 ``template_error``): what llama-server's template polyfill does.
    """
    if not messages or messages[0].get("role") != "system":
        return list(messages)
    system = str(messages[0].get("content") or "")
    rest = [dict(m) for m in messages[1:]]
    for m in rest:
        if m.get("role") == "user":
            m["content"] = f"{system}\n\n{m.get('content') or ''}" if system else m.get("content")
            return rest
    return [{"role": "user", "content": system}, *rest] if system else rest

