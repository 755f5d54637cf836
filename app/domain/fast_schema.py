"""A fast yes for the JSON Schemas tools usually have.

jsonschema's validator walks a schema through its whole machinery (evolving validators,
resolving references) on every call: about 140 µs for a search tool's output of five
items, on every tool call. Most tool schemas use only a few plain keywords (`type`,
`properties`, `required`, `items`, `enum` of strings, lengths and bounds), which compile
to a plain Python check. A schema with any other keyword (or an `enum` that is not all
strings, whose equality rules differ from Python's) is not compiled: `compile_check`
answers None and the caller asks jsonschema, as before.

The compiled check only ever says *valid*; when it says not, the caller asks jsonschema,
which finds the error to report. So it must never accept what Draft 2020-12 refuses, and
for the keywords it takes it follows the draft exactly: `integer` takes 1.0, neither
`integer` nor `number` takes a boolean, `minLength` counts code points, a `pattern` is
searched (by RE2, as the jsonschema check here does: `domain.schema_validator`), not
matched, and `format` is an annotation (jsonschema here checks no format).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from app.domain import patterns

Check = Callable[[Any], bool]

_ANNOTATIONS = {"title", "description", "default", "examples", "format", "$comment"}
_DIALECT = "https://json-schema.org/draft/2020-12/schema"


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _is_integer(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and value.is_integer())


_TYPES: dict[str, Check] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "number": _is_number,
    "integer": _is_integer,
}


def compile_check(schema: Any) -> Check | None:
    """A check equivalent to Draft 2020-12 validation of `schema` for the values it
    accepts, or None when the schema uses something this module does not compile."""
    if schema is True:
        return lambda _value: True
    if not isinstance(schema, Mapping):
        return None
    if schema.get("$schema", _DIALECT) != _DIALECT:
        return None
    checks: list[Check] = []
    for keyword, argument in schema.items():
        if keyword in _ANNOTATIONS or keyword == "$schema":
            continue
        made = _keyword(keyword, argument, schema)
        if made is None:
            return None
        checks.append(made)
    return _every(checks)


def _every(checks: list[Check]) -> Check:
    # Loops, not `all(<generator>)`: a generator a level costs more than the checks in it.
    if not checks:
        return lambda _value: True
    if len(checks) == 1:
        return checks[0]

    def every(value: Any) -> bool:
        for check in checks:  # noqa: SIM110
            if not check(value):
                return False
        return True

    return every


def _keyword(keyword: str, argument: Any, schema: Mapping[str, Any]) -> Check | None:
    maker = _MAKERS.get(keyword)
    return None if maker is None else maker(argument, schema)


def _type(argument: Any, _schema: Mapping[str, Any]) -> Check | None:
    names = [argument] if isinstance(argument, str) else argument
    if not isinstance(names, list) or not all(n in _TYPES for n in names):
        return None
    tests = [_TYPES[n] for n in names]
    if len(tests) == 1:
        return tests[0]
    return lambda value: any(test(value) for test in tests)


def _properties(argument: Any, _schema: Mapping[str, Any]) -> Check | None:
    if not isinstance(argument, Mapping):
        return None
    compiled: dict[str, Check] = {}
    for name, sub in argument.items():
        check = compile_check(sub)
        if check is None:
            return None
        compiled[name] = check

    named = list(compiled.items())

    def properties(value: Any) -> bool:
        if not isinstance(value, dict):
            return True
        for name, check in named:  # noqa: SIM110
            if name in value and not check(value[name]):
                return False
        return True

    return properties


def _additional(argument: Any, schema: Mapping[str, Any]) -> Check | None:
    if "patternProperties" in schema:
        return None
    known = set(schema.get("properties") or {})
    check = compile_check(argument) if argument is not False else None
    if argument is not False and check is None:
        return None

    def additional(value: Any) -> bool:
        if not isinstance(value, dict):
            return True
        extra = [k for k in value if k not in known]
        if argument is False:
            return not extra
        return all(check(value[k]) for k in extra)  # type: ignore[misc]

    return additional


def _required(argument: Any, _schema: Mapping[str, Any]) -> Check | None:
    if not isinstance(argument, list):
        return None
    names = list(argument)
    return lambda value: not isinstance(value, dict) or all(n in value for n in names)


def _items(argument: Any, schema: Mapping[str, Any]) -> Check | None:
    if "prefixItems" in schema:
        return None
    check = compile_check(argument)
    if check is None:
        return None

    def items(value: Any) -> bool:
        if not isinstance(value, list):
            return True
        for item in value:  # noqa: SIM110
            if not check(item):
                return False
        return True

    return items


def _enum(argument: Any, _schema: Mapping[str, Any]) -> Check | None:
    if not isinstance(argument, list) or not all(isinstance(a, str) for a in argument):
        return None  # JSON equality (1 == 1.0, true != 1) is not Python's: jsonschema decides
    allowed = frozenset(argument)
    return lambda value: isinstance(value, str) and value in allowed


def _bound(test: Callable[[Any, Any], bool], applies: Check) -> Callable[..., Check | None]:
    def make(argument: Any, _schema: Mapping[str, Any]) -> Check | None:
        if not _is_number(argument):
            return None
        return lambda value: not applies(value) or test(_size(value), argument)

    return make


def _size(value: Any) -> Any:
    return len(value) if isinstance(value, str | list) else value


def _pattern(argument: Any, _schema: Mapping[str, Any]) -> Check | None:
    if not isinstance(argument, str):
        return None
    try:
        compiled = patterns.compile(argument)  # linear in the value, whatever the pattern
    except patterns.error:
        return None  # jsonschema's check says why
    return lambda value: not isinstance(value, str) or compiled.search(value)


_MAKERS: dict[str, Callable[[Any, Mapping[str, Any]], Check | None]] = {
    "type": _type,
    "properties": _properties,
    "additionalProperties": _additional,
    "required": _required,
    "items": _items,
    "enum": _enum,
    "pattern": _pattern,
    "minLength": _bound(lambda size, bound: size >= bound, _TYPES["string"]),
    "maxLength": _bound(lambda size, bound: size <= bound, _TYPES["string"]),
    "minItems": _bound(lambda size, bound: size >= bound, _TYPES["array"]),
    "maxItems": _bound(lambda size, bound: size <= bound, _TYPES["array"]),
    "minimum": _bound(lambda value, bound: value >= bound, _is_number),
    "maximum": _bound(lambda value, bound: value <= bound, _is_number),
    "exclusiveMinimum": _bound(lambda value, bound: value > bound, _is_number),
    "exclusiveMaximum": _bound(lambda value, bound: value < bound, _is_number),
}
