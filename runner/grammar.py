"""Grammars from JSON schemas (response_format, forced tool calls), bounded and built off-thread.

A schema is untrusted input that becomes native work: llama-cpp-python turns it into GBNF in
Python, then llama.cpp parses the GBNF in C with a parser that recurses once per nested group.
A 174-byte ``{"type": "string", "maxLength": 100000}`` became 100,000 nested groups and overflowed
the thread's stack (SIGSEGV, no log line); ``"minItems": 10000000`` became gigabytes of grammar;
a 100,000-value enum took 26 s to parse on the scheduler thread, and every client waited.

So, in order: the schema's sizes are checked against :class:`~runner.limits.Limits` before the
converter sees them (:func:`check_schema`), the converter runs under a time limit, the grammar it
made is checked for length and nesting (:func:`check_grammar`), and llama.cpp parses it on
:class:`GrammarWorker`'s thread, which has a stack far deeper than any admitted grammar needs,
never on the event loop or the scheduler's decode loop.
"""

from __future__ import annotations

import json
import logging
import queue
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from typing import Any, TypeVar

from runner.limits import FLAGS, Limits
from runner.template import run_with_deadline

log = logging.getLogger(__name__)

T = TypeVar("T")

# The grammar thread's stack. llama.cpp's parser takes about 450 bytes per nested group (8 MiB
# overflowed between 15,000 and 20,000 levels; Windows gives threads 1 MiB): 256 MiB is room for
# half a million levels, far beyond what the limits admit even when raised. Only the pages it
# touches are ever committed.
GRAMMAR_STACK_BYTES = 256 * 2**20

# Schema keywords whose value is one schema, a list of schemas, or a map of names to schemas.
# Everything else (enum, const, default, examples, descriptions) is data, checked for depth only.
_ONE_SCHEMA = ("additionalProperties", "not", "contains", "if", "then", "else", "propertyNames",
               "additionalItems", "unevaluatedItems", "unevaluatedProperties")
_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SCHEMA_MAPS = ("properties", "$defs", "definitions", "patternProperties", "dependentSchemas")
# Each becomes that many copies, or nested groups, in the grammar.
_REPEATS = ("minItems", "maxItems", "minLength", "maxLength")


class GrammarRefused(Exception):
    """A schema or grammar over one of the runner's limits; ``str()`` says which and by how much."""


class GrammarInvalid(Exception):
    """A schema that cannot become a grammar; ``str()`` says why, in a line."""


# ---- the schema, before the converter sees it ---------------------------------------------------

def check_schema(schema: Any, limits: Limits, where: str) -> None:
    """Refuse a schema whose sizes would make a grammar too large to build (``where`` names it in
    the request, e.g. ``response_format.json_schema.schema``)."""
    # Iterative: a deeply nested schema must not exhaust Python's recursion here either.
    todo: list[tuple[Any, int, str, bool]] = [(schema, 1, where, True)]
    while todo:
        node, depth, path, is_schema = todo.pop()
        if not isinstance(node, dict | list):
            continue
        if depth > limits.max_schema_depth:
            raise GrammarRefused(
                f"{where} is nested more than {limits.max_schema_depth} levels deep (at "
                f"{_short(path, 120)}), over this runner's limit "
                f"({FLAGS['max_schema_depth']}).")
        if isinstance(node, list):
            todo.extend((v, depth + 1, f"{path}[{i}]", False) for i, v in enumerate(node))
            continue
        if is_schema:
            _check_keywords(node, limits, path)
        for key, value in node.items():
            sub = f"{path}.{key}"
            if not is_schema:
                todo.append((value, depth + 1, sub, False))
            elif key in _ONE_SCHEMA or (key == "items" and isinstance(value, dict)):
                todo.append((value, depth + 1, sub, True))
            elif (key in _SCHEMA_LISTS or key == "items") and isinstance(value, list):
                todo.extend((v, depth + 2, f"{sub}[{i}]", True) for i, v in enumerate(value))
            elif key in _SCHEMA_MAPS and isinstance(value, dict):
                todo.extend((v, depth + 2, f"{sub}.{k}", True) for k, v in value.items())
            else:
                todo.append((value, depth + 1, sub, False))


def _check_keywords(node: dict[str, Any], limits: Limits, path: str) -> None:
    for key in _REPEATS:
        if key in node:
            _check_repeat(node[key], limits, f"{path}.{key}")
    pattern = node.get("pattern")
    if isinstance(pattern, str):
        counts, nested = _pattern_shape(pattern)
        for n in counts:
            if n < 0 or n > limits.max_schema_repeat:
                raise GrammarRefused(
                    f"{path}.pattern repeats something {n} times, over this runner's limit of "
                    f"{limits.max_schema_repeat} ({FLAGS['max_schema_repeat']}).")
        if nested > limits.max_nested_repeat:
            raise GrammarRefused(
                f"{path}.pattern nests repeats {nested} deep (repeats inside a repeated group "
                f"multiply), over this runner's limit of {limits.max_nested_repeat} "
                f"({FLAGS['max_nested_repeat']}).")
    for key in ("enum", *_SCHEMA_LISTS, "items"):
        _check_count(node.get(key), limits, f"{path}.{key}", "entries")
    _check_count(node.get("properties"), limits, f"{path}.properties", "properties")


def _check_repeat(value: Any, limits: Limits, path: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise GrammarInvalid(f"{path} must be a whole number of 0 or more, got "
                             f"{_short(json.dumps(value), 40)}.")
    if value > limits.max_schema_repeat:
        raise GrammarRefused(f"{path} is {value}, over this runner's limit of "
                             f"{limits.max_schema_repeat} ({FLAGS['max_schema_repeat']}).")


def _check_count(value: Any, limits: Limits, path: str, what: str) -> None:
    if isinstance(value, list | dict) and len(value) > limits.max_schema_items:
        raise GrammarRefused(f"{path} has {len(value)} {what}, over this runner's limit of "
                             f"{limits.max_schema_items} ({FLAGS['max_schema_items']}).")


def pattern_repeats(pattern: str) -> Iterator[int]:
    """The counts in a regular expression's ``{m}``, ``{m,}`` and ``{m,n}`` quantifiers, read the
    way llama-cpp-python's converter reads them (escapes and character classes skipped; a count
    it cannot read is its own error)."""
    return iter(_pattern_shape(pattern)[0])


def nested_repeat(pattern: str) -> int:
    """The largest product of repeats nested in ``pattern``: ``((a){0,30}){0,20}`` is 600, and
    ``(a*){0,50}`` is 50 (a star counts once, but makes the group around it ambiguous). 1 when
    no repeated group holds a repeat of its own.

    Not a size: each counted repeat becomes a chain of nested optional groups, and when the
    thing repeated can itself match in several ways, llama.cpp's grammar keeps one parse stack
    per way at every token. Measured on a 150,000-token vocabulary, ``(a*){0,300}`` cost 0.9 s
    per generated token, ``((a){0,10}){0,100}`` 0.16 s more with every token (flat repeats
    cost nothing). The scheduler samples every slot's token in turn: all clients wait.
    """
    return _pattern_shape(pattern)[1]


def _pattern_shape(pattern: str) -> tuple[list[int], int]:
    counts: list[int] = []
    nested = 1
    # Per open group: (the largest repeat product inside it, whether it holds any quantifier).
    groups: list[tuple[int, bool]] = [(1, False)]
    last = (1, False)  # the item a quantifier would apply to
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        factor = None
        if c == "\\":
            i += 2
            last = (1, False)
            continue
        if c == "[":
            i += 1
            while i < n and pattern[i] != "]":
                i += 2 if pattern[i] == "\\" else 1
            i += 1
            last = (1, False)
            continue
        if c == "(":
            groups.append((1, False))
        elif c == ")" and len(groups) > 1:
            last = groups.pop()
            _merge(groups, last)
        elif c in "*+?":
            factor = 1
        elif c == "{":
            end = pattern.find("}", i)
            if end < 0:
                break
            numbers = []
            for part in pattern[i + 1:end].split(","):
                try:
                    numbers.append(int(part.strip()))
                except ValueError:
                    pass
            counts.extend(numbers)
            factor = max([1, *numbers])
            i = end
        else:
            last = (1, False)
        if factor is not None:
            product = factor * last[0]
            if last[1]:  # a repeat of something that repeats
                nested = max(nested, product)
            last = (product, True)
            _merge(groups, last)
        i += 1
    return counts, nested


def _merge(groups: list[tuple[int, bool]], item: tuple[int, bool]) -> None:
    product, quantified = groups[-1]
    groups[-1] = (max(product, item[0]), quantified or item[1])


# ---- the grammar the converter made ----------------------------------------------------------

def check_grammar(gbnf: str, limits: Limits, where: str) -> None:
    """Refuse a grammar too long or too deeply nested for llama.cpp to parse quickly and safely."""
    size = len(gbnf.encode("utf-8"))
    if size > limits.max_grammar_bytes:
        raise GrammarRefused(
            f"The grammar made from {where} is {size} bytes, over this runner's limit of "
            f"{limits.max_grammar_bytes} ({FLAGS['max_grammar_bytes']}): use fewer or shorter "
            "enum values, smaller maxItems/maxLength, or a simpler schema.")
    depth = grammar_depth(gbnf)
    if depth > limits.max_grammar_depth:
        raise GrammarRefused(
            f"The grammar made from {where} nests {depth} groups deep, over this runner's limit "
            f"of {limits.max_grammar_depth} ({FLAGS['max_grammar_depth']}).")


def grammar_depth(gbnf: str) -> int:
    """The deepest nesting of parenthesised groups in a GBNF grammar (strings, character classes
    and comments skipped), which is how deep llama.cpp's parser recurses."""
    depth = deepest = 0
    i, n = 0, len(gbnf)
    while i < n:
        c = gbnf[i]
        if c in "\"[":
            close = '"' if c == '"' else "]"
            i += 1
            while i < n and gbnf[i] != close:
                i += 2 if gbnf[i] == "\\" else 1
        elif c == "#":
            while i < n and gbnf[i] != "\n":
                i += 1
        elif c == "(":
            depth += 1
            deepest = max(deepest, depth)
        elif c == ")":
            depth -= 1
        i += 1
    return deepest


# ---- from schema to grammar ------------------------------------------------------------------

def schema_grammar(schema: Any, limits: Limits, where: str) -> str:
    """The GBNF grammar for ``schema``, within ``limits``.

    Raises :class:`GrammarRefused` (over a limit) or :class:`GrammarInvalid` (not a schema the
    converter understands). Call it on the grammar thread: it can take up to
    ``limits.max_grammar_seconds``.
    """
    return schemas_grammar({"root": schema}, limits, where)[1]


def schemas_grammar(schemas: dict[str, Any], limits: Limits, where: str
                    ) -> tuple[dict[str, str], str]:
    """One grammar with a rule for each of ``schemas`` (by the rule's wished name), sharing the
    converter's common rules: each name's rule as the converter named it, and the rules. As
    :func:`schema_grammar`, whose one schema is the rule ``root``."""
    for schema in schemas.values():
        check_schema(schema, limits, where)
    from llama_cpp.llama_grammar import SchemaConverter

    seconds = limits.max_grammar_seconds

    def convert() -> tuple[dict[str, str], str]:
        converter = SchemaConverter(prop_order={}, allow_fetch=False, dotall=False,
                                    raw_pattern=False)
        rules = {}
        for i, (name, schema) in enumerate(schemas.items()):
            # A copy (references are rewritten in place), each with its own base for $ref.
            own = converter.resolve_refs(json.loads(json.dumps(schema)),
                                         "stdin" if i == 0 else f"stdin{i}")
            rules[name] = converter.visit(own, "" if name == "root" else name)
        return rules, converter.format_grammar()

    def too_slow() -> Exception:
        return GrammarRefused(
            f"Turning {where} into a grammar took longer than this runner's limit of "
            f"{seconds:g} s ({FLAGS['max_grammar_seconds']}): use fewer optional properties "
            "or a simpler schema.")

    try:
        # The converter's work grows with the square of an object's optional properties, which
        # no size check bounds alone: stopped at the deadline (the same mechanism as a chat
        # template's render; a trace function could be displaced by any other tracer).
        rules, gbnf = run_with_deadline(convert, seconds, too_slow)
    except GrammarRefused:
        raise
    except RecursionError:
        raise GrammarRefused(f"{where} is nested too deeply to become a grammar; make it "
                             "flatter.") from None
    except Exception as exc:
        raise GrammarInvalid(f"{where} could not be turned into a grammar: "
                             f"{_short(str(exc) or type(exc).__name__, 200)}") from None
    check_grammar(gbnf, limits, where)
    return rules, gbnf


def split_parse_dump(output: str, gbnf: str) -> tuple[str, str]:
    """llama.cpp writes a grammar it cannot parse to stderr whole, after the reason
    (``parse: error parsing grammar: <reason>\\n\\n<grammar>\\n``). Returns the reason, cut to a
    line, and the rest of ``output`` without the dump."""
    marker = "error parsing grammar: "
    at = output.find(marker)
    if at < 0:
        return "", output
    line_start = output.rfind("\n", 0, at) + 1
    block = "\n\n" + gbnf + "\n"
    end = output.find(block, at)
    if end < 0:  # not the expected shape: drop everything after the marker rather than risk it
        reason, rest = output[at + len(marker):], output[:line_start]
    else:
        reason, rest = output[at + len(marker):end], output[:line_start] + output[end + len(block):]
    return _short(reason.split("\n", 1)[0].strip(), 160), rest


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


# ---- the thread that builds them -------------------------------------------------------------

class GrammarWorker:
    """One thread with a deep stack that runs grammar builds, one at a time.

    One at a time: a build holds a core (the converter also holds the GIL), and llama.cpp's
    parse errors are caught from stderr, which only one build may borrow at once.
    """

    def __init__(self, stack_bytes: int = GRAMMAR_STACK_BYTES) -> None:
        self._jobs: queue.SimpleQueue[tuple[Future[Any], Callable[[], Any]] | None] = \
            queue.SimpleQueue()
        self.building = False  # a build runs now (/runner/status shows it)
        self._thread = start_thread(self._run, "grammar", stack_bytes)

    def submit(self, fn: Callable[[], T]) -> Future[T]:
        future: Future[T] = Future()
        self._jobs.put((future, fn))
        return future

    def stop(self) -> None:
        self._jobs.put(None)

    def _run(self) -> None:
        while (job := self._jobs.get()) is not None:
            future, fn = job
            if not future.set_running_or_notify_cancel():
                continue  # its request went away while it waited
            self.building = True
            try:
                future.set_result(fn())
            except BaseException as exc:  # delivered to the request, never kills the thread
                future.set_exception(exc)
            finally:
                self.building = False


_stack_lock = threading.Lock()


def start_thread(target: Callable[[], None], name: str, stack_bytes: int) -> threading.Thread:
    """Start a daemon thread with a stack of ``stack_bytes``.

    ``threading.stack_size`` is process-wide and applies to threads created after it: set it,
    start this one, and put it back, under a lock so two callers cannot interleave.
    """
    with _stack_lock:
        try:
            previous = threading.stack_size(stack_bytes)
        except (ValueError, RuntimeError) as exc:  # a platform that refuses the size
            log.warning("could not give the %s thread a %d MiB stack (%s); using the default",
                        name, stack_bytes >> 20, exc)
            previous = None
        try:
            thread = threading.Thread(target=target, name=name, daemon=True)
            thread.start()
        finally:
            if previous is not None:
                threading.stack_size(previous)
    return thread
