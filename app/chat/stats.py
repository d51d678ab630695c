"""What the chat's status line says about a reply and the context (no Qt).

Speed and time to first token are measured by the session on the GUI thread's clock; token
counts come from the runner's usage record. The context meter warns before the context is full
and says what happens then: the oldest turns are left out of what is sent, never out of the
stored conversation.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any

from app.i18n import T_, Text

WARN_AT = 0.8  # the meter warns from this share of the context on


@dataclass(frozen=True)
class ReplyStats:
    """One reply's figures (None: not known, e.g. a reply stopped before its first token)."""

    ttft_ms: float | None = None
    tokens_per_s: float | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None

    @classmethod
    def measure(cls, sent: float, first: float | None, ended: float, pieces: int,
                usage: dict[str, Any] | None) -> ReplyStats:
        """From the clock readings of a reply (seconds) and the runner's usage, if it sent one.

        Tokens per second count from the first token on (the prompt's processing is the time to
        first token); the runner's token count is used when known, else the streamed pieces.
        """
        prompt = _int(usage, "prompt_tokens")
        completion = _int(usage, "completion_tokens")
        ttft = (first - sent) * 1000 if first is not None else None
        tokens = completion if completion is not None else pieces
        rate = None
        if first is not None and tokens > 1 and ended > first:
            rate = (tokens - 1) / (ended - first)  # the first token's time is the TTFT's
        return cls(ttft, rate, prompt, completion)

    def to_meta(self) -> dict[str, Any]:
        """The figures worth keeping with the reply (JSON values)."""
        out: dict[str, Any] = {}
        if self.ttft_ms is not None:
            out["ttft_ms"] = round(self.ttft_ms, 1)
        if self.tokens_per_s is not None:
            out["tokens_per_s"] = round(self.tokens_per_s, 2)
        if self.completion_tokens is not None:
            out["completion_tokens"] = self.completion_tokens
        return out

    @property
    def context_used(self) -> int | None:
        """Tokens the conversation now takes in the context (prompt plus reply)."""
        if self.prompt_tokens is None:
            return None
        return self.prompt_tokens + (self.completion_tokens or 0)


class Level(Enum):
    OK = "ok"
    WARN = "warn"
    FULL = "full"


@dataclass(frozen=True)
class ContextMeter:
    used: int
    size: int

    @property
    def share(self) -> float:
        return min(1.0, self.used / self.size) if self.size > 0 else 0.0

    @property
    def level(self) -> Level:
        if self.size <= 0:
            return Level.OK
        if self.used >= self.size:
            return Level.FULL
        return Level.WARN if self.share >= WARN_AT else Level.OK

    def text(self) -> Text:
        """The meter's label: "Context 1,234 / 4,096" (the numbers in the locale's format)."""
        return T_("Context {used:,} / {size:,}", used=self.used, size=self.size)

    def warning(self) -> str:
        """What happens when the context fills up; empty while there is room."""
        if self.level is Level.OK:
            return ""
        if self.level is Level.FULL:
            return T_("The context is full. From the next message on, the oldest turns are left "
                      "out of what the model sees; they stay in this conversation. Start a new "
                      "chat for a fresh context, or load the model with a larger context.")
        return T_("The context is {percent}% full. From the next message on, the oldest turns "
                  "are left out of what the model sees; they stay in this conversation. Start "
                  "a new chat for a fresh context, or load the model with a larger context.",
                  percent=round(self.share * 100))


def status_text(stats: ReplyStats) -> str:
    """"32.5 tokens/s · first token after 180 ms" (the parts that are known; numbers in the
    locale's format when the window translates it)."""
    rate, ttft = stats.tokens_per_s, stats.ttft_ms
    if rate is not None and ttft is not None:
        return T_("{rate:.1f} tokens/s · first token after {ms:,.0f} ms", rate=rate, ms=ttft)
    if rate is not None:
        return T_("{rate:.1f} tokens/s", rate=rate)
    if ttft is not None:
        return T_("First token after {ms:,.0f} ms", ms=ttft)
    return ""


def trimmed_text(dropped: int) -> str:
    """Said when the oldest messages were left out of what was sent."""
    if dropped <= 0:
        return ""
    return T_("The context is full: the oldest message was left out of what the model saw for "
              "this reply (it stays in the conversation).") if dropped == 1 else \
        T_("The context is full: the %n oldest messages were left out of what the model saw "
           "for this reply (they stay in the conversation).", None, dropped)


def _int(usage: dict[str, Any] | None, key: str) -> int | None:
    value = usage.get(key) if isinstance(usage, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None
