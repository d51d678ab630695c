"""`hearth env` (app/cli/env.py): the lines that point a tool at the model server.

The sh lines are read back by a real bash (``eval``), with a key built to run a command if any
quoting slipped; fish and PowerShell lines are read back by their quoting rules written out
here, and by the real shells where installed. main() runs against a temporary Hearth home with
no keyring (tests/conftest.py sets both), so the key comes from the owner-only file.
"""

from __future__ import annotations

import io
import json
import os
import shlex
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from app.cli import env as env_cli
from app.remote import share, tool_env
from app.remote.tool_env import env_lines
from app.settings import AppSettings, save_settings
from app.storage import secrets
from app.storage.secrets import SecretStoreError

URL = "http://127.0.0.1:4327"
KEY = "k3y_-AbC"


def hostile_key(canary: Path) -> str:
    """A key that runs ``touch canary`` under any quoting mistake, in any of the three shells."""
    return (f"a'b\"c $(touch {canary}) `touch {canary}` ; touch {canary} ; $HOME ${{HOME}} "
            f"\\' \\\\ ' ‘’‚‛ $(New-Item {canary}) & | > x %PATH% !x é")


# -- the lines ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("shell", "expected"), [
    ("sh", ["export OPENAI_BASE_URL=http://127.0.0.1:4327/v1", f"export OPENAI_API_KEY={KEY}"]),
    ("fish", ["set -gx OPENAI_BASE_URL 'http://127.0.0.1:4327/v1'",
              f"set -gx OPENAI_API_KEY '{KEY}'"]),
    ("powershell", ["$env:OPENAI_BASE_URL = 'http://127.0.0.1:4327/v1'",
                    f"$env:OPENAI_API_KEY = '{KEY}'"]),
])
def test_openai(shell: tool_env.Shell, expected: list[str]) -> None:
    assert env_lines("openai", URL, KEY, shell) == expected


@pytest.mark.parametrize(("shell", "expected"), [
    ("sh", ["export ANTHROPIC_BASE_URL=http://127.0.0.1:4327",
            f"export ANTHROPIC_AUTH_TOKEN={KEY}"]),
    ("fish", ["set -gx ANTHROPIC_BASE_URL 'http://127.0.0.1:4327'",
              f"set -gx ANTHROPIC_AUTH_TOKEN '{KEY}'"]),
    ("powershell", ["$env:ANTHROPIC_BASE_URL = 'http://127.0.0.1:4327'",
                    f"$env:ANTHROPIC_AUTH_TOKEN = '{KEY}'"]),
])
def test_anthropic(shell: tool_env.Shell, expected: list[str]) -> None:
    assert env_lines("anthropic", URL + "/", KEY, shell) == expected


@pytest.mark.parametrize(("shell", "expected"), [
    ("sh", ["export OLLAMA_HOST=http://127.0.0.1:4327", f"export OLLAMA_API_KEY={KEY}"]),
    ("fish", ["set -gx OLLAMA_HOST 'http://127.0.0.1:4327'",
              f"set -gx OLLAMA_API_KEY '{KEY}'"]),
    ("powershell", ["$env:OLLAMA_HOST = 'http://127.0.0.1:4327'",
                    f"$env:OLLAMA_API_KEY = '{KEY}'"]),
])
def test_ollama_adds_a_comment_on_the_bearer_header(shell: tool_env.Shell,
                                                    expected: list[str]) -> None:
    lines = env_lines("ollama", URL, KEY, shell)
    assert lines[:2] == expected
    comments = lines[2:]
    assert comments and all(line.startswith("# ") for line in comments)
    assert f"Authorization: Bearer {KEY}" in comments[0]


def test_unknown_kind_or_shell_or_a_control_character_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="kind"):
        env_lines("lmstudio", URL, KEY, "sh")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="shell"):
        env_lines("openai", URL, KEY, "cmd")  # type: ignore[arg-type]
    for key in ("a\nexport EVIL=1", "a\rb", "a\x00b"):
        with pytest.raises(ValueError, match="control character"):
            env_lines("ollama", URL, key, "sh")


# -- quoting: read back by each shell's rules --------------------------------------------------


def fish_single_quoted(text: str) -> str:
    """fish: inside '...', \\' is a quote and \\\\ a backslash; every other character,
    a backslash before anything else included, is itself."""
    assert text[0] == "'" and text[-1] == "'"
    out, i, body = [], 0, text[1:-1]
    while i < len(body):
        c = body[i]
        if c == "\\" and i + 1 < len(body) and body[i + 1] in "\\'":
            out.append(body[i + 1])
            i += 2
            continue
        assert c != "'", "an unescaped quote ends the string early"
        out.append(c)
        i += 1
    return "".join(out)


PS_QUOTES = "'\u2018\u2019\u201a\u201b"


def powershell_single_quoted(text: str) -> str:
    """PowerShell: inside '...', any of its five single quotes doubled is one quote (the
    second is kept); nothing else is special."""
    assert text[0] in PS_QUOTES and text[-1] in PS_QUOTES
    out, i, body = [], 0, text[1:-1]
    while i < len(body):
        c = body[i]
        if c in PS_QUOTES:
            assert i + 1 < len(body) and body[i + 1] in PS_QUOTES, "a lone quote ends the string"
            out.append(body[i + 1])
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


def test_fish_and_powershell_read_a_hostile_key_back_unchanged(tmp_path: Path) -> None:
    key = hostile_key(tmp_path / "pwned")
    fish = env_lines("openai", URL, key, "fish")[1]
    prefix = "set -gx OPENAI_API_KEY "
    assert fish.startswith(prefix) and fish_single_quoted(fish[len(prefix):]) == key
    ps = env_lines("openai", URL, key, "powershell")[1]
    prefix = "$env:OPENAI_API_KEY = "
    assert ps.startswith(prefix) and powershell_single_quoted(ps[len(prefix):]) == key


def run_in(shell: list[str], script: str, cwd: Path) -> str:
    done = subprocess.run([*shell, script], capture_output=True, text=True, timeout=60,
                          cwd=cwd, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("kind", ["openai", "anthropic", "ollama"])
def test_bash_evals_the_lines_and_reads_a_hostile_key_back(kind: tool_env.Kind,
                                                           tmp_path: Path) -> None:
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("bash is not installed")
    canary = tmp_path / "pwned"
    key = hostile_key(canary)
    lines = "\n".join(env_lines(kind, URL, key, "sh"))
    names = [name for name, _ in tool_env.variables(kind, URL, key)]
    script = 'eval "$1"; ' + "; ".join(f'printf "%s\\0" "${name}"' for name in names)
    done = subprocess.run([bash, "-c", script, "bash", lines], capture_output=True, timeout=60,
                          cwd=tmp_path, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode("utf-8").split("\0")[:-1] == \
        [value for _, value in tool_env.variables(kind, URL, key)]
    assert not canary.exists()


@pytest.mark.parametrize("shell", ["fish", "pwsh"])
def test_the_real_fish_and_powershell_read_the_key_back(shell: str, tmp_path: Path) -> None:
    program = shutil.which(shell)
    if program is None:
        pytest.skip(f"{shell} is not installed")
    canary = tmp_path / "pwned"
    key = hostile_key(canary)
    if shell == "fish":
        script = "\n".join(env_lines("openai", URL, key, "fish")) + \
            "\nprintf '%s' \"$OPENAI_API_KEY\""
        said = run_in([program, "-c"], script, tmp_path)
    else:
        script = "\n".join(env_lines("openai", URL, key, "powershell")) + \
            "\n[Console]::Out.Write($env:OPENAI_API_KEY)"
        said = run_in([program, "-NoProfile", "-Command"], script, tmp_path)
    assert said == key
    assert not canary.exists()


# -- main() --------------------------------------------------------------------------------------


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A Hearth home of its own, no keyring, and a fresh shared key (the process keeps one)."""
    monkeypatch.setenv("HEARTH_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")
    monkeypatch.setattr(share, "SHARED_KEY", share.SharedKey())
    assert not secrets.keyring_usable()
    yield tmp_path / "home"


def run_main(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = env_cli.main(argv, out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def test_main_prints_the_servers_address_and_the_kept_key(home: Path, tmp_path: Path) -> None:
    code, out, err = run_main(["openai", "--shell", "sh"])
    assert (code, err) == (0, "")
    key = secrets.get(share.KEY_NAME)
    assert key and (home / "config" / "secrets.json").is_file()  # made once, kept
    assert out == (f"export OPENAI_BASE_URL=http://127.0.0.1:{share.DEFAULT_PORT}/v1\n"
                   f"export OPENAI_API_KEY={key}\n")
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("bash is not installed")
    printed = tmp_path / "printed.sh"
    printed.write_text(out, encoding="utf-8")
    said = run_in([bash, "-c"], f'eval "$(cat {printed})"; echo "$OPENAI_BASE_URL"', tmp_path)
    assert said == f"http://127.0.0.1:{share.DEFAULT_PORT}/v1\n"
    # The same key the next time.
    assert run_main(["anthropic", "--shell", "fish"])[1].endswith(f"'{key}'\n")


def test_the_command_itself_evals_in_bash(home: Path, tmp_path: Path) -> None:
    """`eval "$(hearth env openai)"` as a person types it, with this checkout's Python."""
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("bash is not installed")
    save_settings(AppSettings(runner_port=5123))
    command = f"{sys.executable} -m app.cli.env"
    script = (f'eval "$({command} openai --shell sh)" && '
              'printf "%s\\n%s\\n" "$OPENAI_BASE_URL" "$OPENAI_API_KEY"')
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    done = subprocess.run([bash, "-c", script], capture_output=True, text=True, timeout=120,
                          cwd=tmp_path, env=env, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"http://127.0.0.1:5123/v1\n{secrets.get(share.KEY_NAME)}\n"


@pytest.mark.parametrize(("changes", "url"), [
    ({"runner_port": 5555}, "http://127.0.0.1:5555"),
    # Sharing on loopback or on every network: reached on loopback from here.
    ({"share_runner": True, "share_host": "0.0.0.0"}, f"http://127.0.0.1:{share.DEFAULT_PORT}"),
    ({"share_runner": True, "share_host": "::"}, f"http://[::1]:{share.DEFAULT_PORT}"),
    # Sharing on one address: the server listens there only, so that is where to go.
    ({"share_runner": True, "share_host": "192.168.1.20"},
     f"http://192.168.1.20:{share.DEFAULT_PORT}"),
    ({"share_runner": True, "share_host": "fd00::5"}, f"http://[fd00::5]:{share.DEFAULT_PORT}"),
    # An address chosen while sharing was on does not count once it is off.
    ({"share_runner": False, "share_host": "192.168.1.20"},
     f"http://127.0.0.1:{share.DEFAULT_PORT}"),
])
def test_the_address_follows_the_settings(home: Path, changes: dict[str, Any], url: str) -> None:
    save_settings(AppSettings().with_changes(**changes))
    code, out, _ = run_main(["ollama", "--shell", "sh"])
    assert code == 0
    assert out.splitlines()[0] == f"export OLLAMA_HOST={shlex.quote(url)}"


def test_a_port_that_changes_at_every_start_is_a_sentence(home: Path) -> None:
    save_settings(AppSettings(runner_port=0))
    code, out, err = run_main(["openai"])
    assert (code, out) == (2, "")
    assert err.startswith("hearth env: ") and "fixed port" in err


def test_a_failing_secret_store_exits_2_with_a_sentence(home: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    class Broken:
        def get(self, name: str) -> str | None:
            raise SecretStoreError("The system keyring is locked: unlock it and try again.")

        def put(self, name: str, value: str) -> None:
            raise AssertionError("not reached")

        def notice(self) -> str:
            return ""

    monkeypatch.setattr(share, "SHARED_KEY", share.SharedKey(Broken()))
    code, out, err = run_main(["anthropic"])
    assert (code, out) == (2, "")
    assert err == "hearth env: The system keyring is locked: unlock it and try again.\n"


def test_a_key_no_shell_can_carry_exits_2(home: Path) -> None:
    secrets.put(share.KEY_NAME, "bad\nkey")
    code, out, err = run_main(["openai"])
    assert (code, out) == (2, "")
    assert "Rotate key" in err


def test_bad_arguments_are_argparse_errors(home: Path) -> None:
    with pytest.raises(SystemExit) as caught:
        env_cli.main(["lmstudio"])
    assert caught.value.code == 2


# -- an Ollama client set up by the lines sends the key ------------------------------------------


def test_ollamas_python_client_sends_the_key_from_the_lines(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """OLLAMA_API_KEY is worth printing: the official client sends it as the Bearer header."""
    ollama = pytest.importorskip("ollama")
    seen: dict[str, str] = {}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen["path"] = self.path
            seen["authorization"] = self.headers.get("Authorization", "")
            body = json.dumps({"models": []}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        bash = shutil.which("bash")
        if bash is None:
            pytest.skip("bash is not installed")
        lines = "\n".join(env_lines("ollama", url, KEY, "sh"))
        said = subprocess.run([bash, "-c", 'eval "$1"; printf "%s\\0%s" "$OLLAMA_HOST" '
                               '"$OLLAMA_API_KEY"', "bash", lines], capture_output=True,
                              text=True, timeout=60, check=True).stdout.split("\0")
        monkeypatch.setenv("OLLAMA_HOST", said[0])
        monkeypatch.setenv("OLLAMA_API_KEY", said[1])
        ollama.Client().list()
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
    assert seen == {"path": "/api/tags", "authorization": f"Bearer {KEY}"}
