"""The built-in tools a chat model may call: the chosen folder's files, a calculator, the clock.

Each is off by default; the app decides which are offered (and asks the person) and calls
:func:`run_builtin` with what the model sent. A tool never raises: a refusal, a wrong argument or
an unexpected failure comes back as an error :class:`~app.tools.spec.ToolResult` whose sentence
tells the model what went wrong, and every result goes through
:func:`~app.tools.spec.within_budget`. The folder tools live in :mod:`app.tools.files` and the
calculator in :mod:`app.tools.calc`; this module gives them their specs and checks arguments.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from app.i18n import english
from app.tools import calc, files
from app.tools.spec import BUILTIN, ToolResult, ToolSpec, within_budget

log = logging.getLogger(__name__)


def _local_now() -> datetime:
    return datetime.now().astimezone()


@dataclass(frozen=True)
class BuiltinContext:
    """What the built-in tools may use: the folder the person picked for the file tools (None:
    none chosen) and the clock (a local, aware datetime; tests give a fixed one)."""

    folder: Path | None = None
    now: Callable[[], datetime] = field(default=_local_now)


Handler = Callable[[dict[str, Any], BuiltinContext], str]


@dataclass(frozen=True)
class BuiltinTool:
    """One built-in tool: its spec as the model is offered it, whether it needs the chosen
    folder, and the function that does the work (given checked arguments; returns the text, or
    raises a refusal whose message is the sentence)."""

    spec: ToolSpec
    needs_folder: bool
    handler: Handler = field(repr=False, compare=False)

    def run(self, arguments: dict[str, Any], context: BuiltinContext) -> ToolResult:
        """Check ``arguments`` against the schema and run the tool; never raises."""
        if self.needs_folder and context.folder is None:
            return ToolResult.error(str(files.no_folder()))
        wrong = _check_arguments(self.spec, arguments)
        if wrong is not None:
            return ToolResult.error(wrong)
        try:
            text = self.handler(arguments, context)
        except (files.FileToolError, calc.CalcError) as exc:
            return within_budget(ToolResult.error(str(exc)))
        except Exception as exc:
            log.exception("Built-in tool %s failed", self.spec.name)
            return ToolResult.error(english("The tool {name} failed unexpectedly ({error}).",
                                       name=self.spec.name, error=type(exc).__name__))
        return within_budget(ToolResult(text))


_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,), "integer": (int,), "number": (int, float), "boolean": (bool,),
    "object": (dict,), "array": (list,),
}


def _check_arguments(spec: ToolSpec, arguments: Any) -> str | None:
    """A sentence saying what is wrong with ``arguments`` for ``spec``, or None."""
    if not isinstance(arguments, dict):
        return english("The arguments of {name} must be a JSON object.", name=spec.name)
    properties: dict[str, Any] = spec.parameters.get("properties", {})
    accepted = ", ".join(properties) or "none"
    for key in arguments:
        if key not in properties:
            return english("{name} has no argument “{argument}”; it takes: {accepted}.", name=spec.name,
                      argument=files.show(str(key))[:80], accepted=accepted)
    for key in spec.parameters.get("required", []):
        if key not in arguments:
            return english("{name} needs the argument “{argument}”.", name=spec.name, argument=key)
    for key, value in arguments.items():
        want = properties[key].get("type")
        types = _JSON_TYPES.get(want, (object,))
        if not isinstance(value, types) or (isinstance(value, bool) and want != "boolean"):
            return english("The argument “{argument}” of {name} must be a {kind}.", argument=key,
                      name=spec.name, kind=want)
    return None


def run_builtin(name: str, arguments: Any, context: BuiltinContext) -> ToolResult:
    """Run the built-in tool ``name`` with the model's ``arguments`` (a dict, or the JSON text of
    one; None or "" for none). Validates arguments (not a dict / missing required / wrong type →
    an error result with a sentence), runs the tool, never raises (an unexpected exception
    becomes an error result, logged)."""
    try:
        tool = BUILTIN_TOOLS.get(name)
        if tool is None:
            return ToolResult.error(english("There is no built-in tool called “{name}”; the tools are: "
                                       "{tools}.", name=files.show(str(name))[:80],
                                       tools=", ".join(BUILTIN_TOOLS)))
        if arguments is None or arguments == "":
            arguments = {}
        elif isinstance(arguments, str | bytes):
            try:
                arguments = json.loads(arguments)
            except (ValueError, RecursionError):
                return ToolResult.error(english("The arguments of {name} are not valid JSON.", name=name))
        return tool.run(arguments, context)
    except Exception as exc:  # tool.run catches its own; this is the last guard
        log.exception("Built-in tool %s failed", name)
        return ToolResult.error(english("The tool {name} failed unexpectedly ({error}).",
                                   name=files.show(str(name))[:80], error=type(exc).__name__))


# --- the clock -------------------------------------------------------------------------------

_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December")


def _utc_offset(offset: timedelta | None) -> str:
    minutes = round((offset or timedelta()).total_seconds() / 60)
    sign = "-" if minutes < 0 else "+"
    hours, mins = divmod(abs(minutes), 60)
    return f"UTC{sign}{hours:02d}:{mins:02d}"


def current_datetime(now: datetime) -> str:
    """``now`` (made local and aware when naive) as ISO 8601 and a line a person would say."""
    if now.tzinfo is None or now.utcoffset() is None:
        now = now.astimezone()
    zone = getattr(now.tzinfo, "key", None) or now.tzname() or ""
    offset = _utc_offset(now.utcoffset())
    human = english("{weekday}, {day} {month} {year}, {time} local time ({zone}).",
               weekday=_WEEKDAYS[now.weekday()], day=now.day, month=_MONTHS[now.month - 1],
               year=now.year, time=now.strftime("%H:%M:%S"),
               zone=f"{zone}, {offset}" if zone and zone != offset else offset)
    return f"{now.isoformat(timespec='seconds')}\n{human}"


# --- the tools -------------------------------------------------------------------------------

def _object(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required,
            "additionalProperties": False}


def _tool(name: str, description: str, parameters: dict[str, Any], needs_folder: bool,
          handler: Handler) -> BuiltinTool:
    return BuiltinTool(ToolSpec(BUILTIN, name, description, parameters), needs_folder, handler)


BUILTIN_TOOLS: dict[str, BuiltinTool] = {tool.spec.name: tool for tool in (
    _tool("list_files",
          english("List the files and folders in the folder the person chose, or in a folder inside "
             "it. Paths are relative to the chosen folder."),
          _object({"path": {"type": "string", "description": "A folder relative to the chosen "
                            "folder, such as \"notes\"; \".\" (the default) is the chosen folder."}},
                  []),
          True, lambda args, context: files.list_files(context.folder, args.get("path", "."))),
    _tool("read_file",
          english("Read a text file from the folder the person chose. Files over 1 MiB and binary "
             "files are refused."),
          _object({"path": {"type": "string", "description": "The file's path relative to the "
                            "chosen folder, such as \"notes/todo.txt\"."}}, ["path"]),
          True, lambda args, context: files.read_file(context.folder, args["path"])),
    _tool("calculate",
          english("Calculate an arithmetic expression exactly, such as \"2 * (3 + 4) ** 2 / sqrt(2)\". "
             "It knows + - * / // % **, parentheses, sqrt, sin, cos, tan, log, log10, exp, abs, "
             "round, floor, ceil, pi and e (angles in radians)."),
          # maxLength: what the calculator takes; a grammar that forces a call bounds it too.
          _object({"expression": {"type": "string", "maxLength": calc.MAX_LENGTH,
                                  "description": "The expression, in Python notation: ** for "
                                  "powers."}}, ["expression"]),
          False, lambda args, context: calc.calculate(args["expression"])),
    _tool("current_datetime",
          english("Get the current local date, time, weekday and time zone."),
          _object({}, []),
          False, lambda args, context: current_datetime(context.now())),
)}
