"""Hostile inputs against the real runner: each case must leave it up and answering.

A case that crashes the runner must not take the next cases down with it, so the runners here are
per module and started again when a case killed them.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import replace

import pytest

from tests.fixtures.models import TINY, model_path
from tests.integration.conftest import (  # noqa: F401  (fixtures, used by name)
    Runner,
    spawn_ready,
    start_runner,
    stop_runner,
    tiny_model,
)
from tests.integration.test_tool_calls import HERMES_TEMPLATE

RunnerSource = Callable[[], Runner]


def _ready(*args: str, model: str | os.PathLike[str] | None = None) -> Runner:
    return spawn_ready(*args, model=model)


def _keep_alive(*args: str, model: str | os.PathLike[str] | None = None
                ) -> Iterator[RunnerSource]:
    """A runner shared by a module's cases; a case that killed it gets a new one."""
    current: list[Runner] = []

    def get() -> Runner:
        if not current or current[-1].process.poll() is not None:
            current.append(_ready(*args, model=model))
        return current[-1]

    yield get
    for r in current:
        if r.process.poll() is None:
            stop_runner(r)


@pytest.fixture(scope="module")
def hostile_runner() -> Iterator[RunnerSource]:
    yield from _keep_alive()


@pytest.fixture(scope="module")
def tool_runner() -> Iterator[RunnerSource]:
    """The tiny model with a Hermes tool-call template, so tool_choice "required" is honoured."""
    model = model_path(replace(TINY, chat_template=HERMES_TEMPLATE, name="hearth-tools"))
    yield from _keep_alive(model=model)
