"""docs/architecture.md is the map of the code: every package of `app` has its `###`
heading (its path below `app/`, e.g. `### \\`engine/steps/\\` — …`), every module is named
in the first column of a row under its own package's heading, and every package says
what it holds in its `__init__.py` docstring. A module added, moved or removed without
the map changing fails here."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.support.source import ROOT

APP = ROOT / "app"
DOC = ROOT / "docs" / "architecture.md"
HEADING = re.compile(r"^### `([\w/]+)/`")
NAMED = re.compile(r"`([\w/]+\.py)`")


def _packages() -> list[Path]:
    return sorted(p.parent for p in APP.rglob("__init__.py"))


def _heading_of(package: Path) -> str:
    """`app` for the top level, else the path below `app/` (`engine/steps`)."""
    return "app" if package == APP else package.relative_to(APP).as_posix()


def _sections() -> dict[str, set[str]]:
    """Each package heading → the module files its rows name in their first column."""
    sections: dict[str, set[str]] = {}
    current: set[str] | None = None
    for line in DOC.read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            found = HEADING.match(line)
            current = sections.setdefault(found.group(1), set()) if found else None
        elif current is not None and line.startswith("| `"):
            current.update(NAMED.findall(line.split("|")[1]))
    return sections


def test_every_package_has_a_heading() -> None:
    missing = {_heading_of(p) for p in _packages()} - set(_sections())
    assert not missing, f"packages without a ### heading in docs/architecture.md: {missing}"


def test_no_heading_names_a_package_that_is_gone() -> None:
    gone = set(_sections()) - {_heading_of(p) for p in _packages()}
    assert not gone, f"headings in docs/architecture.md of no package: {gone}"


def test_every_module_is_named_under_its_package() -> None:
    sections = _sections()
    missing = []
    for package in _packages():
        named = sections.get(_heading_of(package), set())
        for module in sorted(package.glob("*.py")):
            if module.name != "__init__.py" and module.name not in named:
                missing.append(module.relative_to(APP).as_posix())
    assert not missing, f"modules docs/architecture.md does not name under their package: {missing}"


def test_no_row_names_a_module_that_is_gone() -> None:
    gone = []
    for heading, named in _sections().items():
        package = APP if heading == "app" else APP / heading
        gone += [f"{heading}/{name}" for name in named if not (package / name).is_file()]
    assert not gone, f"rows of docs/architecture.md naming no module: {gone}"


def test_every_package_says_what_it_holds() -> None:
    silent = [
        _heading_of(p)
        for p in _packages()
        if not ast.get_docstring(ast.parse((p / "__init__.py").read_text(encoding="utf-8")))
    ]
    assert not silent, f"packages whose __init__.py has no docstring: {silent}"
