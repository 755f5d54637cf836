"""Guards on the tests themselves, read with `ast`: test modules never import each other
(what they share lives in tests/support), and no test patches the application's own
modules (what a test must change is a setting, a fake at a port, or an argument)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.support.source import ROOT, assigned, bindings, dotted, imports, module_name, parse

TESTS = ROOT / "tests"
SOURCES = sorted(TESTS.rglob("*.py"))
OWN = "app"
#: Calls that change an attribute or an item of their first argument, whoever's method
#: they are (pytest's monkeypatch, the builtins).
_SETTERS = {"setattr", "delattr", "setitem", "delitem"}


def _ids(paths: list[Path]) -> list[str]:
    return [str(p.relative_to(TESTS)) for p in paths]


def _is_test_module(name: str) -> bool:
    """A test module or a conftest, by its file (`from m import test_x` may name a
    function)."""
    parts = name.split(".")
    is_test = parts[-1].startswith("test_") or parts[-1] == "conftest"
    return parts[0] == "tests" and is_test and ROOT.joinpath(*parts).with_suffix(".py").is_file()


def _in_support(name: str) -> bool:
    return name == "tests.support" or name.startswith("tests.support.")


def imported_test_modules(tree: ast.AST, module: str) -> list[str]:
    """The test modules (and conftests) a module imports."""
    return sorted({n for names in imports(tree, module) for n in names if _is_test_module(n)})


def imported_outside_support(tree: ast.AST, module: str) -> list[str]:
    """What a module imports from `tests` that is not in tests/support."""
    return sorted(
        names[0]
        for names in imports(tree, module)
        if names[0].split(".")[0] == "tests" and not any(_in_support(n) for n in names)
    )


def _own(name: str | None) -> bool:
    return name is not None and (name == OWN or name.startswith(OWN + "."))


def _named(expr: ast.expr, bound: dict[str, str]) -> str | None:
    """What an expression names: an imported thing, or a dotted string ("app.x.Y")."""
    if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
        return expr.value
    return dotted(expr, bound)


def _patched_by_call(node: ast.Call, bound: dict[str, str]) -> str | None:
    func, args = node.func, node.args
    name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
    if not args:
        return None
    if name in _SETTERS:
        target = _named(args[0], bound)
        if target == "sys.modules" and len(args) > 1:
            return _named(args[1], bound)  # monkeypatch.setitem(sys.modules, "app.x", …)
        by_string = isinstance(args[0], ast.Constant)  # monkeypatch.setattr("app.x.Y", …)
        attr = args[1] if len(args) > 1 and not by_string else None
        if name.endswith("attr") and isinstance(attr, ast.Constant) and target:
            return f"{target}.{attr.value}"  # monkeypatch.setattr(module, "NAME", …)
        return target
    if name == "patch":  # mock.patch("app.x.Y")
        return _named(args[0], bound)
    if (
        isinstance(func, ast.Attribute)
        and name in {"object", "multiple", "dict"}
        and getattr(func.value, "attr", getattr(func.value, "id", None)) == "patch"
    ):
        return _named(args[0], bound)
    return None


def _patched_by_assignment(target: ast.expr, bound: dict[str, str]) -> str | None:
    if isinstance(target, ast.Attribute):  # module.CONST = …, Class.method = …
        base = dotted(target.value, bound)
        return None if base is None else f"{base}.{target.attr}"
    if isinstance(target, ast.Subscript):  # module.TABLE[k] = …, sys.modules["app.x"] = …
        base = dotted(target.value, bound)
        if base == "sys.modules":
            return _named(target.slice, bound)
        return base
    return None


def own_patches(tree: ast.AST, module: str) -> list[str]:
    """Each place a module changes something of the application's own modules: sets,
    deletes or patches an attribute or an item of an `app.*` module or of anything
    imported from one (lines and what is changed)."""
    bound = bindings(tree, module)
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            changed = [_patched_by_call(node, bound)]
        else:
            changed = [_patched_by_assignment(t, bound) for t in assigned(node)]
        found.extend(f"line {node.lineno}: {c}" for c in changed if _own(c))
    return found


def test_the_guards_read_every_test() -> None:
    names = {p.name for p in SOURCES}
    assert {"conftest.py", "test_approvals.py", "test_guards.py", "approvals.py"} <= names


@pytest.mark.parametrize("path", SOURCES, ids=_ids(SOURCES))
def test_no_test_module_imports_another(path: Path) -> None:
    assert imported_test_modules(parse(path), module_name(path)) == []


@pytest.mark.parametrize("path", SOURCES, ids=_ids(SOURCES))
def test_what_tests_share_is_imported_from_tests_support(path: Path) -> None:
    assert imported_outside_support(parse(path), module_name(path)) == []


def test_the_tests_folder_holds_only_test_packages_conftest_and_support() -> None:
    """A helper module next to conftest.py would be a second place for shared code."""
    loose = sorted(
        p.name for p in TESTS.glob("*.py") if p.name not in {"__init__.py", "conftest.py"}
    )
    assert loose == []


@pytest.mark.parametrize("path", SOURCES, ids=_ids(SOURCES))
def test_no_test_patches_the_applications_own_modules(path: Path) -> None:
    assert own_patches(parse(path), module_name(path)) == []


@pytest.mark.parametrize(
    ("source", "bad"),
    [
        ("from tests.integration.test_leases import crash", True),
        ("from tests.integration import test_leases", True),
        ("import tests.api.test_lists", True),
        ("from .test_leases import crash", True),
        ("from . import test_leases", True),
        ("from tests.conftest import Harness", True),
        ("def f():\n    from tests.integration.test_processes import ROOT", True),
        ("import importlib\nimportlib.import_module('tests.unit.test_status')", True),
        ("from tests.support.leases import crash", False),
        ("from tests.support.dbserver import test_server", False),  # a function
        ("from tests.support import hostile", False),
        ("from app.domain.lifecycle.status import RunStatus", False),
        ("import pytest", False),
    ],
)
def test_the_import_guard_sees_every_spelling(source: str, bad: bool) -> None:
    found = imported_test_modules(ast.parse(source), "tests.integration.test_example")
    assert bool(found) is bad


@pytest.mark.parametrize(
    ("source", "bad"),
    [
        ("from tests.factories import final", True),
        ("from tests import fakes", True),
        ("from tests.support.factories import final", False),
        ("from tests.support import fakes", False),
        ("from tests import support", False),
        ("from app.db import tables", False),
    ],
)
def test_the_support_guard_sees_every_spelling(source: str, bad: bool) -> None:
    found = imported_outside_support(ast.parse(source), "tests.integration.test_example")
    assert bool(found) is bad


@pytest.mark.parametrize(
    ("source", "bad"),
    [
        ("from app.api import event_stream\nmonkeypatch.setattr(event_stream, 'PING_S', 1)", True),
        ("from app.db import events_repo\nmp.setattr(events_repo, 'page', fake)", True),
        ("import app.api.event_stream\nmonkeypatch.setattr(app.api.event_stream, 'X', 1)", True),
        ("import app.api.event_stream as es\nmonkeypatch.setattr(es, 'X', 1)", True),
        ("monkeypatch.setattr('app.api.event_stream.PING_S', 1)", True),
        ("from app.api import event_stream\nmonkeypatch.delattr(event_stream, 'PING_S')", True),
        ("from app.api import event_stream\nevent_stream.PING_S = 1", True),
        ("from app.api import event_stream\nevent_stream.PING_S += 1", True),
        ("from app.api import event_stream\ndel event_stream.PING_S", True),
        ("from app.api import event_stream\na, event_stream.PING_S = 1, 2", True),
        ("from app.api import event_stream as s\ndef t():\n    s.POLL_S = 0.1", True),
        ("from app.config.settings import Settings\nSettings.lease_s = 1", True),
        ("from app.domain import status\nstatus.RunStatus.x = 1", True),
        ("from app.db import tables\ntables.REGISTRY['x'] = 1", True),
        ("from app.db import tables\nmonkeypatch.setitem(tables.REGISTRY, 'x', 1)", True),
        ("import sys\nsys.modules['app.db.tables'] = fake", True),
        ("import sys\nmonkeypatch.setitem(sys.modules, 'app.db', fake)", True),
        ("from unittest import mock\nmock.patch('app.engine.stepper.advance')", True),
        ("from unittest.mock import patch\n@patch('app.engine.x.Y')\ndef t(): ...", True),
        ("from app.engine import x\nfrom unittest import mock\nmock.patch.object(x, 'Y')", True),
        ("from app.main import create_app\nsetattr(create_app, 'x', 1)", True),
        # Allowed: the environment, third-party and stdlib things, the app's instances.
        ("monkeypatch.setenv('TOOLGATE_LEASE_S', '1')", False),
        ("import httpx\nmonkeypatch.setattr(httpx, 'get', fake)", False),
        ("import time\nmonkeypatch.setattr(time, 'monotonic', fake)", False),
        ("mock.patch('httpx.AsyncClient.send')", False),
        ("h.runtime.settings.max_active_runs = 1", False),
        ("backend.in_progress_for = 3", False),
        ("from app.config.settings import Settings\ns = Settings()\ns.lease_s = 1", False),
        ("from apps import x\nx.Y = 1", False),
    ],
)
def test_the_patch_guard_sees_every_spelling(source: str, bad: bool) -> None:
    assert bool(own_patches(ast.parse(source), "tests.integration.test_example")) is bad
