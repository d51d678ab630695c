"""One round of a reply's tool calls: ask the person, run what they allow, gather the results.

The model ended its turn with calls (app/chat/toolcalls.py keeps them in the reply). For each
call, in order: the tool's standing decision or the conversation's "allow" lets it run, a
"deny" refuses it, anything else asks the person (:attr:`ToolRound.asking`, answered with
:meth:`ToolRound.decide`: once, for this conversation, always, or deny). Allowed calls run
through the :class:`ToolBox` (built-in tools on a thread, MCP tools in the MCP host process),
each with its time limit; when every call has an outcome the round is :attr:`done` and the
chat session sends the results back to the model. Stop ends it at once (:meth:`cancel`): calls
still running are cancelled, those not yet decided are recorded as cancelled; nothing runs
that the person did not allow.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from PySide6.QtCore import QObject, Signal

from app.chat.toolcalls import (
    ASKING,
    CANCELLED,
    DENIED,
    DONE,
    ERROR,
    RUNNING,
    calls_of,
    settle,
)
from app.tools.config import Verdict
from app.tools.spec import ToolResult, ToolSpec

log = logging.getLogger(__name__)

ONCE, CONVERSATION, ALWAYS, DENY = "once", "conversation", "always", "deny"


class ToolBox(Protocol):
    """What a round needs of app/services/tools.py's ToolService (fakes in tests)."""

    call_done: Any  # Signal(str uid, str status, ToolResult, int ms)
    changed: Any  # Signal(): what is turned on, or a server's state, changed

    @property
    def max_rounds(self) -> int:
        """Tool rounds one reply may make."""
        ...

    def offered(self, off: list[str]) -> list[ToolSpec]:
        """The tools a conversation offers (``off``: the sources and tool keys it left out)."""
        ...

    def prepare(self, off: list[str], then: Callable[[], None]) -> None:
        """Start the servers a conversation uses; ``then()`` once none is starting."""
        ...

    def sources(self) -> list[str]:
        """The sources turned on: BUILTIN when a built-in tool is, and each server."""
        ...

    def wanted(self, off: list[str]) -> bool:
        """Whether any tool is turned on for a conversation (its servers not yet started)."""
        ...

    def verdict(self, spec: ToolSpec, allowed_here: list[str]) -> Verdict: ...

    def remember(self, spec: ToolSpec, mode: str) -> None:
        """A standing decision for the tool as it is ("allow" or "deny")."""
        ...

    def run(self, uid: str, spec: ToolSpec, arguments: dict[str, Any]) -> None:
        """Start a call; ``call_done`` follows (from the GUI thread), whatever happens."""
        ...

    def cancel(self, uid: str) -> None: ...

    def close(self) -> None:
        """Hearth closes: every server the tools started stops."""
        ...


@dataclass(frozen=True)
class Approval:
    """A call the person is asked about: the tool (its description is the server's text,
    shown as text) and the model's arguments."""

    uid: str
    spec: ToolSpec
    call: dict[str, Any]


def parse_arguments(text: str) -> dict[str, Any] | str:
    """The model's arguments as an object, or the sentence the model is told when they are
    not one."""
    try:
        value = json.loads(text or "{}")
    except json.JSONDecodeError as exc:
        return f"The arguments are not valid JSON ({exc.msg} at character {exc.pos}). Call the " \
               "tool again with a JSON object."
    if not isinstance(value, dict):
        return "The arguments must be a JSON object. Call the tool again with one."
    return value


class ToolRound(QObject):
    """The calls of one round, from asking to their outcomes."""

    asking = Signal(object)  # Approval: the person decides (the window shows it)
    changed = Signal()  # a call's state changed (the reply is drawn again)
    done = Signal()  # every call has an outcome
    allowed_for_conversation = Signal(str)  # conversation_entry() of a tool allowed here

    def __init__(self, round_: dict[str, Any], specs: dict[str, ToolSpec], box: ToolBox,
                 allowed_here: list[str], clock: Callable[[], float],
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._calls = {f"{id(self)}:{n}": c for n, c in enumerate(calls_of(round_))}
        self._specs = specs  # by the tool's key
        self._box = box
        self._allowed_here = list(allowed_here)
        self._clock = clock
        self._started: dict[str, float] = {}
        self._queue = [uid for uid, c in self._calls.items() if c.get("status") == ASKING]
        self._asked: Approval | None = None
        self._finished = False
        box.call_done.connect(self._on_call_done)

    @property
    def question(self) -> Approval | None:
        """The call the person is being asked about, if any."""
        return self._asked

    def start(self) -> None:
        self._next()

    def decide(self, uid: str, choice: str) -> None:
        """The person's answer for the call :attr:`asking` named."""
        asked = self._asked
        if asked is None or asked.uid != uid:
            return
        self._asked = None
        spec, call = asked.spec, asked.call
        if choice == DENY:
            settle(call, DENIED)
        else:
            if choice == ALWAYS:
                self._box.remember(spec, "allow")
            elif choice == CONVERSATION:
                from app.tools.config import conversation_entry

                entry = conversation_entry(spec)
                self._allowed_here.append(entry)
                self.allowed_for_conversation.emit(entry)
            self._run(uid, spec, call)
        self.changed.emit()
        self._next()

    def cancel(self) -> None:
        """Stop: running calls are cancelled, undecided ones recorded as cancelled."""
        self._asked = None
        self._queue.clear()
        for uid, call in self._calls.items():
            if call.get("status") == RUNNING:
                self._box.cancel(uid)
            if call.get("status") not in DONE:
                settle(call, CANCELLED)
        self._finish()

    def _next(self) -> None:
        while self._queue and self._asked is None:
            uid = self._queue.pop(0)
            call = self._calls[uid]
            spec = self._specs.get(str(call.get("tool")))
            if spec is None:  # the tool went away (its server stopped) since it was offered
                settle(call, CANCELLED, "The tool is no longer available.")
                continue
            verdict = self._box.verdict(spec, self._allowed_here)
            if verdict == "deny":
                settle(call, DENIED)
            elif verdict == "allow":
                self._run(uid, spec, call)
            else:
                self._asked = Approval(uid, spec, call)
                self.asking.emit(self._asked)
                return
            self.changed.emit()
        self._check_done()

    def _run(self, uid: str, spec: ToolSpec, call: dict[str, Any]) -> None:
        arguments = parse_arguments(str(call.get("arguments") or ""))
        if isinstance(arguments, str):
            settle(call, ERROR, arguments)
            return
        call["status"] = RUNNING
        self._started[uid] = self._clock()
        self._box.run(uid, spec, arguments)

    def _on_call_done(self, uid: str, status: str, result: ToolResult, ms: int) -> None:
        call = self._calls.get(uid)
        if call is None or call.get("status") != RUNNING:
            return  # another round's, or one this round already ended (Stop)
        settle(call, status, result.text, ms)
        self.changed.emit()
        self._check_done()

    def _check_done(self) -> None:
        if self._asked is None and not self._queue and \
                all(c.get("status") in DONE for c in self._calls.values()):
            self._finish()

    def _finish(self) -> None:
        if self._finished:
            return
        self._finished = True
        try:
            self._box.call_done.disconnect(self._on_call_done)
        except (RuntimeError, TypeError):
            pass
        self.done.emit()
