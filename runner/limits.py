"""What one request, and one peer, may ask of the runner, as `serve` flags: the one place for them.

The defaults are far above anything a person meets in normal use (OpenAI's own structured-output
limits are lower) and far below what takes the runner down: a request over one is answered with a
400 or 413 that names the limit and the flag that raises it, and a log line. Connections over a
cap are refused as :mod:`runner.connections` says.
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
    # The whole request body: room for several base64 images (a 4 MB photo is 5.3 MiB of base64)
    # and for a conversation far longer than any context. A bigger body is refused before it is
    # read, so it never costs memory or the event loop's time.
    max_body_mib: int = 32
    # From a request's complete head to its complete body. Without it a peer that sends a body
    # a byte at a time holds a connection, counted as busy, for ever; 120 s takes the largest
    # body at about 280 KB/s, slower than any network the server is shared on.
    body_timeout: float = 120.0
    # While a reply is being generated, request bodies are read at most this fast, all
    # connections together (beyond a first 4 MiB at once, so an ordinary request never waits):
    # reading, parsing and refusing 32 MiB bodies back to back took four fifths of a 2-core
    # machine's decode rate; at 12 MiB/s a stream keeps more than four fifths (24 MiB/s did in
    # one run of three: tests/bench/hostile.py). A large value turns it off.
    body_rate_mib: float = 12.0
    # Messages in one chat request: each costs validation and template work in Python before the
    # context length is known, and a 32 MiB body holds a million empty ones.
    max_messages: int = 10_000
    # A GGUF's chat template is code from a downloaded file: its render is stopped after this
    # long (a normal one takes milliseconds)...
    max_template_seconds: float = 5.0
    # ...and after it has written this much text (the prompt is tokenized whole, and llama.cpp's
    # tokenizer takes seconds per ten megabytes).
    max_prompt_mib: int = 64
    # Open connections in all, kept below the open-file limit (runner.connections).
    max_connections: int = 512
    # Open connections from one address other than this computer's (the app is a loopback
    # client and is never counted here).
    max_peer_connections: int = 32
    # From a connection's opening, or its previous response's end, to a complete request head.
    header_timeout: float = 10.0
    # A kept-alive connection with nothing sent after a response is closed after this long.
    idle_timeout: float = 5.0

    @property
    def max_body_bytes(self) -> int:
        return self.max_body_mib * 2**20

    @property
    def max_prompt_chars(self) -> int:
        return self.max_prompt_mib * 2**20

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
    "max_body_mib": "--max-body-mib",
    "body_timeout": "--body-timeout",
    "body_rate_mib": "--body-rate-mib",
    "max_messages": "--max-messages",
    "max_template_seconds": "--max-template-seconds",
    "max_prompt_mib": "--max-prompt-mib",
    "max_connections": "--max-connections",
    "max_peer_connections": "--max-peer-connections",
    "header_timeout": "--header-timeout",
    "idle_timeout": "--idle-timeout",
}


def add_limit_flags(parser: argparse.ArgumentParser) -> None:
    """The `serve` flags that bound a request (its body, messages, template and grammar) and
    the connections (how many, how long before a request arrives)."""
    _add_request_flags(parser)
    _add_grammar_flags(parser)
    _add_connection_flags(parser)


def _add_request_flags(parser: argparse.ArgumentParser) -> None:
    d = Limits()
    group = parser.add_argument_group(
        "request limits", "what one request may send; over a limit it gets a 413 or 400 "
                          "naming it")
    group.add_argument(FLAGS["max_body_mib"], type=pos_int, default=d.max_body_mib,
                       metavar="MIB", help="largest request body, in MiB (default "
                                           f"{d.max_body_mib}); a bigger one gets a 413")
    group.add_argument(FLAGS["body_timeout"], type=_pos_float, default=d.body_timeout,
                       metavar="S", help="seconds from a request's head to the end of its "
                                         f"body, else it gets a 408 (default "
                                         f"{d.body_timeout:g})")
    group.add_argument(FLAGS["body_rate_mib"], type=_pos_float, default=d.body_rate_mib,
                       metavar="MIB", help="while a reply is being generated, read request "
                                           "bodies at most this many MiB a second, all "
                                           "together, beyond a first 4 MiB (default "
                                           f"{d.body_rate_mib:g})")
    group.add_argument(FLAGS["max_messages"], type=pos_int, default=d.max_messages,
                       metavar="N", help="most messages in one chat request "
                                         f"(default {d.max_messages})")
    group.add_argument(FLAGS["max_template_seconds"], type=_pos_float,
                       default=d.max_template_seconds, metavar="S",
                       help="longest time the model's chat template may take to render one "
                            f"prompt (default {d.max_template_seconds:g})")
    group.add_argument(FLAGS["max_prompt_mib"], type=pos_int, default=d.max_prompt_mib,
                       metavar="MIB", help="most text, in MiB, the chat template may make of "
                                           f"one request (default {d.max_prompt_mib})")


def _add_connection_flags(parser: argparse.ArgumentParser) -> None:
    d = Limits()
    group = parser.add_argument_group(
        "connection limits", "at a cap the oldest idle connection is closed to make room; "
                             "when none is idle a new one gets a 503 (429 for one address's "
                             "cap) and is closed")
    group.add_argument(FLAGS["max_connections"], type=pos_int, default=d.max_connections,
                       metavar="N", help="most open connections in all (default "
                                         f"{d.max_connections}; lowered to fit under the "
                                         "open-file limit)")
    group.add_argument(FLAGS["max_peer_connections"], type=pos_int,
                       default=d.max_peer_connections, metavar="N",
                       help="most open connections from one other computer's address; this "
                            f"computer's own are not counted (default {d.max_peer_connections})")
    group.add_argument(FLAGS["header_timeout"], type=_pos_float, default=d.header_timeout,
                       metavar="S", help="seconds from a connection's opening (or its last "
                                         "answer) to a complete request head, else it is "
                                         f"closed (default {d.header_timeout:g})")
    group.add_argument(FLAGS["idle_timeout"], type=_pos_float, default=d.idle_timeout,
                       metavar="S", help="seconds a kept-alive connection may send nothing "
                                         f"after an answer (default {d.idle_timeout:g})")


def _add_grammar_flags(parser: argparse.ArgumentParser) -> None:
    d = Limits()
    group = parser.add_argument_group(
        "grammar limits", "what a JSON schema (response_format, a forced tool call) may ask "
                          "for; over a limit it gets a 400 naming it")
    group.add_argument(FLAGS["max_grammar_bytes"], type=pos_int, default=d.max_grammar_bytes,
                       metavar="N", help="largest grammar made from a JSON schema, in bytes "
                                         f"(default {d.max_grammar_bytes})")
    group.add_argument(FLAGS["max_grammar_depth"], type=pos_int, default=d.max_grammar_depth,
                       metavar="N", help="deepest nesting of groups in that grammar "
                                         f"(default {d.max_grammar_depth})")
    group.add_argument(FLAGS["max_grammar_seconds"], type=_pos_float,
                       default=d.max_grammar_seconds, metavar="S",
                       help="longest time to turn a JSON schema into a grammar "
                            f"(default {d.max_grammar_seconds:g})")
    group.add_argument(FLAGS["max_schema_repeat"], type=pos_int, default=d.max_schema_repeat,
                       metavar="N", help="largest minItems, maxItems, minLength, maxLength or "
                                         f"{{m,n}} in a pattern (default {d.max_schema_repeat})")
    group.add_argument(FLAGS["max_nested_repeat"], type=pos_int, default=d.max_nested_repeat,
                       metavar="N", help="largest product of repeats nested in a pattern, such "
                                         "as (a{0,8}){0,8}: 64 "
                                         f"(default {d.max_nested_repeat})")
    group.add_argument(FLAGS["max_schema_items"], type=pos_int, default=d.max_schema_items,
                       metavar="N", help="most values in an enum, alternatives in anyOf/oneOf/"
                                         "allOf, or properties in one object "
                                         f"(default {d.max_schema_items})")
    group.add_argument(FLAGS["max_schema_depth"], type=pos_int, default=d.max_schema_depth,
                       metavar="N", help="deepest nesting of a JSON schema "
                                         f"(default {d.max_schema_depth})")


def limits_from_args(args: argparse.Namespace) -> Limits:
    return Limits(**{name: getattr(args, name) for name in FLAGS})


def pos_int(text: str) -> int:
    """A flag's whole number of at least 1 (here, not in runner.settings: the model server
    reads these limits without the load settings, which reach llama.cpp)."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _pos_float(text: str) -> float:
    value = float(text)
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a number above 0, got {text}")
    return value
