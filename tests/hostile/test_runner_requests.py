"""Request values and flags the runner must refuse rather than take silently (issue 24)."""

from __future__ import annotations

import json
import math

import pytest

from tests.hostile.conftest import RunnerSource
from tests.integration.conftest import spawn_runner


@pytest.mark.timeout(60)
@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf], ids=["nan", "inf", "-inf"])
def test_non_finite_logit_bias_is_a_400(hostile_runner: RunnerSource, value: float) -> None:
    """NaN was clamped to +100 (min(100, nan) is 100): the token was forced, silently."""
    r = hostile_runner()
    body = {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 2,
            "logit_bias": {"5": value}}
    with r.client() as http:
        # json.dumps writes NaN and Infinity, which Python's JSON reader (the server's) accepts.
        resp = http.post("/v1/chat/completions", content=json.dumps(body),
                         headers={"Content-Type": "application/json"})
    assert resp.status_code == 400, resp.text
    message = resp.json()["error"]["message"]
    assert "logit_bias" in message and "5" in message, message


@pytest.mark.timeout(60)
@pytest.mark.parametrize("host", ["0.0.0.0", "::"])
def test_no_auth_on_a_shared_interface_is_refused(host: str) -> None:
    """--no-auth --allow-remote served every interface with no key and no warning."""
    r = spawn_runner("--no-auth", "--allow-remote", "--host", host, "--port", "0", key=None)
    try:
        code = r.process.wait(30)
    except Exception:
        r.kill()
        raise AssertionError(f"the runner started serving {host} without a key: "
                             f"{r.stdout_lines}") from None
    r.join_streams()
    assert code == 2, r.stderr_text()
    assert not r.stdout_lines, r.stdout_lines  # it never listened
    assert "--no-auth" in r.stderr_text() and "HEARTH_API_KEY" in r.stderr_text()
