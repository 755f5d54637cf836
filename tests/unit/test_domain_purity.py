"""The domain core is pure: each of its modules imports only the standard library,
`jsonschema` and `jsonschema_rs` (tool schemas), `re2` and other modules of the domain. An
allowlist, so a new dependency of the core is a decision made here, not an accident."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from tests.support.source import ROOT, imports, module_name, parse

DOMAIN = ROOT / "app" / "domain"

#: `jsonschema_rs`: the validator of tool I/O and typed answers (domain.tools.schema_validator).
#: `re2`: the linear-time engine every pattern on untrusted text runs on (domain.patterns).
ALLOWED_PACKAGES = frozenset(sys.stdlib_module_names) | {"jsonschema", "jsonschema_rs", "re2"}
ALLOWED_APP_PACKAGE = "app.domain"

MODULES = sorted(DOMAIN.rglob("*.py"))


def _allowed(name: str) -> bool:
    if name == ALLOWED_APP_PACKAGE or name.startswith(ALLOWED_APP_PACKAGE + "."):
        return True
    return name.split(".")[0] in ALLOWED_PACKAGES


def _outside_the_core(tree: ast.AST, module: str) -> list[str]:
    return sorted(
        " or ".join(names) for names in imports(tree, module) if not any(_allowed(n) for n in names)
    )


def test_domain_modules_are_found() -> None:
    names = {p.stem for p in MODULES}
    assert {"status", "budget", "steps", "proposals", "specs"} <= names


@pytest.mark.parametrize("path", MODULES, ids=[p.stem for p in MODULES])
def test_domain_module_imports_nothing_outside_the_core(path: Path) -> None:
    assert _outside_the_core(parse(path), module_name(path)) == []


@pytest.mark.parametrize(
    ("source", "bad"),
    [
        ("import fastapi", True),
        ("from sqlalchemy.ext.asyncio import AsyncSession", True),
        ("import httpx as h", True),
        ("from app.db import tables", True),
        ("from app.engine.steps.stepper import advance", True),
        ("from app import api", True),
        ("from .. import adapters", True),
        ("from ..db.tables import run", True),
        ("from app.domain.lifecycle.status import RunStatus", False),
        ("from . import tools", False),
        ("import json", False),
        ("from app.dbx import y", True),
        ("import importlib\nimportlib.import_module('starlette.requests')", True),
        ("__import__('asyncpg')", True),
        # What only an allowlist catches: any other package, our own outer modules.
        ("import yaml", True),
        ("from pydantic import BaseModel", True),
        ("from app.config.settings import Settings", True),
        ("from app import domain", False),
        ("from app.domainx import y", True),
        ("from .. import settings", True),
        ("def check():\n    from opentelemetry import trace", True),
        ("class C:\n    def m(self):\n        import anyio", True),
        ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import starlette", True),
        ("from __future__ import annotations", False),
        ("import os.path", False),
        ("from collections.abc import Mapping", False),
        ("def check():\n    from jsonschema import Draft202012Validator", False),
        ("import jsonschema.exceptions", False),
    ],
)
def test_checker_catches_forbidden_imports(source: str, bad: bool) -> None:
    # The check above is only worth something if it sees every spelling of an import.
    assert bool(_outside_the_core(ast.parse(source), "app.domain.example")) is bad
