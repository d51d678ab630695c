"""Big and many: request bodies, messages and chat templates the runner must bound (issue 24, 3).

A 50 MB message gave no answer to anyone (``/health`` included) for 8.2 s: the body had no limit
and the chat template and tokenizer ran on the event loop. The template is the GGUF's own, so it
is untrusted code as well: its render time and output are bounded.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import httpx2
import pytest

from tests.fixtures.models import CHATML_TEMPLATE, TINY, model_path
from tests.hostile.conftest import RunnerSource
from tests.integration.conftest import Runner

MIB = 2**20
JSON = {"Content-Type": "application/json"}

# Renders in a second or two, only for a conversation whose first message starts with SLOW (the
# runner renders a plain conversation at load to find the turn boundary).
SLOW_TEMPLATE = ("{% if messages[0]['content'][:4] == 'SLOW' %}{% for i in range(100000) %}"
                 "{% for j in range(60) %}{% set x = i * j %}{% endfor %}{% endfor %}{% endif %}"
                 + CHATML_TEMPLATE)
# Fails to render when the first message begins with FAIL: shows whether a request was rendered.
FAILING_TEMPLATE = ("{% if messages[0]['content'][:4] == 'FAIL' %}{{ raise_exception('rendered') }}"
                    "{% endif %}" + CHATML_TEMPLATE)
# Never ends: three nested loops of 100,000 (the sandbox's largest range).
ENDLESS_TEMPLATE = ("{% if messages[0]['content'] == 'LOOP' %}{% for i in range(100000) %}"
                    "{% for j in range(100000) %}{% for k in range(100000) %}{% set x = i * j * k %}"
                    "{% endfor %}{% endfor %}{% endfor %}{% endif %}" + CHATML_TEMPLATE)
# Writes each message a hundred thousand times: 100 MB of prompt from a 1 KB message.
ECHO_TEMPLATE = ("{% for message in messages %}{% if message['content'][:4] == 'ECHO' %}"
                 "{% for i in range(100000) %}{{ message['content'] }}{% endfor %}{% endif %}"
                 "{% endfor %}" + CHATML_TEMPLATE)


def _body(content: str | None = None, n_messages: int = 1, **extra: Any) -> bytes:
    messages = [{"role": "user", "content": content if content is not None else "hi"}] * n_messages
    return json.dumps({"messages": messages, "max_tokens": 2, **extra}).encode()


def _post(r: Runner, body: bytes | Iterator[bytes], timeout: float = 60.0,
          headers: dict[str, str] | None = None) -> httpx2.Response:
    with r.client(timeout=httpx2.Timeout(timeout)) as http:
        return http.post("/v1/chat/completions", content=body, headers={**JSON, **(headers or {})})


def _error(resp: httpx2.Response) -> dict[str, Any]:
    err: dict[str, Any] = resp.json()["error"]
    return err


def _assert_up(r: Runner) -> None:
    assert r.process.poll() is None, r.stderr_text()[-2000:]
    with r.client(timeout=httpx2.Timeout(60.0)) as http:
        assert http.get("/health").status_code == 200
        reply = http.post("/v1/chat/completions", json={
            "messages": [{"role": "user", "content": "hi"}], "max_tokens": 2})
    assert reply.status_code == 200, reply.text


def _runner_with(template: str, name: str, *args: str) -> Iterator[RunnerSource]:
    from tests.hostile.conftest import _keep_alive

    yield from _keep_alive(*args, model=model_path(replace(TINY, chat_template=template,
                                                           name=name)))


@pytest.fixture(scope="module")
def slow_runner() -> Iterator[RunnerSource]:
    yield from _runner_with(SLOW_TEMPLATE, "hearth-slow-template", "--max-template-seconds", "60")


@pytest.fixture(scope="module")
def failing_runner() -> Iterator[RunnerSource]:
    yield from _runner_with(FAILING_TEMPLATE, "hearth-failing-template")


@pytest.fixture(scope="module")
def endless_runner() -> Iterator[RunnerSource]:
    yield from _runner_with(ENDLESS_TEMPLATE, "hearth-endless-template",
                            "--max-template-seconds", "1")


@pytest.fixture(scope="module")
def echo_runner() -> Iterator[RunnerSource]:
    yield from _runner_with(ECHO_TEMPLATE, "hearth-echo-template")


@pytest.mark.timeout(120)
def test_fifty_megabyte_message_is_a_413_and_health_answers_meanwhile(
        hostile_runner: RunnerSource) -> None:
    """Today: no body limit; the 50 MB message was read, parsed, rendered and tokenized on the
    event loop (about 10 s here, /health unanswered throughout) and ended in a 400 for its
    context length."""
    r = hostile_runner()
    body = _body("hello world " * (50 * MIB // 12))
    result: list[httpx2.Response | BaseException] = []

    def send() -> None:
        try:
            result.append(_post(r, body, timeout=100))
        except BaseException as exc:  # reported below
            result.append(exc)

    sender = threading.Thread(target=send)
    sender.start()
    with r.client(timeout=httpx2.Timeout(30.0)) as http:
        health = http.get("/health")
    sender.join(100)
    assert health.status_code == 200
    assert result and isinstance(result[0], httpx2.Response), result
    resp = result[0]
    assert resp.status_code == 413, resp.text[:500]
    message = _error(resp)["message"]
    assert "32 MiB" in message and "--max-body-mib" in message, message
    r.wait_event("body_too_large")
    _assert_up(r)


@pytest.mark.timeout(120)
def test_chunked_body_over_the_limit_is_a_413(hostile_runner: RunnerSource) -> None:
    """Without a Content-Length the body is counted as it arrives. Today: read whole, then
    parsed, rendered and tokenized on the event loop."""
    r = hostile_runner()
    content = "hello world " * (40 * MIB // 12)
    body = _body(content)

    def chunks() -> Iterator[bytes]:  # an iterator: httpx2 sends it chunked
        for at in range(0, len(body), MIB):
            yield body[at:at + MIB]

    try:
        resp = _post(r, chunks(), timeout=100)
    except httpx2.TransportError:
        # The runner stops reading at the limit and closes: a client still sending may see the
        # reset instead of the 413. It must not have taken the body whole.
        resp = None
    if resp is not None:
        assert resp.status_code == 413, resp.text[:500]
        assert "--max-body-mib" in _error(resp)["message"]
    r.wait_event("body_too_large")
    _assert_up(r)


@pytest.mark.timeout(180)
def test_a_big_message_being_rendered_does_not_block_health(slow_runner: RunnerSource) -> None:
    """A message just under the body limit whose render takes a second or two: /health, asked
    after the whole body was sent, answers before the big request does. Today the render ran on
    the event loop, so /health waited for it."""
    r = slow_runner()
    # A system message: the person's own messages alone would prove it too long before any
    # render (the next test), a system message's text a template may drop.
    body = json.dumps({"messages": [{"role": "system",
                                     "content": "SLOW" + "hello world " * (31 * MIB // 12)}],
                       "max_tokens": 2}).encode()
    assert len(body) < 32 * MIB
    sent = threading.Event()
    order: list[str] = []
    lock = threading.Lock()

    def chunks() -> Iterator[bytes]:
        for at in range(0, len(body), MIB):
            yield body[at:at + MIB]
        sent.set()  # runs when the client asks for more: the last chunk is written

    big: list[httpx2.Response] = []

    def send() -> None:
        big.append(_post(r, chunks(), timeout=150, headers={"Content-Length": str(len(body))}))
        with lock:
            order.append("big")

    sender = threading.Thread(target=send)
    sender.start()
    assert sent.wait(60), "the body was never sent"
    with r.client(timeout=httpx2.Timeout(150.0)) as http:
        health = http.get("/health")
    with lock:
        order.append("health")
    sender.join(150)
    assert health.status_code == 200
    assert big, "the big request did not finish"
    # A conversation far beyond the context: refused, but only after the template rendered it.
    assert big[0].status_code == 400, big[0].text[:500]
    assert order[0] == "health", f"/health answered only after the big request ({order})"
    _assert_up(r)


@pytest.mark.timeout(120)
def test_user_text_too_long_for_the_context_is_refused_before_the_template_renders(
        failing_runner: RunnerSource) -> None:
    """The person's messages are in every prompt, so their length alone can prove a prompt too
    long: refused without rendering megabytes first (the template here fails when it renders).
    A system message as long is rendered, since a template may leave its text out."""
    r = failing_runner()
    text = "FAIL" + "hello world " * (8 * MIB // 12)
    resp = _post(r, _body(text))
    assert resp.status_code == 400, resp.text[:500]
    assert _error(resp)["code"] == "context_length_exceeded", _error(resp)
    assert "at least" in _error(resp)["message"]
    parts = json.dumps({"messages": [{"role": "user", "content": [
        {"type": "text", "text": text}]}], "max_tokens": 2}).encode()
    assert _error(_post(r, parts))["code"] == "context_length_exceeded"
    system = json.dumps({"messages": [{"role": "system", "content": text},
                                      {"role": "user", "content": "hi"}],
                         "max_tokens": 2}).encode()
    rendered = _post(r, system)
    assert rendered.status_code == 400 and _error(rendered)["code"] == "template_error", \
        rendered.text[:500]
    _assert_up(r)


@pytest.mark.timeout(120)
def test_too_many_messages_is_a_400_naming_the_limit(hostile_runner: RunnerSource) -> None:
    """Today: every message was validated, rendered and tokenized on the event loop, and the
    request failed only on its context length (a million messages fit in a 32 MiB body)."""
    r = hostile_runner()
    resp = _post(r, _body("hi", n_messages=10_001))
    assert resp.status_code == 400, resp.text[:500]
    err = _error(resp)
    assert err["code"] == "too_many_messages", err
    assert "10000" in err["message"] and "--max-messages" in err["message"], err
    _assert_up(r)


@pytest.mark.timeout(120)
def test_endless_chat_template_is_stopped_and_named(endless_runner: RunnerSource) -> None:
    """A GGUF whose template loops (almost) for ever. Today: the render held the event loop,
    and no other request was ever answered."""
    r = endless_runner()
    resp = _post(r, _body("LOOP"), timeout=60)
    assert resp.status_code == 400, resp.text[:500]
    err = _error(resp)
    assert err["code"] == "template_too_slow", err
    assert "--max-template-seconds" in err["message"], err
    r.wait_event("template_refused")
    _assert_up(r)


@pytest.mark.timeout(120)
def test_chat_template_output_is_bounded(echo_runner: RunnerSource) -> None:
    """A template that writes each message a hundred thousand times: 100 MB of prompt from a
    1 KB message. Today: rendered whole and tokenized (tens of seconds, gigabytes)."""
    r = echo_runner()
    resp = _post(r, _body("ECHO" + "x" * 1000), timeout=100)
    assert resp.status_code == 400, resp.text[:500]
    err = _error(resp)
    assert err["code"] == "prompt_too_large", err
    assert "64 MiB" in err["message"] and "--max-prompt-mib" in err["message"], err
    _assert_up(r)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("expression", ["'x' * 10**10", "'x' | center(10**10)",
                                        "'x'.ljust(10**10)", "range(10) | list * 10**9",
                                        "10 ** (10 ** 8)"])
def test_one_huge_step_in_a_template_is_refused_before_it_is_made(expression: str) -> None:
    """``'x' * 10**10`` in a template would allocate 10 GB in one step of C, which no render
    deadline can interrupt; the sandbox refuses it before it is made."""
    from runner.template import BoundedChatFormatter, TemplateRefused

    formatter = BoundedChatFormatter("{{ " + expression + " }}", eos_token="", bos_token="",
                                     max_seconds=30.0, max_chars=64 * MIB)
    with pytest.raises(TemplateRefused, match="--max-prompt-mib"):
        formatter(messages=[{"role": "user", "content": "hi"}])
