"""The curated list is plain data: read defensively, each entry resolved to one model file."""

from __future__ import annotations

from pathlib import Path

from app.hub.names import group_files
from app.hub.recommended import load_recommended, pick_group
from app.hub.types import HubFile


def test_the_shipped_list_reads_and_names_real_repositories() -> None:
    entries = load_recommended()
    assert len(entries) >= 5
    assert all(e.repo_id.count("/") == 1 and e.quant and e.title and e.blurb for e in entries)
    assert len({e.repo_id for e in entries}) == len(entries)


def test_a_damaged_list_is_empty_not_an_error(tmp_path: Path) -> None:
    bad = tmp_path / "r.json"
    bad.write_text('{"models": [{"repo": "../../etc", "quant": "Q4_K_M"}]}')
    assert load_recommended(bad) == []
    bad.write_text("not json")
    assert load_recommended(bad) == []
    assert load_recommended(tmp_path / "missing.json") == []


def test_pick_group_prefers_the_named_quant_then_usual_ones() -> None:
    groups = group_files([HubFile(n, 1, None) for n in (
        "m-Q8_0.gguf", "m-Q4_K_S.gguf", "mmproj-m-Q4_K_M.gguf", "m-IQ2_XS.gguf")])
    assert pick_group(groups, "Q8_0").name == "m-Q8_0.gguf"  # type: ignore[union-attr]
    # Q4_K_M is only a projector here: a projector is never offered as the model
    assert pick_group(groups, "Q4_K_M").name == "m-Q4_K_S.gguf"  # type: ignore[union-attr]
    assert pick_group(group_files([HubFile("m-IQ1_S.gguf", 1, None)]), "Q4_K_M") is None
