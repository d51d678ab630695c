"""The wire protocol in one place: the runner's exit codes and llama.cpp's split-file names are
defined in runner/wire and imported by both programs, never restated.

The source checks read app/ and runner/ as text: a constant restated by hand would agree with the
wire module today and drift tomorrow, so the test refuses the restatement itself, not a value.
The behaviour tests compare the app's and the runner's readings of the same names.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from app.gguf.model import split_paths
from app.hub.names import group_files
from app.hub.types import HubFile
from app.library.scan import ModelSource, SourceKind, scan

REPO = Path(__file__).resolve().parents[2]
WIRE = REPO / "runner" / "wire"


def _sources() -> list[Path]:
    return sorted(p for top in ("app", "runner") for p in (REPO / top).rglob("*.py")
                  if WIRE not in p.parents)


def _hits(pattern: re.Pattern[str]) -> list[str]:
    found = []
    for path in _sources():
        for no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if pattern.search(line):
                found.append(f"{path.relative_to(REPO)}:{no}: {line.strip()}")
    return found


# The runner's codes as names (EXIT_OUT_OF_MEMORY = 4), as literals it exits with or a caller
# compares an exit status to, or as the number a log line reports.
_EXIT_NAMES = "BAD_ARGS|LOAD_FAILED|OUT_OF_MEMORY|PORT_IN_USE|WORKER_LOST"
_EXIT_RESTATED = re.compile(
    rf"\bEXIT_({_EXIT_NAMES})\s*=|"
    r"\b(os\._exit|sys\.exit)\(\s*[2-6]\s*\)|"
    r"\b(exit_code|returncode|last_exit\.code|ex\.code)\s*[!=]=\s*[2-6]\b|"
    r"[\"']exit_code[\"']\s*:\s*[2-6]\b")


def test_the_runner_exit_codes_are_defined_only_in_runner_wire() -> None:
    assert _hits(_EXIT_RESTATED) == []


# A pattern for part names (``-(\d{5})-of-``) or a format that writes one (``{i:05d}-of-``).
_SPLIT_RESTATED = re.compile(r"-of-.*(\\d|05d)|(\\d|05d).*-of-")


def test_the_split_file_rule_is_defined_only_in_runner_wire() -> None:
    assert _hits(_SPLIT_RESTATED) == []


def test_the_source_checks_see_what_they_look_for() -> None:
    """The patterns above find the restatements this module replaced (else they check nothing)."""
    assert _EXIT_RESTATED.search("EXIT_OUT_OF_MEMORY = 4")
    assert _EXIT_RESTATED.search("        os._exit(6)")
    assert _EXIT_RESTATED.search("    if exit_code == 4 and not crashed:")
    assert _EXIT_RESTATED.search('extra={"exit_code": 3}')
    assert not _EXIT_RESTATED.search("EXIT_OK, EXIT_NONE, EXIT_ERROR = range(3)")  # hearth's CLI
    assert _SPLIT_RESTATED.search(r'_SPLIT = re.compile(r"^(?P<stem>.*)-(?P<no>\d{5})-of-")')
    assert _SPLIT_RESTATED.search('f"{stem}-{i:05d}-of-{count:05d}.gguf"')
    assert not _SPLIT_RESTATED.search('"""All shard paths (``x-00001-of-00003.gguf``)."""')


# -- the split rule: llama.cpp's llama_split_path / llama_split_prefix ---------------------------


def test_part_names_are_llama_cpp_s() -> None:
    from runner.wire.splits import part_name, part_names, split_part

    assert part_names("m-Q4_K_M", 3) == [
        "m-Q4_K_M-00001-of-00003.gguf", "m-Q4_K_M-00002-of-00003.gguf",
        "m-Q4_K_M-00003-of-00003.gguf"]
    assert split_part("m-Q4_K_M-00002-of-00003.gguf") == ("m-Q4_K_M", 2, 3)
    assert split_part("dir/sub/m-00001-of-00002.gguf") == ("dir/sub/m", 1, 2)
    for prefix, index, count in (("a", 1, 1), ("x-00001-of-00002", 2, 2), ("", 1, 2),
                                 ("big", 65535, 65535)):
        assert split_part(part_name(prefix, index, count)) == (prefix, index, count)
    with pytest.raises(ValueError):
        part_name("m", 0, 2)


@pytest.mark.parametrize("name", [
    "m.gguf",
    "m-00001-of-00002.GGUF",  # llama.cpp compares the suffix as it writes it: lower case
    "m-00001-of-00002.Gguf",
    "m-0001-of-0002.gguf",  # %05d: five digits
    "m-000001-of-000002.gguf",
    "m-00000-of-00002.gguf",  # parts are numbered from 1
    "m-00003-of-00002.gguf",
    "m-00001-of-00000.gguf",
    "m-00001-of-00002.gguf.part",
    "m-00001-of-00002",
    "m_00001-of-00002.gguf",
])
def test_names_that_are_no_part(name: str) -> None:
    from runner.wire.splits import split_part

    assert split_part(name) is None


# -- both sides read the same names the same way --------------------------------------------------

# Names the three regexes of before disagreed on: the library and the Hub matched ``.GGUF`` in
# any case, the loader and the dry run only in lower case (as llama.cpp); the loader took an empty
# prefix, the Hub and the library did not; none checked that a part number was in range.
DISPUTED = [
    ("Big-00001-of-00002.GGUF", "Big-00002-of-00002.GGUF"),
    ("-00001-of-00002.gguf", "-00002-of-00002.gguf"),
    ("gap-00001-of-00002.gguf", "gap-00002-of-00002.gguf", "gap-00003-of-00002.gguf"),
]


@pytest.mark.parametrize("names", DISPUTED, ids=lambda n: n[0])
def test_the_library_lists_as_one_model_the_parts_the_loader_reads(
        tmp_path: Path, names: tuple[str, ...]) -> None:
    for name in names:
        (tmp_path / name).write_bytes(b"GGUF" + bytes(60))
    found = scan([ModelSource.of(SourceKind.FOLDER, tmp_path)])
    listed = {p.name for m in found for p in m.paths}
    assert listed == set(names), "the library hid a file"
    for model in found:
        assert [p.name for p in model.paths] == [p.name for p in split_paths(model.path)]


@pytest.mark.parametrize("names", DISPUTED, ids=lambda n: n[0])
def test_the_hub_downloads_as_one_model_the_parts_the_loader_reads(names: tuple[str, ...]) -> None:
    groups = group_files([HubFile(name, 10, None) for name in names])
    assert {f.path for g in groups for f in g.files} == set(names), "the Hub hid a file"
    for group in groups:
        first = Path(group.first.path)
        assert [f.path for f in group.files] == [p.name for p in split_paths(first)]


@pytest.mark.parametrize("names", DISPUTED, ids=lambda n: n[0])
def test_the_runner_s_dry_run_reads_the_parts_the_loader_reads(
        tmp_path: Path, names: tuple[str, ...], monkeypatch: pytest.MonkeyPatch) -> None:
    from runner import memory

    read: list[str] = []
    monkeypatch.setattr(memory, "tensor_sizes", lambda p: read.append(p) or {})
    for name in names:
        read.clear()
        memory.model_tensor_sizes(str(tmp_path / name))
        assert read == [str(p) for p in split_paths(tmp_path / name)]


def test_the_app_acts_on_the_runner_s_codes() -> None:
    from app.loading.ladder import classify_failure
    from runner.wire.exits import ExitCode

    assert classify_failure(ExitCode.OUT_OF_MEMORY, False, "", on_gpu=False) == "oom"
    assert classify_failure(ExitCode.WORKER_LOST, False, "", on_gpu=False) == "worker_lost"
    assert classify_failure(ExitCode.LOAD_FAILED, False, "ggml_cuda_init failed",
                            on_gpu=True) == "device"
    for code in (ExitCode.OK, ExitCode.BAD_ARGS, ExitCode.PORT_IN_USE):
        assert classify_failure(code, False, "cuda", on_gpu=True) is None
