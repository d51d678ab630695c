"""The chat's tool loop through the real runner: a generated model with a Hermes template,
``tool_choice`` forcing a call, the real ChatStreamer parsing the streamed ``tool_calls``, the
real ToolService running the built-in calculator, the results sent back through the template."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from app.chat.toolcalls import rounds_of
from app.loading.endpoint import ChatEndpoint
from app.services.chat_session import ChatSession
from app.services.chat_stream import ChatStreamer
from app.services.tools import ToolService
from app.tools import config as tools_config
from app.tools.builtin import BUILTIN_TOOLS
from app.tools.config import ToolsConfig
from tests.fixtures.models import TINY, model_path
from tests.gui.fakes import FakeStore
from tests.integration.conftest import Runner, running
from tests.integration.test_tool_calls import HERMES_TEMPLATE


@pytest.fixture(scope="module")
def hermes_runner() -> Iterator[Runner]:
    with running(model=model_path(replace(TINY, chat_template=HERMES_TEMPLATE,
                                          name="hearth-tools"))) as r:
        yield r


def test_a_forced_call_runs_the_tool_and_goes_back_through_the_runner(
        qtbot: Any, tmp_path: Path, hermes_runner: Runner) -> None:
    path = tmp_path / "tools.json"
    calc = BUILTIN_TOOLS["calculate"].spec
    # Allowed without asking; one round per reply, so the second forced call ends the reply.
    tools_config.save(ToolsConfig(builtin=("calculate",), max_rounds=1).decided(calc, "allow"),
                      path)
    streamer = ChatStreamer()
    session = ChatSession(streamer, FakeStore(), params={
        "tool_choice": "required", "max_tokens": 400, "seed": 3, "temperature": 0.7})
    session.tools = ToolService(path)
    finished: list[Any] = []
    session.reply_finished.connect(finished.append)
    endpoint = ChatEndpoint.local(hermes_runner.url, hermes_runner.key, "hearth-tools",
                                  tools=True)
    try:
        assert session.send("what is six times seven ?", endpoint)
        qtbot.waitUntil(lambda: bool(finished), timeout=120_000)
    finally:
        session.close()
    reply = finished[0]
    (round_,) = rounds_of(reply)
    (call,) = round_["calls"]
    assert call["name"] == "calculate" and call["tool"] == "builtin/calculate"
    # The forced grammar wrote the arguments; the calculator ran them (a tiny model's
    # expression is rarely arithmetic: then its sentence is the result the model got).
    assert call["status"] in ("ok", "error") and call["result"]
    # The results went back through the template and the runner answered again: with another
    # forced call (over the one round allowed: the loop stops) or with text after the round.
    assert "Stopped after 1 rounds of tool calls" in reply.note or \
        (reply.content and not reply.note), (reply.content[:200], reply.note)
