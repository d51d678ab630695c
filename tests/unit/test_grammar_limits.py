"""The bounds a JSON schema and its grammar must keep before llama.cpp sees them (runner/grammar)."""

from __future__ import annotations

import argparse
import importlib.util
import threading
from typing import Any

import pytest

from runner.grammar import (
    GrammarInvalid,
    GrammarRefused,
    GrammarWorker,
    check_grammar,
    check_schema,
    grammar_depth,
    nested_repeat,
    pattern_repeats,
    schema_grammar,
    split_parse_dump,
    start_thread,
)
from runner.limits import Limits, add_limit_flags, limits_from_args

LIMITS = Limits()
WHERE = "response_format.json_schema.schema"
# The schema-to-GBNF converter is llama-cpp-python's (the runner's dependency).
needs_converter = pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None,
                                     reason="llama-cpp-python is not installed")


@pytest.mark.parametrize("key", ["minItems", "maxItems", "minLength", "maxLength"])
def test_a_repeat_over_the_limit_is_refused_with_its_path_and_the_flag(key: str) -> None:
    schema = {"type": "object", "properties": {"a": {"type": "array", key: 1001}}}
    with pytest.raises(GrammarRefused) as err:
        check_schema(schema, LIMITS, WHERE)
    message = str(err.value)
    assert f"{WHERE}.properties.a.{key} is 1001" in message
    assert "1000" in message and "--max-schema-repeat" in message


@pytest.mark.parametrize("key", ["minItems", "maxItems", "minLength", "maxLength"])
def test_a_repeat_at_the_limit_is_admitted(key: str) -> None:
    check_schema({"type": "array", key: 1000}, LIMITS, WHERE)


@pytest.mark.parametrize("value", [1.5, "10", True, -1, None, [3]])
def test_a_repeat_that_is_not_a_count_is_invalid(value: Any) -> None:
    with pytest.raises(GrammarInvalid, match="must be a whole number"):
        check_schema({"type": "string", "maxLength": value}, LIMITS, WHERE)


def test_properties_named_like_keywords_are_not_read_as_keywords() -> None:
    schema = {"type": "object", "properties": {
        "maxLength": {"type": "integer"}, "enum": {"type": "string"},
        "pattern": {"type": "string", "description": "{99999}"}}}
    check_schema(schema, LIMITS, WHERE)


def test_data_is_not_read_as_a_schema() -> None:
    check_schema({"const": {"maxItems": 10**9}, "default": {"minLength": "x"}}, LIMITS, WHERE)


@pytest.mark.parametrize(("pattern", "counts"), [
    ("^a{0,100000}$", [0, 100000]),
    ("^a{5}$", [5]),
    ("^a{ 2 , }$", [2]),
    ("^(ab{1,3}){2,4}$", [1, 3, 2, 4]),
    (r"^\{99999\}$", []),  # escaped braces are characters
    ("^[{99999}]$", []),  # and so are braces in a character class
    (r"^[\]{]{7}$", [7]),
    ("^a{x}$", []),  # not a count: the converter reports it itself
])
def test_pattern_repeats_reads_counts_as_the_converter_does(pattern: str, counts: list[int]) -> None:
    assert list(pattern_repeats(pattern)) == counts


@pytest.mark.parametrize(("pattern", "product"), [
    ("^a{0,1000}$", 1),  # flat: a chain, one parse stack at a time
    ("^a{0,1000}b{0,1000}$", 1),
    ("^((a){0,30}){0,20}$", 600),
    ("^(a*){0,50}$", 50),  # a star counts once, but the group can match in many ways
    (r"^(\d{1,3}\.){3}\d{1,3}$", 9),  # an IPv4 address
    ("^([a-z]+\\.)+[a-z]{2,6}$", 1),  # a host name: unbounded repeats are recursion, not chains
    ("^(((a){0,4}){0,4}){0,4}$", 64),
    ("^(a{0,8}|(b{0,9}){0,2}){0,3}$", 54),
    ("^a{2}{3}$", 6),
])
def test_nested_repeat_multiplies_repeats_inside_repeated_groups(pattern: str,
                                                                 product: int) -> None:
    assert nested_repeat(pattern) == product


def test_nested_repeats_over_the_limit_are_refused() -> None:
    check_schema({"type": "string", "pattern": "^((a){0,8}){0,8}$"}, LIMITS, WHERE)
    with pytest.raises(GrammarRefused, match=r"nests repeats 1000 deep.*--max-nested-repeat"):
        check_schema({"type": "string", "pattern": "^(a*){0,1000}$"}, LIMITS, WHERE)


def test_a_nested_pattern_repeat_over_the_limit_is_refused() -> None:
    with pytest.raises(GrammarRefused, match=r"pattern repeats something 5000 times"):
        check_schema({"type": "string", "pattern": "^((a){0,10}){1,5000}$"}, LIMITS, WHERE)


@pytest.mark.parametrize(("schema", "path"), [
    ({"enum": list(range(1001))}, f"{WHERE}.enum has 1001 entries"),
    ({"anyOf": [{"const": i} for i in range(1001)]}, f"{WHERE}.anyOf has 1001 entries"),
    ({"type": "object", "properties": {f"p{i}": {} for i in range(1001)}},
     f"{WHERE}.properties has 1001 properties"),
    ({"type": "array", "items": {"enum": ["x"] * 1001}}, f"{WHERE}.items.enum has 1001"),
])
def test_too_many_items_are_refused(schema: dict[str, Any], path: str) -> None:
    with pytest.raises(GrammarRefused) as err:
        check_schema(schema, LIMITS, WHERE)
    assert path in str(err.value) and "--max-schema-items" in str(err.value)


def test_deep_nesting_is_refused_without_recursing() -> None:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(100_000):  # far past Python's recursion limit: the check must be iterative
        schema = {"type": "array", "items": schema}
    with pytest.raises(GrammarRefused, match="nested more than 64 levels"):
        check_schema(schema, LIMITS, WHERE)


def test_deep_data_counts_too() -> None:
    value: Any = 1
    for _ in range(70):
        value = [value]
    with pytest.raises(GrammarRefused, match="--max-schema-depth"):
        check_schema({"const": value}, LIMITS, WHERE)


def test_grammar_depth_skips_strings_classes_and_comments() -> None:
    assert grammar_depth('root ::= ("(" ([(] x)?)? # (((((\n') == 2
    assert grammar_depth('root ::= "\\"(" ((a))') == 2
    assert grammar_depth("root ::= a") == 0


def test_check_grammar_refuses_long_and_deep_grammars() -> None:
    small = Limits(max_grammar_bytes=100, max_grammar_depth=3)
    check_grammar('root ::= ((("a")))', small, WHERE)
    with pytest.raises(GrammarRefused, match=r"101 bytes.*--max-grammar-bytes"):
        check_grammar("root ::= " + "a" * 92, small, WHERE)
    with pytest.raises(GrammarRefused, match=r"nests 4 groups deep.*--max-grammar-depth"):
        check_grammar('root ::= (((("a"))))', small, WHERE)


@needs_converter
def test_the_grammar_of_an_admitted_schema_is_made() -> None:
    gbnf = schema_grammar({"type": "object", "properties": {"s": {"type": "string",
                                                                   "maxLength": 1000}}},
                          LIMITS, WHERE)
    assert "root ::=" in gbnf and grammar_depth(gbnf) <= LIMITS.max_grammar_depth


@needs_converter
def test_a_schema_the_converter_cannot_read_is_invalid() -> None:
    with pytest.raises(GrammarInvalid, match="could not be turned into a grammar"):
        schema_grammar({"type": "no-such-type"}, LIMITS, WHERE)


@needs_converter
def test_a_slow_conversion_is_stopped_at_the_time_limit() -> None:
    # Optional properties cost the converter n squared; no size check catches this shape.
    schema = {"type": "object", "properties": {f"p{i}": {"type": "string"} for i in range(900)}}
    with pytest.raises(GrammarRefused, match=r"took longer than.*--max-grammar-seconds"):
        schema_grammar(schema, Limits(max_grammar_seconds=0.05), WHERE)


@needs_converter
def test_a_grammar_over_the_byte_limit_is_refused_after_conversion() -> None:
    schema = {"enum": ["x" * 200 + str(i) for i in range(1000)]}
    with pytest.raises(GrammarRefused, match="--max-grammar-bytes"):
        schema_grammar(schema, LIMITS, WHERE)


def test_split_parse_dump_keeps_the_reason_and_drops_the_grammar() -> None:
    gbnf = 'root ::= "\\d"+\n' + "filler ::= x\n" * 500
    output = (f'before\nparse: error parsing grammar: unknown escape at \\d"+\nfiller ::=\n\n'
              f"{gbnf}\nafter\n")
    reason, rest = split_parse_dump(output, gbnf)
    assert reason == 'unknown escape at \\d"+'
    assert rest == "before\nafter\n"
    assert split_parse_dump("other\n", gbnf) == ("", "other\n")


def test_split_parse_dump_drops_a_dump_of_unexpected_shape() -> None:
    reason, rest = split_parse_dump("x\nparse: error parsing grammar: " + "y" * 5000, "z")
    assert rest == "x\n" and len(reason) <= 160


def test_the_worker_delivers_results_and_errors() -> None:
    worker = GrammarWorker(stack_bytes=64 * 2**20)
    try:
        assert worker.submit(lambda: threading.current_thread().name).result(5) == "grammar"
        with pytest.raises(ZeroDivisionError):
            worker.submit(lambda: 1 // 0).result(5)
        assert worker.submit(lambda: 2).result(5) == 2  # still alive after an error
    finally:
        worker.stop()


def test_start_thread_puts_the_stack_size_back() -> None:
    before = threading.stack_size()
    done = threading.Event()
    start_thread(done.set, "t", 32 * 2**20).join(5)
    assert done.is_set() and threading.stack_size() == before


def test_limit_flags() -> None:
    parser = argparse.ArgumentParser()
    add_limit_flags(parser)
    assert limits_from_args(parser.parse_args([])) == Limits()
    got = limits_from_args(parser.parse_args(["--max-schema-repeat", "5",
                                              "--max-grammar-seconds", "0.5"]))
    assert got.max_schema_repeat == 5 and got.max_grammar_seconds == 0.5
    for bad in (["--max-schema-repeat", "0"], ["--max-grammar-seconds", "nan"]):
        with pytest.raises(SystemExit):
            parser.parse_args(bad)
