"""A tool as the model is offered it, and what a call of it gave back.

A tool comes from a source: ``builtin`` (app/tools/builtin.py) or an MCP server the person added,
by its name. Its description and schema are untrusted text (an MCP server writes them, and a
description may try to instruct the model): they are shown to the person and sent to the model as
the server wrote them, never obeyed by Hearth. The fingerprint ties an approval to the tool as
it was approved: a changed description or schema is another tool and is asked about again.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any

from app.i18n import english

BUILTIN = "builtin"
# OpenAI's limit for a function name: what the model is offered must pass it.
_NAME_OK = re.compile(r"[^A-Za-z0-9_-]")
MAX_NAME = 64
MAX_DESCRIPTION = 4_000  # characters of a tool's description sent to the model and shown
RESULT_BUDGET = 16_000  # characters of one call's result the model gets (the rest is cut)


@dataclass(frozen=True)
class ToolSpec:
    """One tool: where it comes from (``source``), its own name, description and JSON schema
    for its arguments (``parameters``)."""

    source: str
    name: str
    description: str = ""
    parameters: dict[str, Any] = field(default_factory=lambda: {"type": "object",
                                                                "properties": {}})

    @property
    def key(self) -> str:
        """Which tool, whatever its description: ``source/name``."""
        return f"{self.source}/{self.name}"

    @property
    def fingerprint(self) -> str:
        """The tool as approved: its source, name, description and schema, hashed."""
        body = json.dumps([self.source, self.name, self.description, self.parameters],
                          sort_keys=True, ensure_ascii=True)
        return hashlib.sha256(body.encode()).hexdigest()[:32]

    @property
    def model_name(self) -> str:
        """The name the model calls it by: built-in tools by their own name, a server's as
        ``server__tool`` (so two servers' tools never collide), cut to OpenAI's 64 characters
        of letters, digits, ``_`` and ``-``."""
        raw = self.name if self.source == BUILTIN else f"{self.source}__{self.name}"
        return _NAME_OK.sub("_", raw)[:MAX_NAME] or "tool"

    def to_openai(self) -> dict[str, Any]:
        """The ``tools`` entry of a Chat Completions request."""
        return {"type": "function", "function": {
            "name": self.model_name,
            "description": self.description[:MAX_DESCRIPTION],
            "parameters": self.parameters if isinstance(self.parameters, dict) else {
                "type": "object", "properties": {}}}}


@dataclass(frozen=True)
class ToolResult:
    """What a call gave back: its text (what the model is sent) and whether it failed."""

    text: str
    is_error: bool = False
    cut: int = 0  # characters left out of ``text`` by the budget (0: none)

    @staticmethod
    def error(text: str) -> ToolResult:
        return ToolResult(text, is_error=True)


def within_budget(result: ToolResult, budget: int = RESULT_BUDGET) -> ToolResult:
    """``result`` with its text cut to ``budget`` characters and a note saying so: a huge
    result would fill the model's context (and the window) with one call."""
    if len(result.text) <= budget:
        return result
    left = len(result.text) - budget
    note = english("[Hearth cut this result: {left} more characters were left out.]", left=left)
    return ToolResult(result.text[:budget] + "\n" + str(note), result.is_error, left)
