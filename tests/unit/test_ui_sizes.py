"""The window stays a layout (issue 26): no class in app/ui over 400 lines, no function there or
in app/__main__.py over 80 (measured as the AST spans them: end_lineno - lineno + 1)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MAX_CLASS, MAX_FUNCTION = 400, 80


def _spans(path: Path) -> list[tuple[str, str, int]]:
    found = []
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            assert node.end_lineno is not None
            kind = "class" if isinstance(node, ast.ClassDef) else "function"
            found.append((kind, node.name, node.end_lineno - node.lineno + 1))
    return found


def test_no_class_in_the_ui_over_400_lines_and_no_function_over_80() -> None:
    files = [ROOT / "app" / "__main__.py", *sorted((ROOT / "app" / "ui").rglob("*.py"))]
    too_long = [f"{path.relative_to(ROOT)}: {kind} {name} has {n} lines"
                for path in files for kind, name, n in _spans(path)
                if (kind == "class" and n > MAX_CLASS and path.parent.name != "app")
                or (kind == "function" and n > MAX_FUNCTION)]
    assert not too_long, "\n".join(too_long)
