"""One error tree: every exception class the application defines derives from
`ToolgateError` (directly, through another, or beside a library's base it must also have),
and no two share a name, so that a name in a log or a traceback points at one class."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections import defaultdict

import app
from app.domain.errors import ToolgateError


def _exception_classes() -> list[type[BaseException]]:
    found: list[type[BaseException]] = []
    for info in pkgutil.walk_packages(app.__path__, "app."):
        if info.name.rsplit(".", 1)[-1] == "__main__":  # runs the command line when imported
            continue
        module = importlib.import_module(info.name)
        found.extend(
            value
            for value in vars(module).values()
            if inspect.isclass(value)
            and issubclass(value, BaseException)
            and value.__module__ == module.__name__
        )
    return found


CLASSES = _exception_classes()


def test_the_walk_finds_the_application_s_exceptions() -> None:
    names = {c.__name__ for c in CLASSES}
    assert {"ToolgateError", "DomainError", "ToolError", "ConfigError", "PayloadTooLarge"} <= names


def test_every_exception_class_derives_from_toolgate_error() -> None:
    outside = sorted(
        f"{c.__module__}.{c.__qualname__}" for c in CLASSES if not issubclass(c, ToolgateError)
    )
    assert outside == []


def test_no_two_exception_classes_share_a_name() -> None:
    by_name: dict[str, list[str]] = defaultdict(list)
    for c in CLASSES:
        by_name[c.__name__].append(c.__module__)
    assert {name: where for name, where in by_name.items() if len(where) > 1} == {}
