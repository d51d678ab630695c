"""The service protocols the widgets see (app/services/protocols.py) name real types, never ``Any``.

mypy checks it too (``disallow_any_explicit`` for that module in pyproject.toml); this test checks
it where mypy is not run, by reading the module's syntax tree (no import, no Qt).
"""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROTOCOLS = ROOT / "app" / "services" / "protocols.py"


def _any_uses(source: str) -> list[str]:
    """Where ``Any`` is named: imported from typing, used as ``Any`` or ``typing.Any``, or written
    inside a string annotation."""
    found: list[str] = []

    def visit(tree: ast.AST, where: str = "") -> None:
        for node in ast.walk(tree):
            line = f"line {getattr(node, 'lineno', '?')}{where}"
            if isinstance(node, ast.ImportFrom) and node.module in ("typing", "typing_extensions"):
                found.extend(f"{line}: from {node.module} import Any"
                             for alias in node.names if alias.name == "Any")
            elif isinstance(node, ast.Name) and node.id == "Any":
                found.append(f"{line}: Any")
            elif isinstance(node, ast.Attribute) and node.attr == "Any":
                found.append(f"{line}: {ast.unparse(node)}")
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                # A quoted annotation ("list[Any]") is code too; a docstring does not parse.
                try:
                    inner = ast.parse(node.value, mode="eval")
                except SyntaxError:
                    continue
                visit(inner, f" (in the string {node.value!r})")

    visit(ast.parse(source))
    return found


def test_the_service_protocols_name_no_any() -> None:
    assert _any_uses(PROTOCOLS.read_text(encoding="utf-8")) == []


def test_the_check_finds_each_spelling_of_any() -> None:
    source = (
        "import typing\n"
        "from typing import Any\n"
        "x: Any\n"
        "y: typing.Any\n"
        "z: 'list[Any]'\n"
        "w: int  # Any in a comment is fine\n"
        "'''A docstring may say Any.'''\n"
    )
    assert len(_any_uses(source)) == 4


def test_mypy_rejects_any_in_the_protocols_module() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    overrides = config["tool"]["mypy"].get("overrides", [])
    strict = [o for o in overrides if "app.services.protocols" in o.get("module", [])]
    assert strict and all(o.get("disallow_any_explicit") is True for o in strict)
