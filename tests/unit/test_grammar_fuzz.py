"""Fuzz: nested schema bombs are refused, or their grammar stays within the limits.

Shapes unlike the reported ones (the issue's maxLength, pattern and maxItems) must be bounded too:
deep nesting, big repeats inside nested arrays and objects, nested quantifiers in patterns, wide
enums and unions, in any combination.
"""

from __future__ import annotations

import importlib.util
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from runner.grammar import GrammarInvalid, GrammarRefused, grammar_depth, schema_grammar
from runner.limits import Limits

pytestmark = pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None,
                                reason="llama-cpp-python is not installed")

LIMITS = Limits()
# Around the limits, and far past them.
COUNTS = st.one_of(st.integers(0, 50), st.integers(900, 1100), st.integers(1100, 10**8))


def _patterns() -> st.SearchStrategy[str]:
    atom = st.sampled_from(["a", "[a-z]", ".", "ab", r"\.", "(x|y)"])

    def quantified(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        return st.tuples(inner, COUNTS, COUNTS, st.booleans()).map(
            lambda t: f"({t[0]}){{{t[1]},{t[2]}}}" if t[3] else f"({t[0]}){{{t[1]}}}")

    body = st.recursive(atom, lambda inner: st.one_of(
        quantified(inner), st.lists(inner, min_size=1, max_size=3).map("".join)), max_leaves=8)
    return body.map(lambda p: f"^{p}$")


def _leaves() -> st.SearchStrategy[dict[str, Any]]:
    return st.one_of(
        st.builds(lambda n, m: {"type": "string", "minLength": min(n, m), "maxLength": m},
                  COUNTS, COUNTS),
        _patterns().map(lambda p: {"type": "string", "pattern": p}),
        st.integers(0, 3000).map(lambda n: {"enum": [f"v{i}" for i in range(n)]}),
        st.sampled_from([{"type": "integer"}, {"type": "boolean"}, {"type": "number"},
                         {"type": "string"}, {}]),
    )


def _branches(child: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    return st.one_of(
        st.builds(lambda c, lo, hi: {"type": "array", "items": c, "minItems": lo, "maxItems": hi},
                  child, COUNTS, COUNTS),
        st.builds(lambda props, required: {
            "type": "object", "properties": {f"p{i}": p for i, p in enumerate(props)},
            "required": [f"p{i}" for i in range(len(props)) if required]},
                  st.lists(child, min_size=1, max_size=4), st.booleans()),
        st.lists(child, min_size=1, max_size=4).map(lambda alts: {"anyOf": alts}),
    )


def _wrapped(schema: dict[str, Any], depth: int, kind: str) -> dict[str, Any]:
    for _ in range(depth):
        schema = {"type": "array", "items": schema} if kind == "array" else \
            {"type": "object", "properties": {"x": schema}, "required": ["x"]}
    return schema


SCHEMAS = st.one_of(
    st.recursive(_leaves(), _branches, max_leaves=12),
    st.builds(_wrapped, _leaves(), st.integers(1, 120), st.sampled_from(["array", "object"])),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(SCHEMAS)
def test_schema_bombs_are_refused_or_stay_within_the_limits(schema: dict[str, Any]) -> None:
    try:
        gbnf = schema_grammar(schema, LIMITS, "schema")
    except (GrammarRefused, GrammarInvalid) as exc:
        event(type(exc).__name__)
    else:
        event("admitted")
        assert len(gbnf.encode()) <= LIMITS.max_grammar_bytes
        assert grammar_depth(gbnf) <= LIMITS.max_grammar_depth
