"""Rules for fast, honest tests, read with `ast`: no test sleeps a fixed time longer than
half a second (it waits for a condition, an event, or moves an injected clock instead),
and no test rebinds a private attribute of the application's objects (what a test must
change is a setting, a fake at a port, or an argument)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.support.source import ROOT, assigned, bindings, dotted, module_name, parse

TESTS = ROOT / "tests"
SOURCES = sorted(TESTS.rglob("*.py"))
#: The longest fixed sleep a test may take.
MOST_S = 0.5
_SLEEPS = {"asyncio.sleep", "time.sleep"}
#: Names whose private attributes a class may set on itself.
_OWN = {"self", "cls"}


def _ids(paths: list[Path]) -> list[str]:
    return [str(p.relative_to(TESTS)) for p in paths]


def _numbers(tree: ast.Module) -> dict[str, float]:
    """The module's constants bound to a number at its top level (`OUTAGE_S = 4.0`)."""
    found: dict[str, float] = {}
    for node in tree.body:
        if (
            isinstance(node, (ast.Assign, ast.AnnAssign))
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, (int, float))
        ):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name):
                    found[target.id] = float(node.value.value)
    return found


def _seconds(arg: ast.expr, numbers: dict[str, float]) -> float | None:
    if isinstance(arg, ast.Constant) and isinstance(arg.value, (int, float)):
        return float(arg.value)
    if isinstance(arg, ast.Name):
        return numbers.get(arg.id)
    return None


def long_sleeps(tree: ast.Module, module: str) -> list[str]:
    """Each call of `asyncio.sleep`/`time.sleep` (however imported) with a constant (or a
    module constant) longer than MOST_S."""
    bound = bindings(tree, module)
    numbers = _numbers(tree)
    found: list[str] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or dotted(node.func, bound) not in _SLEEPS:
            continue
        arg = node.args[0] if node.args else next((k.value for k in node.keywords), None)
        seconds = None if arg is None else _seconds(arg, numbers)
        if seconds is not None and seconds > MOST_S:
            found.append(f"line {node.lineno}: sleeps {seconds:g} s")
    return found


def _private(target: ast.expr) -> bool:
    """`x._name` (not a dunder) on anything but the class's own `self`/`cls`, or an item
    of one (`x._name[k]`)."""
    if isinstance(target, ast.Subscript):
        return _private(target.value)
    return (
        isinstance(target, ast.Attribute)
        and target.attr.startswith("_")
        and not target.attr.startswith("__")
        and not (isinstance(target.value, ast.Name) and target.value.id in _OWN)
    )


def private_rebindings(tree: ast.Module) -> list[str]:
    """Each assignment, deletion or `setattr` of another object's private attribute."""
    found: list[str] = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and getattr(node.func, "id", getattr(node.func, "attr", None)) in {"setattr", "delattr"}
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
        ):
            name = node.args[1].value
            owner = node.args[0]
            own = isinstance(owner, ast.Name) and owner.id in _OWN
            if name.startswith("_") and not name.startswith("__") and not own:
                found.append(f"line {node.lineno}: sets {name}")
            continue
        targets = assigned(node)
        found.extend(f"line {node.lineno}: sets {ast.unparse(t)}" for t in targets if _private(t))
    return found


@pytest.mark.parametrize("path", SOURCES, ids=_ids(SOURCES))
def test_no_test_sleeps_a_fixed_time_longer_than_half_a_second(path: Path) -> None:
    assert long_sleeps(parse(path), module_name(path)) == []


@pytest.mark.parametrize("path", SOURCES, ids=_ids(SOURCES))
def test_no_test_rebinds_a_private_attribute(path: Path) -> None:
    assert private_rebindings(parse(path)) == []


@pytest.mark.parametrize(
    ("source", "bad"),
    [
        ("import asyncio\nasync def t():\n    await asyncio.NAP(1.5)", True),
        ("import asyncio\nasync def t():\n    await asyncio.NAP(delay=2)", True),
        ("import time\ntime.NAP(1)", True),
        ("from time import NAP\nNAP(0.6)", True),
        ("from asyncio import NAP as nap\nasync def t():\n    await nap(3)", True),
        ("import asyncio as aio\nasync def t():\n    await aio.NAP(61)", True),
        ("import asyncio\nOUTAGE_S = 4.0\nasync def t():\n    await asyncio.NAP(OUTAGE_S)", True),
        # Allowed: short sleeps (a poll's pause), and waits the test does not fix.
        ("import asyncio\nasync def t():\n    await asyncio.NAP(0.5)", False),
        ("import asyncio\nasync def t():\n    await asyncio.NAP(0)", False),
        ("import asyncio\nasync def t(s):\n    await asyncio.NAP(s)", False),
        ("import asyncio\nasync def t():\n    await asyncio.wait_for(e.wait(), 10)", False),
        ("def NAP(s): ...\nNAP(5)", False),
    ],
)
def test_the_sleep_rule_sees_every_spelling(source: str, bad: bool) -> None:
    # The samples say NAP for `sleep`, so that a search of tests/ for long sleeps finds only
    # real ones.
    source = source.replace("NAP", "sleep")
    assert bool(long_sleeps(ast.parse(source), "tests.integration.test_example")) is bad


@pytest.mark.parametrize(
    ("source", "bad"),
    [
        ("h.driver._progress = lambda key, run: None", True),
        ("a.driver._tasks[k] = task", True),
        ("del a.driver._waiters[k]", True),
        ("h.runtime._clock = clock", True),
        ("x._n += 1", True),
        ("x._n: int = 1", True),
        ("a, h.driver._leases = 1, {}", True),
        ("del h.driver._latest", True),
        ("setattr(h.driver, '_progress', fake)", True),
        ("monkeypatch.setattr(h.driver, '_progress', fake)", True),
        # Allowed: a class's own state, dunders, public attributes.
        ("class F:\n    def __init__(self):\n        self._seen = []", False),
        ("class F:\n    def m(cls):\n        cls._made = 1", False),
        ("setattr(self, '_x', 1)", False),
        ("h.runtime.settings.max_active_runs = 0", False),
        ("f.__wrapped__ = g", False),
    ],
)
def test_the_private_rule_sees_every_spelling(source: str, bad: bool) -> None:
    assert bool(private_rebindings(ast.parse(source))) is bad
