"""`hearth search`, `hearth plan hf://…`, `hearth models`: real client, fake Hub, exit codes."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.cli import hub as cli
from app.cli import plan as plan_cli
from tests.fixtures.fake_hub import FakeHub
from tests.fixtures.header_only import LLAMA31_8B, write_header_only
from tests.fixtures.models import TINY, write_model

REPO = "acme/Llama-3.1-8B-Instruct-GGUF"
FILE = "Llama-3.1-8B-Instruct-Q4_K_M.gguf"
REPORTS = Path(__file__).resolve().parents[2] / "fixtures" / "hardware" / "reports"


@pytest.fixture(scope="module")
def llama(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_header_only(tmp_path_factory.mktemp("m") / FILE, LLAMA31_8B)


@pytest.fixture()
def hub(monkeypatch: pytest.MonkeyPatch, llama: Path) -> Iterator[FakeHub]:
    with FakeHub() as h:
        h.add_repo(REPO, {FILE: llama, "mmproj-F16.gguf": b"GGUF", "README.md": b"# Llama"},
                   sha256s={FILE: "ab" * 32}, downloads=500, likes=7)
        h.add_repo("acme/other-GGUF", {"x-Q4_0.gguf": b"GGUF"}, downloads=3)
        monkeypatch.setenv("HF_ENDPOINT", h.url)
        yield h


def test_search_prints_rows_and_json(hub: FakeHub, capsys: pytest.CaptureFixture[str]) -> None:
    out = io.StringIO()
    assert cli.search_main(["llama", "--sort", "downloads"], out) == 0
    assert REPO in out.getvalue() and "other" not in out.getvalue()
    out = io.StringIO()
    assert cli.search_main(["--json", "--sort", "downloads"], out) == 0
    rows = json.loads(out.getvalue())
    assert [r["repo_id"] for r in rows] == [REPO, "acme/other-GGUF"]


def test_search_with_the_hub_down_exits_3_with_one_sentence(
        hub: FakeHub, capsys: pytest.CaptureFixture[str]) -> None:
    hub.down = True
    assert cli.search_main(["llama"], io.StringIO()) == cli.EXIT_UNREACHABLE
    err = capsys.readouterr().err
    assert "cannot be reached" in err and "Traceback" not in err


def test_search_with_no_hub_at_all_exits_3(capsys: pytest.CaptureFixture[str]) -> None:
    # tests/conftest.py points HF_ENDPOINT at a closed port
    assert cli.search_main(["llama"], io.StringIO()) == cli.EXIT_UNREACHABLE


def test_plan_hf_is_the_plan_for_the_local_file(hub: FakeHub, llama: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    report = str(REPORTS / "rtx4090_24gb.json")
    assert plan_cli.main([f"hf://{REPO}/{FILE}", "--hardware", report, "--json"]) == 0
    remote = json.loads(capsys.readouterr().out)
    assert plan_cli.main([str(llama), "--hardware", report, "--json"]) == 0
    local = json.loads(capsys.readouterr().out)
    assert remote["settings"] == local["settings"]
    assert remote["devices"] == local["devices"]
    assert any("header alone" in r for r in remote["reasons"])
    # only the header travelled, never the 4.9 GB of weights
    assert hub.bytes_served < 16 << 20


def test_plan_hf_refuses_a_projector_and_names_the_models(
        hub: FakeHub, capsys: pytest.CaptureFixture[str]) -> None:
    assert plan_cli.main([f"hf://{REPO}/mmproj-F16.gguf", "--no-probe"]) == 2
    assert "not a chat model" in capsys.readouterr().err
    assert plan_cli.main([f"hf://{REPO}/nope.gguf", "--no-probe"]) == 2
    assert FILE in capsys.readouterr().err


def test_plan_hf_for_a_gated_repo_without_token_exits_4(
        hub: FakeHub, llama: Path, capsys: pytest.CaptureFixture[str]) -> None:
    hub.add_repo("meta/gated-GGUF", {FILE: llama}, sha256s={FILE: "cd" * 32}, gated=True)
    hub.token = "hf_right"
    code = plan_cli.main([f"hf://meta/gated-GGUF/{FILE}", "--no-probe"])
    assert code == cli.EXIT_AUTH, capsys.readouterr().err


def test_models_lists_the_own_folder_and_says_where_it_looked(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("HEARTH_MODELS_DIR", str(tmp_path / "models"))
    out = io.StringIO()
    assert cli.models_main([], out) == cli.EXIT_NONE
    assert "No models found" in out.getvalue()
    folder = tmp_path / "models" / "acme" / "tiny"
    folder.mkdir(parents=True)
    write_model(folder / "tiny-F32.gguf", TINY)
    out = io.StringIO()
    assert cli.models_main(["--json"], out) == 0
    (row,) = json.loads(out.getvalue())
    assert row["source"] == "Hearth" and row["own"] and row["architecture"] == "llama"
