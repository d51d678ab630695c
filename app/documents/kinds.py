"""Which files Hearth reads as documents, by their names (no Qt, nothing heavy to import: the
chat's attach button asks before any file is read)."""

from __future__ import annotations

import os
from pathlib import Path

from app.i18n import T_, Text

TEXT_SUFFIXES = frozenset({
    ".txt", ".md", ".markdown", ".rst", ".csv", ".tsv", ".json", ".jsonl", ".yaml", ".yml",
    ".toml", ".ini", ".cfg", ".log", ".xml", ".tex", ".py", ".js", ".ts", ".tsx", ".jsx", ".java",
    ".c", ".h", ".cc", ".cpp", ".hpp", ".cs", ".go", ".rs", ".rb", ".php", ".swift", ".kt",
    ".scala", ".sh", ".bash", ".zsh", ".ps1", ".sql", ".r", ".lua", ".pl", ".m", ".css", ".scss",
    ".vue", ".svelte", ".dart", ".zig", ".nim", ".ex", ".exs", ".erl", ".hs", ".ml", ".clj",
})
HTML_SUFFIXES = frozenset({".html", ".htm", ".xhtml"})
SUFFIXES = TEXT_SUFFIXES | HTML_SUFFIXES | {".pdf", ".docx"}


def readable(path: str | os.PathLike[str]) -> bool:
    """Whether the file's kind is one Hearth reads (by its name)."""
    return Path(path).suffix.lower() in SUFFIXES


def unreadable(name: str) -> Text:
    """The sentence for a file of a kind Hearth does not read."""
    return T_("{name}: Hearth reads text, Markdown, code, PDF, DOCX and HTML files, not this "
              "kind of file.", name=name)
