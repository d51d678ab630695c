"""The runner's request and connection limits as the app's settings may set them (no Qt).

The runner owns the limits and their defaults (``runner/limits.py``, its ``serve`` flags); the
app and the runner share only the wire protocol, and the flags are part of it. A person who
needs more (say a shared server sent bigger images than 32 MiB of base64) writes the limit's
name and value under ``runner_limits`` in settings.json; each load passes it as its flag. Only
the names below are passed, and only positive numbers of the right kind, so a hand-edited file
cannot put another flag on the runner's command line. A test checks every name against the
runner's own parser.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

# name -> whether it takes a fraction (seconds) or a whole number (counts, MiB, bytes).
RUNNER_LIMITS: dict[str, type] = {
    "max_body_mib": int,
    "body_timeout": float,
    "body_rate_mib": float,
    "max_messages": int,
    "max_template_seconds": float,
    "max_prompt_mib": int,
    "max_grammar_bytes": int,
    "max_grammar_depth": int,
    "max_grammar_seconds": float,
    "max_schema_repeat": int,
    "max_nested_repeat": int,
    "max_schema_items": int,
    "max_schema_depth": int,
    "max_connections": int,
    "max_peer_connections": int,
    "header_timeout": float,
    "idle_timeout": float,
}

# The longest line of the runner's output the app keeps (a longer one is cut): not a runner
# flag, but set beside them.
OUTPUT_LINE_KIB = "max_output_line_kib"
DEFAULT_OUTPUT_LINE_KIB = 64


def flag(name: str) -> str:
    """The ``serve`` flag of the limit ``name``."""
    return "--" + name.replace("_", "-")


def limit_problem(name: str, value: object) -> str | None:
    """Why ``value`` cannot be the limit ``name``, or None when it can."""
    kind = int if name == OUTPUT_LINE_KIB else RUNNER_LIMITS.get(name)
    if kind is None:
        return f"{name!r} is not a limit (known: {', '.join(sorted(RUNNER_LIMITS))}, " \
               f"{OUTPUT_LINE_KIB})"
    if isinstance(value, bool) or not isinstance(value, int | float):
        return f"{name} must be a number, not {value!r}"
    if kind is int and not (isinstance(value, int) or float(value).is_integer()):
        return f"{name} must be a whole number, not {value!r}"
    if not (math.isfinite(value) and value > 0):
        return f"{name} must be above 0, not {value!r}"
    return None


def limit_flags(limits: Mapping[str, float]) -> list[str]:
    """The ``serve`` flags for the runner limits in ``limits`` (valid ones only, in a fixed
    order; the app's own ``max_output_line_kib`` is not one)."""
    out: list[str] = []
    for name in RUNNER_LIMITS:
        if name in limits and limit_problem(name, limits[name]) is None:
            value = limits[name]
            text = str(int(value)) if RUNNER_LIMITS[name] is int else repr(float(value))
            out += [flag(name), text]
    return out


def output_line_bytes(limits: Mapping[str, float]) -> int:
    """The longest line of runner output the app keeps, from ``limits`` or the default."""
    value = limits.get(OUTPUT_LINE_KIB, DEFAULT_OUTPUT_LINE_KIB)
    if limit_problem(OUTPUT_LINE_KIB, value) is not None:
        value = DEFAULT_OUTPUT_LINE_KIB
    return int(value) * 1024
