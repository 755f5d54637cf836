"""The domain core imports no framework, driver or outer layer of the application."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

DOMAIN = Path(__file__).resolve().parents[2] / "app" / "domain"

FORBIDDEN_PACKAGES = {"fastapi", "starlette", "sqlalchemy", "httpx", "asyncpg", "alembic"}
FORBIDDEN_APP_PACKAGES = {"app.db", "app.api", "app.engine", "app.adapters"}

MODULES = sorted(DOMAIN.rglob("*.py"))


def _imported_modules(tree: ast.AST, module_name: str) -> set[str]:
    """Absolute names of everything a module imports, relative imports resolved; a
    `from X import y` counts as both X and X.y, since y may be a submodule."""
    package = module_name.rsplit(".", 1)[0].split(".")
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - (node.level - 1)] if node.level else []
            target = ".".join([*base, *([node.module] if node.module else [])])
            names.add(target)
            names.update(f"{target}.{alias.name}" for alias in node.names)
        elif (
            isinstance(node, ast.Call)
            and _called_name(node.func) in {"import_module", "__import__"}
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            names.add(node.args[0].value)
    return names


def _called_name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def _forbidden(name: str) -> bool:
    top = name.split(".")[0]
    if top in FORBIDDEN_PACKAGES:
        return True
    return any(name == p or name.startswith(p + ".") for p in FORBIDDEN_APP_PACKAGES)


def _module_name(path: Path) -> str:
    parts = path.relative_to(DOMAIN.parents[1]).with_suffix("").parts
    return ".".join(parts)


def test_domain_modules_are_found() -> None:
    names = {p.stem for p in MODULES}
    assert {"status", "budget", "steps", "proposals", "tools"} <= names


@pytest.mark.parametrize("path", MODULES, ids=[p.stem for p in MODULES])
def test_domain_module_imports_nothing_outside_the_core(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    imported = _imported_modules(tree, _module_name(path))
    assert sorted(n for n in imported if _forbidden(n)) == []


@pytest.mark.parametrize(
    ("source", "bad"),
    [
        ("import fastapi", True),
        ("from sqlalchemy.ext.asyncio import AsyncSession", True),
        ("import httpx as h", True),
        ("from app.db import tables", True),
        ("from app.engine.stepper import advance", True),
        ("from app import api", True),
        ("from .. import adapters", True),
        ("from ..db.tables import run", True),
        ("from app.domain.status import RunStatus", False),
        ("from . import tools", False),
        ("import json", False),
        ("from app.dbx import y", False),
        ("import importlib\nimportlib.import_module('starlette.requests')", True),
        ("__import__('asyncpg')", True),
    ],
)
def test_checker_catches_forbidden_imports(source: str, bad: bool) -> None:
    # The check above is only worth something if it sees every spelling of an import.
    imported = _imported_modules(ast.parse(source), "app.domain.example")
    assert any(_forbidden(n) for n in imported) is bad
