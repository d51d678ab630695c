"""What one request may ask of the runner, as `serve` flags.

The defaults are far above anything a person meets in normal use (OpenAI's own structured-output
limits are lower) and far below what takes the runner down: a request over one is answered with a
400 that names the limit and the flag that raises it.
"""

from __future__ import annotations

import argparse
from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class Limits:
    # The GBNF grammar made from a JSON schema (response_format, a forced tool call). llama.cpp
    # parses it in time that grows faster than its size (a 100,000-value enum: 26 s), so the
    # largest admitted grammar must still parse in milliseconds.
    max_grammar_bytes: int = 128 * 1024
    # Nested groups in that grammar: llama.cpp's parser recurses once per level.
    max_grammar_depth: int = 2048
    # Seconds of Python to turn a schema into a grammar (optional properties cost n squared).
    max_grammar_seconds: float = 2.0
    # minItems, maxItems, minLength, maxLength and {m,n} in patterns: each one becomes that many
    # copies or nested groups in the grammar, and llama.cpp refuses more than 2000 nested anyway.
    max_schema_repeat: int = 1000
    # Repeats nested in a pattern multiply, and an ambiguous one costs llama.cpp a parse stack
    # per way to match at every generated token, on the thread every client shares
    # (runner.grammar.nested_repeat).
    max_nested_repeat: int = 64
    # Values in one enum, alternatives in one anyOf/oneOf/allOf, entries of one prefixItems, and
    # properties of one object.
    max_schema_items: int = 1000
    # Nesting of the schema's JSON (objects and arrays inside each other).
    max_schema_depth: int = 64

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


FLAGS: dict[str, str] = {
    "max_grammar_bytes": "--max-grammar-bytes",
    "max_grammar_depth": "--max-grammar-depth",
    "max_grammar_seconds": "--max-grammar-seconds",
    "max_schema_repeat": "--max-schema-repeat",
    "max_nested_repeat": "--max-nested-repeat",
    "max_schema_items": "--max-schema-items",
    "max_schema_depth": "--max-schema-depth",
}


def add_limit_flags(parser: argparse.ArgumentParser) -> None:
    """The `serve` flags that bound a request's grammar."""
    d = Limits()
    group = parser.add_argument_group(
        "request limits", "what one request may ask for; over a limit it gets a 400 naming it")
    group.add_argument(FLAGS["max_grammar_bytes"], type=_pos_int, default=d.max_grammar_bytes,
                       metavar="N", help="largest grammar made from a JSON schema, in bytes "
                                         f"(default {d.max_grammar_bytes})")
    group.add_argument(FLAGS["max_grammar_depth"], type=_pos_int, default=d.max_grammar_depth,
                       metavar="N", help="deepest nesting of groups in that grammar "
                                         f"(default {d.max_grammar_depth})")
    group.add_argument(FLAGS["max_grammar_seconds"], type=_pos_float,
                       default=d.max_grammar_seconds, metavar="S",
                       help="longest time to turn a JSON schema into a grammar "
                            f"(default {d.max_grammar_seconds:g})")
    group.add_argument(FLAGS["max_schema_repeat"], type=_pos_int, default=d.max_schema_repeat,
                       metavar="N", help="largest minItems, maxItems, minLength, maxLength or "
                                         f"{{m,n}} in a pattern (default {d.max_schema_repeat})")
    group.add_argument(FLAGS["max_nested_repeat"], type=_pos_int, default=d.max_nested_repeat,
                       metavar="N", help="largest product of repeats nested in a pattern, such "
                                         "as (a{0,8}){0,8}: 64 "
                                         f"(default {d.max_nested_repeat})")
    group.add_argument(FLAGS["max_schema_items"], type=_pos_int, default=d.max_schema_items,
                       metavar="N", help="most values in an enum, alternatives in anyOf/oneOf/"
                                         "allOf, or properties in one object "
                                         f"(default {d.max_schema_items})")
    group.add_argument(FLAGS["max_schema_depth"], type=_pos_int, default=d.max_schema_depth,
                       metavar="N", help="deepest nesting of a JSON schema "
                                         f"(default {d.max_schema_depth})")


def limits_from_args(args: argparse.Namespace) -> Limits:
    return Limits(**{name: getattr(args, name) for name in FLAGS})


def _pos_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _pos_float(text: str) -> float:
    value = float(text)
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a number of seconds above 0, got {text}")
    return value
