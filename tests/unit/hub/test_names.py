"""File names from the Hub: refused when they could leave the models folder; grouped for download."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.hub.names import file_kind, group_files, quant_of, safe_join, safe_relative_path
from app.hub.types import FileKind, HubFile, UnsafeNameError

HOSTILE = [
    "../evil.gguf", "a/../../evil.gguf", "/etc/passwd", "C:\\Windows\\x.gguf", "C:x.gguf",
    "a\\..\\b.gguf", "~/x.gguf", "", " x.gguf", "x.gguf ", "a//b.gguf", "./x.gguf",
    "x\x00.gguf", "x\n.gguf", "CON.gguf", "a/nul.txt", "x.gguf.", "x:stream.gguf",
    "x?.gguf", "a" * 300 + ".gguf", "/".join(["d"] * 20) + "/x.gguf", "\u202ex.gguf",
]


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_names_are_refused_with_a_sentence(name: str) -> None:
    with pytest.raises(UnsafeNameError) as err:
        safe_relative_path(name)
    assert "Nothing was downloaded" in str(err.value)


@pytest.mark.parametrize("name", ["model.Q4_K_M.gguf", "sub/dir/model-Q8_0.gguf",
                                  "Llama 3 (8B) ünïcode-Q4_0.gguf"])
def test_ordinary_names_pass(name: str) -> None:
    assert str(safe_relative_path(name)) == name


def test_safe_join_stays_inside_even_through_a_symlink(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    models = tmp_path / "models"
    models.mkdir()
    (models / "link").symlink_to(outside, target_is_directory=True)
    assert safe_join(models, "a/b.gguf") == models / "a" / "b.gguf"
    with pytest.raises(UnsafeNameError):
        safe_join(models, "link/x.gguf")


@pytest.mark.parametrize(("name", "quant"), [
    ("Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf", "Q4_K_M"),
    ("qwen2.5-7b-instruct-q4_k_m-00001-of-00002.gguf", "Q4_K_M"),
    ("gemma-3-1b-it-IQ2_XXS.gguf", "IQ2_XXS"),
    ("gemma-3-1b-it-IQ2_XS.gguf", "IQ2_XS"),
    ("model.f16.gguf", "F16"),
    ("gpt-oss-20b-mxfp4.gguf", "MXFP4"),
    ("Qwen3-30B-A3B-UD-Q4_K_XL.gguf", "UD-Q4_K_XL"),
    ("model.gguf", None),
    ("Q8_0-distilled-Q4_0.gguf", "Q4_0"),
])
def test_quant_from_name(name: str, quant: str | None) -> None:
    assert quant_of(name) == quant


@pytest.mark.parametrize(("name", "kind"), [
    ("model-Q4_K_M.gguf", FileKind.MODEL),
    ("mmproj-model-f16.gguf", FileKind.MMPROJ),
    ("gemma-3-4b-it-mmproj-F16.gguf", FileKind.MMPROJ),
    ("imatrix.dat", FileKind.IMATRIX),
    ("model.imatrix.gguf", FileKind.IMATRIX),
    ("README.md", FileKind.OTHER),
])
def test_file_kinds(name: str, kind: FileKind) -> None:
    assert file_kind(name) is kind


def test_split_parts_are_one_group_with_the_total_size() -> None:
    files = [HubFile(f"big-Q8_0-0000{i}-of-00003.gguf", 10 * i, None) for i in (2, 1, 3)]
    files += [HubFile("big-Q4_K_M.gguf", 5, None), HubFile("mmproj-F16.gguf", 1, None),
              HubFile("README.md", 1, None), HubFile("half-Q2_K-00001-of-00002.gguf", 1, None)]
    groups = group_files(files)
    names = [g.name for g in groups]
    assert names == ["big-Q4_K_M.gguf", "big-Q8_0.gguf", "mmproj-F16.gguf"]
    split = groups[1]
    assert split.split and split.size == 60 and split.quant == "Q8_0"
    assert [f.path for f in split.files] == [f"big-Q8_0-0000{i}-of-00003.gguf" for i in (1, 2, 3)]
    assert groups[2].kind is FileKind.MMPROJ


def test_a_group_without_sizes_has_no_total() -> None:
    (g,) = group_files([HubFile("m-Q4_0.gguf", None, None)])
    assert g.size is None
