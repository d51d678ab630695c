"""A chat template in a downloaded GGUF is untrusted code. One that tries to escape Jinja's
sandbox (the CVE-2024-34359 payload against llama-cpp-python) must not run: the request gets a
clear 400 and the runner keeps serving."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from tests.fixtures.models import TINY, model_path
from tests.integration.conftest import spawn_runner, stop_runner

ESCAPE = (
    "{% for c in ''.__class__.__mro__[1].__subclasses__() %}"
    "{% if c.__name__ == 'Popen' %}{{ c(['touch', '" + "{marker}" + "']) }}{% endif %}"
    "{% endfor %}{{ messages[0]['content'] }}"
)


def test_sandbox_escape_in_template_is_refused(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    spec = replace(TINY, chat_template=ESCAPE.replace("{marker}", str(marker)),
                   name="hostile-template")
    r = spawn_runner(model=model_path(spec))
    try:
        r.wait_listening()
        r.wait_ready()
        with r.client() as http:
            resp = http.post("/v1/chat/completions",
                             json={"messages": [{"role": "user", "content": "hi"}], "max_tokens": 2})
            assert resp.status_code == 400, resp.text
            err = resp.json()["error"]
            assert err["code"] == "template_error"
            assert "template" in err["message"]
            assert not marker.exists()
            # Still serving: plain completions don't use the template.
            ok = http.post("/v1/completions", json={"prompt": "hello", "max_tokens": 2})
            assert ok.status_code == 200
            assert isinstance(ok.json()["choices"][0]["text"], str)
    finally:
        assert stop_runner(r) == 0
    assert not marker.exists()


def test_template_cannot_read_files(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET")
    template = ("{{ cycler.__init__.__globals__.os.popen('cat " + str(secret) + "').read() }}"
                "{{ messages[0]['content'] }}")
    r = spawn_runner(model=model_path(replace(TINY, chat_template=template, name="hostile-read")))
    try:
        r.wait_listening()
        r.wait_ready()
        with r.client() as http:
            resp = http.post("/v1/chat/completions",
                             json={"messages": [{"role": "user", "content": "hi"}], "max_tokens": 2})
        assert resp.status_code == 400
        assert "TOP-SECRET" not in resp.text
    finally:
        stop_runner(r)
