"""The import contracts cover every package Hearth ships: each top-level package is a process with a
contract saying what it may not import, and every app package has a place in the layers."""

from __future__ import annotations

import pkgutil
import tomllib
from pathlib import Path
from typing import Any

import app

REPO = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())


def _contracts() -> list[dict[str, Any]]:
    contracts: list[dict[str, Any]] = PYPROJECT["tool"]["importlinter"]["contracts"]
    return contracts


# Shipped beside the code but holding no Python: data (icons, translations, the model list).
DATA_ONLY = {"resources"}


def _shipped_packages() -> set[str]:
    """The top-level packages setuptools installs ("app*" → app), less the data folders."""
    include = PYPROJECT["tool"]["setuptools"]["packages"]["find"]["include"]
    return {pattern.rstrip("*") for pattern in include} - DATA_ONLY


def test_the_data_folders_hold_no_code() -> None:
    for folder in DATA_ONLY:
        assert not list((REPO / folder).rglob("*.py")), f"{folder}/ is data: code goes in a package"


def test_every_shipped_package_is_checked_and_has_a_process_contract() -> None:
    roots = set(PYPROJECT["tool"]["importlinter"]["root_packages"])
    assert _shipped_packages() == roots
    on_disk = {p.parent.name for p in REPO.glob("*/__init__.py")} - {"tests", "installers"}
    assert on_disk == roots, "a new top-level package is a new process: give it a contract"
    for root in roots:
        own = [c for c in _contracts() if c["type"] == "forbidden"
               and c.get("source_modules") == [root]]
        assert own, f"no contract says what the {root} process may not import"


def test_the_gui_process_and_the_runner_process_keep_their_libraries_apart() -> None:
    forbidden = {root: set().union(*(c["forbidden_modules"] for c in _contracts()
                                     if c["type"] == "forbidden"
                                     and c.get("source_modules") == [root]))
                 for root in ("app", "runner")}
    assert {"llama_cpp", "numpy", "fastapi", "uvicorn", "starlette"} <= forbidden["app"]
    assert {"app", "PySide6"} <= forbidden["runner"]


def test_the_layers_name_every_app_package_and_module() -> None:
    (layers,) = [c for c in _contracts() if c["type"] == "layers"]
    assert layers["containers"] == ["app"] and layers["exhaustive"] is True
    named = {part.strip() for layer in layers["layers"] for part in layer.split("|")}
    children = {m.name for m in pkgutil.iter_modules(app.__path__)}
    assert named == children
    assert not any("ignore_imports" in c for c in _contracts())
