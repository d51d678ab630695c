"""Exporting a conversation: Markdown for people, JSON for tools, a safe file name."""

from __future__ import annotations

import json

from app.chat.message import Message
from app.library.conversations import Conversation
from app.library.export import FORMAT, file_name, to_json, to_markdown


def _conv() -> Conversation:
    return Conversation(id=1, title="Rust: lifetimes?", model="/models/Qwen3-4B-Q4_K_M.gguf",
                        created=1_700_000_000.0, updated=1_700_000_100.0, pinned=False,
                        settings={"system_prompt": "Answer briefly."},
                        messages=[Message("user", "What is a lifetime?"),
                                  Message("assistant", "A **scope**.\n\n```rust\nfn f<'a>() {}\n```",
                                          note="Stopped.", meta={"tokens_per_s": 31.5})])


def test_markdown_has_title_model_system_prompt_speakers_and_notes() -> None:
    md = to_markdown(_conv())
    assert md.startswith("# Rust: lifetimes?\n")
    assert "Qwen3-4B-Q4_K_M.gguf" in md and "/models/" not in md  # no local path leaks
    assert "## System prompt\n\nAnswer briefly." in md
    assert md.index("## You\n\nWhat is a lifetime?") < md.index("## Assistant\n\nA **scope**.")
    assert "```rust\nfn f<'a>() {}\n```" in md and "*Stopped.*" in md


def test_json_round_trips_messages_and_details() -> None:
    data = json.loads(to_json(_conv()))
    assert data["format"] == FORMAT and data["settings"] == {"system_prompt": "Answer briefly."}
    assert [(m["role"], m["note"]) for m in data["messages"]] == [("user", ""),
                                                                  ("assistant", "Stopped.")]
    assert data["messages"][1]["meta"] == {"tokens_per_s": 31.5}


def test_file_name_is_safe_everywhere() -> None:
    assert file_name(_conv().title, ".md") == "Rust lifetimes.md"
    hostile = file_name("../../etc/passwd\x00", ".json")
    assert "/" not in hostile and "\x00" not in hostile and hostile.endswith(".json")
    assert file_name("...", ".md") == "conversation.md"
