"""Python source read as `ast`, for the guards: what a module imports and what its names
are bound to, function-level imports included, without importing anything."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def module_name(path: Path) -> str:
    """`tests/unit/test_x.py` → `tests.unit.test_x` (`…/__init__` for a package, so that
    its relative imports resolve from the package itself)."""
    return ".".join(path.resolve().relative_to(ROOT).with_suffix("").parts)


def parse(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def imports(tree: ast.AST, module: str) -> list[tuple[str, ...]]:
    """Every import of a module, at any depth, as the absolute names it may mean, relative
    imports resolved: `from X import y` means X.y when y is a submodule and X otherwise.
    `importlib.import_module("x")` and `__import__("x")` with a literal count too."""
    found: list[tuple[str, ...]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((alias.name,) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            target = _absolute(node, module)
            found.extend((target, f"{target}.{alias.name}") for alias in node.names)
        elif (
            isinstance(node, ast.Call)
            and _called_name(node.func) in {"import_module", "__import__"}
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            found.append((node.args[0].value,))
    return found


def bindings(tree: ast.AST, module: str) -> dict[str, str]:
    """What each name an import binds refers to: `import a.b` binds `a` to `a`,
    `import a.b as m` binds `m` to `a.b`, `from a import b as c` binds `c` to `a.b`."""
    bound: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    bound[alias.asname] = alias.name
                else:
                    top = alias.name.split(".")[0]
                    bound[top] = top
        elif isinstance(node, ast.ImportFrom):
            target = _absolute(node, module)
            for alias in node.names:
                bound[alias.asname or alias.name] = f"{target}.{alias.name}"
    return bound


def dotted(expr: ast.expr, bound: dict[str, str]) -> str | None:
    """The absolute name a `name.attr.attr` expression refers to, when its first name was
    bound by an import; else None (a local value)."""
    if isinstance(expr, ast.Name):
        return bound.get(expr.id)
    if isinstance(expr, ast.Attribute):
        base = dotted(expr.value, bound)
        return None if base is None else f"{base}.{expr.attr}"
    return None


def assigned(node: ast.AST) -> list[ast.expr]:
    """What a statement assigns, augments, annotates or deletes, one target at a time
    (`a, (b.c, *d) = …` gives a, b.c and d)."""
    if isinstance(node, ast.Assign):
        targets = list(node.targets)
    elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
        targets = [node.target]
    elif isinstance(node, ast.Delete):
        targets = list(node.targets)
    else:
        return []
    flat: list[ast.expr] = []
    while targets:
        target = targets.pop()
        if isinstance(target, (ast.Tuple, ast.List)):
            targets.extend(target.elts)
        elif isinstance(target, ast.Starred):
            targets.append(target.value)
        else:
            flat.append(target)
    return flat


def _absolute(node: ast.ImportFrom, module: str) -> str:
    package = module.split(".")[:-1]
    base = package[: len(package) - (node.level - 1)] if node.level else []
    return ".".join([*base, *([node.module] if node.module else [])])


def _called_name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None
