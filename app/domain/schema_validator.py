"""jsonschema's Draft 2020-12 validator with every regular expression on RE2.

jsonschema searches `pattern` values and `patternProperties` keys with Python's `re`,
which backtracks: a schema's pattern (an operator's, or an MCP server's) on a hostile
string or property name could hold the event loop for minutes. The three keywords that
search are replaced here by the same rules on `domain.patterns` (RE2, linear time).

`unevaluatedProperties` also searches `patternProperties` (through jsonschema's own
helper), so a schema that uses both is refused where it is declared (`problem`), as a
pattern RE2 does not take is.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from jsonschema import Draft202012Validator, validators
from jsonschema.exceptions import SchemaError, ValidationError

from app.domain import patterns


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[Any]:
    if validator.is_type(instance, "string") and not _found(pattern, instance):
        yield ValidationError(f"the string does not match {pattern!r}")


def _found(pattern: str, text: str) -> bool:
    try:
        return patterns.search(pattern, text)
    except patterns.error:
        return False  # cannot be checked here: never valid (refused where declared)


def _pattern_properties(validator: Any, properties: Any, instance: Any, schema: Any) -> Any:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in properties.items():
        for key, value in instance.items():
            if _found(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _extras(instance: Mapping[str, Any], schema: Mapping[str, Any]) -> list[str]:
    known = schema.get("properties", {})
    matching = list(schema.get("patternProperties", {}))
    return [
        key
        for key in instance
        if key not in known and not any(_found(pattern, key) for pattern in matching)
    ]


def _additional(validator: Any, allowed: Any, instance: Any, schema: Any) -> Any:
    if not validator.is_type(instance, "object"):
        return
    extras = _extras(instance, schema)
    if validator.is_type(allowed, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], allowed, path=extra)
    elif not allowed and extras:
        # jsonschema's own wording, which the model and the API have always seen.
        names = ", ".join(repr(each) for each in sorted(extras))
        one = len(extras) == 1
        if "patternProperties" in schema:
            regexes = ", ".join(repr(each) for each in sorted(schema["patternProperties"]))
            verb = "does" if one else "do"
            yield ValidationError(f"{names} {verb} not match any of the regexes: {regexes}")
        else:
            verb = "was" if one else "were"
            yield ValidationError(
                f"Additional properties are not allowed ({names} {verb} unexpected)"
            )


LinearValidator: Any = validators.extend(
    Draft202012Validator,
    {
        "pattern": _pattern,
        "patternProperties": _pattern_properties,
        "additionalProperties": _additional,
    },
)


def _keywords(schema: Any) -> set[str]:
    found: set[str] = set()
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, Mapping):
            found.update(k for k in node if isinstance(k, str))
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return found


def _nested_dialect(schema: Any) -> bool:
    stack = [schema.values() if isinstance(schema, Mapping) else schema]
    while stack:
        nodes = stack.pop()
        for node in nodes if isinstance(nodes, list) else list(nodes):
            if isinstance(node, Mapping):
                if "$schema" in node:
                    return True
                stack.append(node.values())
            elif isinstance(node, list):
                stack.append(node)
    return False


def problem(schema: Any) -> str | None:
    """Why `schema` cannot be used to check untrusted values, or None: not a valid Draft
    2020-12 schema, a pattern RE2 does not take, or `unevaluatedProperties` beside
    `patternProperties` (whose search jsonschema does with Python's `re`)."""
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        return f"not a valid JSON Schema: {exc.message}"
    why = patterns.schema_problem(schema)
    if why is not None:
        return why
    if _nested_dialect(schema):
        # jsonschema validates a subschema that names its dialect with that dialect's
        # stock validator, whose `pattern` is Python's backtracking `re`.
        return "$schema is allowed only at the schema's root"
    if {"unevaluatedProperties", "patternProperties"} <= _keywords(schema):
        return "unevaluatedProperties and patternProperties in one schema are not supported"
    return None
