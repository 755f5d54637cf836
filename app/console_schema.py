"""The console's `schema.js`, generated from the OpenAPI document: every enum as a list
(`RUN_STATUSES`, `PREVIEW_STATUSES`, …) and every component schema as a JSDoc typedef, so
the console's filters and badges use the API's own values and `tsc` checks the console's
use of the API's answers. `make openapi` writes it; a test compares it with the served
document."""

from __future__ import annotations

import json
import re
from typing import Any

HEADER = """\
// @ts-check
// Generated from the OpenAPI document by `make openapi` (`python -m app console-schema`):
// do not edit. The API's enums as lists, and its schemas as JSDoc types.
"""
_IDENTIFIER = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$]*$")
_SCALARS = {"string": "string", "integer": "number", "number": "number", "boolean": "boolean"}


def console_module(document: dict[str, Any]) -> str:
    """The text of `app/static/console/schema.js` for `document`."""
    schemas: dict[str, Any] = document["components"]["schemas"]
    parts = [HEADER]
    for name, schema in schemas.items():
        if "enum" in schema:
            parts.append(_enum(name, schema["enum"]))
    for name, schema in schemas.items():
        if "enum" not in schema:
            parts.append(_typedef(name, schema))
    return "\n".join(parts)


def _constant(name: str) -> str:
    """`RunStatus` → `RUN_STATUSES`, `EventType` → `EVENT_TYPES`, `DiagnosisCategory` →
    `DIAGNOSIS_CATEGORIES`."""
    snake = re.sub(r"(?<!^)(?=[A-Z])", "_", name).upper()
    if re.search(r"[^AEIOU]Y$", snake):
        return snake[:-1] + "IES"
    return snake + ("ES" if snake.endswith("S") else "S")


def _enum(name: str, values: list[Any]) -> str:
    items = "".join(f"  {json.dumps(v)},\n" for v in values)
    union = " | ".join(json.dumps(v) for v in values)
    return (
        f"/** @typedef {{{union}}} {name} */\n"
        f"/** @type {{readonly {name}[]}} */\n"
        f"export const {_constant(name)} = Object.freeze([\n{items}]);\n"
    )


def _typedef(name: str, schema: dict[str, Any]) -> str:
    properties: dict[str, Any] = schema.get("properties", {})
    if not properties:
        return f"/** @typedef {{{_type(schema)}}} {name} */\n"
    required = set(schema.get("required", []))
    lines = [f"/**\n * @typedef {{object}} {name}\n"]
    for prop, sub in properties.items():
        key = prop if _IDENTIFIER.match(prop) else json.dumps(prop)
        lines.append(f" * @property {{{_type(sub)}}} {key if prop in required else f'[{key}]'}\n")
    lines.append(" */\n")
    return "".join(lines)


def _type(schema: dict[str, Any]) -> str:
    """A JSON Schema (as pydantic and FastAPI write them) as a TypeScript type."""
    if "$ref" in schema:
        return str(schema["$ref"]).rsplit("/", 1)[1]
    if "const" in schema:
        return json.dumps(schema["const"])
    if "enum" in schema:
        return " | ".join(json.dumps(v) for v in schema["enum"])
    options = schema.get("anyOf") or schema.get("oneOf")
    if options:
        return " | ".join(_type(o) for o in options)
    kind = schema.get("type")
    if kind in _SCALARS:
        return _SCALARS[kind]
    if kind == "null":
        return "null"
    if kind == "array":
        return f"Array<{_type(schema.get('items', {}))}>"
    if kind == "object":
        return _object(schema)
    return "unknown"


def _object(schema: dict[str, Any]) -> str:
    properties: dict[str, Any] = schema.get("properties", {})
    if properties:
        required = set(schema.get("required", []))
        fields = ", ".join(
            f"{p if _IDENTIFIER.match(p) else json.dumps(p)}{'' if p in required else '?'}: "
            f"{_type(s)}"
            for p, s in properties.items()
        )
        return f"{{{fields}}}"
    extra = schema.get("additionalProperties", True)
    value = "unknown" if extra is True or extra == {} else _type(extra)
    return f"Record<string, {value}>"
