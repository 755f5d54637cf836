"""What docs/config.md must list, read from the code: every key of the YAML config (the
pydantic models, walked), every `TOOLGATE_*` variable (Settings' fields) and every other
variable the code reads by name (`OTEL_*`, the providers'); and the rows the page has."""

from __future__ import annotations

import enum
import re
import types
import typing
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, SecretStr
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from app.config.models import AppConfig
from app.config.settings import Settings

APP = Path(__file__).resolve().parents[2] / "app"
_VARIABLE = re.compile(r"\b((?:OTEL|OPENAI|ANTHROPIC)_[A-Z0-9_]*[A-Z0-9])(?![A-Z0-9_{])")
REQUIRED = "required"
UNSET = "unset"


def _inner(annotation: Any) -> Any:
    """The annotation without `Annotated[...]` and `| None`."""
    while typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        kept = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(kept) == 1:
            return _inner(kept[0])
    return annotation


def config_keys(
    model: type[BaseModel] = AppConfig, prefix: str = ""
) -> dict[str, tuple[FieldInfo, Any]]:
    """Dotted path -> (field, its plain type), for every leaf key: a mapping of names is
    `<name>`, a list of sections `[]`."""
    found: dict[str, tuple[FieldInfo, Any]] = {}
    for name, field in model.model_fields.items():
        path, kind = f"{prefix}{name}", _inner(field.annotation)
        origin, args = typing.get_origin(kind), typing.get_args(kind)
        if isinstance(kind, type) and issubclass(kind, BaseModel):
            found |= config_keys(kind, f"{path}.")
        elif origin is dict and _sections(args[1]):
            # A union of sections (the kinds of tool): every kind's keys, a key the kinds
            # share listed once (as the first kind has it).
            for section in _sections(args[1]):
                found = config_keys(section, f"{path}.<name>.") | found
        elif origin is list and _is_section(args[0]):
            found |= config_keys(_inner(args[0]), f"{path}[].")
        else:
            found[path] = (field, kind)
    return found


def _sections(annotation: Any) -> list[type[BaseModel]]:
    """The sections a mapping's values may be: one model, or a union of models."""
    kind = _inner(annotation)
    if typing.get_origin(kind) in (typing.Union, types.UnionType):
        members = [_inner(a) for a in typing.get_args(kind)]
        if all(isinstance(m, type) and issubclass(m, BaseModel) for m in members):
            return members
    return [kind] if _is_section(kind) else []


def _is_section(annotation: Any) -> bool:
    kind = _inner(annotation)
    return isinstance(kind, type) and issubclass(kind, BaseModel)


def variables() -> dict[str, tuple[FieldInfo, Any]]:
    """`TOOLGATE_<FIELD>` -> (field, its plain type), for every setting."""
    return {
        f"TOOLGATE_{name.upper()}": (field, _inner(field.annotation))
        for name, field in Settings.model_fields.items()
    }


def other_variables() -> set[str]:
    """Variables the code reads by name besides TOOLGATE_* (telemetry, providers)."""
    return {m for p in APP.rglob("*.py") for m in _VARIABLE.findall(p.read_text())}


def type_words(kind: Any) -> tuple[str, ...]:
    """How the page may begin a key's type."""
    origin = typing.get_origin(kind)
    if origin is Literal or (isinstance(kind, type) and issubclass(kind, enum.Enum)):
        return ("one of", "`")
    if origin is list:
        return ("list",)
    if origin is dict:
        return ("mapping",)
    words = {
        bool: ("boolean",),
        int: ("integer",),
        float: ("number",),
        str: ("string", "URL", "route name", "environment variable name"),
        SecretStr: ("URL",),
        Path: ("path",),
    }
    return words[kind]


def default_of(field: FieldInfo) -> Any:
    """The code's default: a plain value, UNSET for None, REQUIRED for none at all."""
    if field.default_factory is not None:
        return None  # computed when the process starts (stated in words on the page)
    if field.default is PydanticUndefined:
        return REQUIRED
    value = field.default
    if value is None:
        return UNSET
    if isinstance(value, BaseModel):
        return value.model_dump()
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, Path):
        return str(value)
    return value


def rows(page: Path) -> dict[str, list[str]]:
    """A table row's cells by the backticked names in its first cell (one row may name
    several variables)."""
    found: dict[str, list[str]] = {}
    for line in page.read_text(encoding="utf-8").splitlines():
        if not line.startswith("| `"):
            continue
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
        for name in re.findall(r"`([^`]+)`", cells[0]):
            found[name] = cells
    return found
