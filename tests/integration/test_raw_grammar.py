"""A chat request's raw GBNF ``grammar`` (llama-server's extension): the reply follows it, and a
grammar llama.cpp cannot parse, or one over the limits, is a 400 that says why."""

from __future__ import annotations

from typing import Any

import pytest

from tests.integration.conftest import Runner

ASK = [{"role": "user", "content": "say something"}]


def post(runner: Runner, **extra: Any) -> Any:
    with runner.client() as http:
        return http.post("/v1/chat/completions",
                         json={"messages": ASK, "max_tokens": 32, **extra})


def test_the_reply_follows_the_grammar(runner: Runner) -> None:
    r = post(runner, grammar='root ::= "the warm " ("fire" | "hearth") "."', temperature=1.0,
             seed=4)
    assert r.status_code == 200, r.text
    assert r.json()["choices"][0]["message"]["content"] in ("the warm fire.", "the warm hearth.")


@pytest.mark.parametrize(("grammar", "says"), [
    ("root ::= (", "grammar"),
    ("root ::= " + "(" * 5000 + '"x"' + ")" * 5000, "nests"),
])
def test_a_bad_grammar_is_a_400_that_says_why(runner: Runner, grammar: str, says: str) -> None:
    r = post(runner, grammar=grammar)
    assert r.status_code == 400, r.text
    assert says in r.json()["error"]["message"]
