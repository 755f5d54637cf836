"""Tool arguments, tool outputs and typed answers checked against their JSON Schemas
(Draft 2020-12) by jsonschema-rs, a kept library, its compiled validators cached per schema.

Every regular expression stays linear in the text it searches (docs/trust.md): `pattern`
is searched by RE2 (`domain.patterns`, a keyword plug-in in place of the library's), and
`patternProperties` by the library's `regex` engine, which has no backtracking either. A
`$ref` is resolved within the schema, never fetched.

The messages are the ones the API has always shown, in Python's `jsonschema` wording
(`'ring' is a required property`, `3 is not of type 'string'`), rebuilt from what the
library reports; paths are the instance's keys and indexes. Python's `jsonschema` is
kept for one thing: checking a declared schema against the meta-schema (`problem`), whose
messages the config errors have always quoted.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import jsonschema_rs
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from app.domain import patterns
from app.domain.memo import by_identity
from app.domain.tools.specs import canonical_json

#: How many compiled validators are kept by the schema's canonical JSON (beyond those
#: kept by the identity of the schema objects the process holds).
CACHE_SIZE = 512


@dataclass(frozen=True)
class Misfit:
    """One reason a value does not fit a schema: where (its keys and indexes from the
    root) and what."""

    path: tuple[str | int, ...]
    message: str

    @property
    def pointer(self) -> str:
        """`path` as a JSON pointer ("" is the whole value)."""
        return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in self.path)


class _Pattern:
    """`pattern` on RE2: jsonschema-rs would compile it for its own engines."""

    def __init__(self, _parent: Any, value: Any, _path: Any) -> None:
        self.pattern = value
        self.linear = patterns.compile(value)  # raises for what RE2 refuses: never built

    def validate(self, instance: Any) -> None:
        if isinstance(instance, str) and not self.linear.search(instance):
            raise ValueError(f"the string does not match {self.pattern!r}")


def _never_fetched(uri: str) -> Any:
    raise ValueError(f"{uri}: a $ref is resolved within the schema only")


def _build(schema: Any) -> Any:
    return jsonschema_rs.Draft202012Validator(
        schema,
        retriever=_never_fetched,
        pattern_options=jsonschema_rs.RegexOptions(
            size_limit=patterns.MAX_MEM, dfa_size_limit=patterns.MAX_MEM
        ),
        keywords={"pattern": _Pattern},
    )


class _Unusable:
    """What checks a value against a schema the library cannot build: nothing fits (the
    schema was refused where it was declared; this is the second line)."""

    def __init__(self, why: str) -> None:
        self.why = why

    def is_valid(self, _instance: Any) -> bool:
        return False


_by_text: OrderedDict[str, Any] = OrderedDict()
#: Checks run on the loop and on the off-loop pool's threads alike.
_by_text_lock = threading.Lock()


def _cached(text: str) -> Any:
    with _by_text_lock:
        made = _by_text.get(text)
        if made is not None:
            _by_text.move_to_end(text)
        return made


def _keep(text: str, made: Any) -> None:
    with _by_text_lock:
        _by_text[text] = made
        if len(_by_text) > CACHE_SIZE:
            _by_text.popitem(last=False)


def _compiled(schema: Any) -> Any:
    try:
        text = canonical_json(schema)
    except (TypeError, ValueError, RecursionError):
        text = None
    found = None if text is None else _cached(text)
    if found is not None:
        return found
    try:
        made: Any = _build(schema)
    except (ValueError, patterns.error, jsonschema_rs.ReferencingError) as exc:
        made = _Unusable(_first_line(exc))
    if text is not None:
        _keep(text, made)
    return made


#: The compiled validator of a schema: by the schema object's identity first (tool specs
#: live as long as the process), then by its canonical JSON (a schema read anew, as a
#: server's listing, compiles once).
validator = by_identity(_compiled)


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def fits(schema: Any, value: Any) -> bool:
    """Whether `value` is valid against `schema`."""
    try:
        return bool(validator(schema).is_valid(value))
    except (ValueError, TypeError):
        return False  # a value the library cannot read (a lone surrogate): never valid


def errors(schema: Any, value: Any) -> list[Misfit]:
    """Why `value` does not fit `schema` (empty when it does), in the library's order."""
    compiled = validator(schema)
    if isinstance(compiled, _Unusable):
        return [Misfit((), f"the schema cannot be checked: {compiled.why}")]
    try:
        found = list(compiled.iter_errors(value))
    except (ValueError, TypeError) as exc:
        return [Misfit((), f"the value cannot be checked: {_first_line(exc)}")]
    return [Misfit(tuple(e.instance_path), _message(e, schema, value)) for e in found]


def prepare(schema: Any) -> None:
    """Builds now what checking values against `schema` needs (its validator, its
    patterns): a server's patterns can take seconds to compile, so this runs off the
    event loop and the first check on the loop compiles nothing."""
    if isinstance(schema, Mapping | bool):
        validator(schema)


def problem(schema: Any) -> str | None:
    """Why `schema` cannot be used to check untrusted values, or None: not a valid Draft
    2020-12 schema, a pattern RE2 does not take, or a schema the library cannot build
    (a `$ref` it cannot resolve within the schema, among others)."""
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        return f"not a valid JSON Schema: {exc.message}"
    why = patterns.schema_problem(schema)
    if why is not None:
        return why
    compiled = validator(schema)  # kept: the values it checks come next
    if isinstance(compiled, _Unusable):
        return f"not a schema this service can check: {compiled.why}"
    return None


_MISSING = object()


def _at(node: Any, path: Sequence[str | int], default: Any = None) -> Any:
    for step in path:
        try:
            node = node[step]
        except (KeyError, IndexError, TypeError):
            return default
    return node


def _sized(instance: Any, limit: Any, keyword: str) -> str:
    words = {
        "minLength": ("should be non-empty", "is too short", 1),
        "minItems": ("should be non-empty", "is too short", 1),
        "minProperties": ("should be non-empty", "does not have enough properties", 1),
        "maxLength": ("is expected to be empty", "is too long", 0),
        "maxItems": ("is expected to be empty", "is too long", 0),
        "maxProperties": ("is expected to be empty", "has too many properties", 0),
    }
    special, usual, at = words[keyword]
    return f"{instance!r} {special if limit == at else usual}"


def _extras(unexpected: list[Any], parent: Any) -> str:
    names = ", ".join(repr(each) for each in sorted(unexpected, key=str))
    one = len(unexpected) == 1
    regexes = parent.get("patternProperties") if isinstance(parent, Mapping) else None
    if regexes:
        listed = ", ".join(repr(each) for each in sorted(regexes))
        return f"{names} {'does' if one else 'do'} not match any of the regexes: {listed}"
    return f"Additional properties are not allowed ({names} {'was' if one else 'were'} unexpected)"


def _missing(name: Any, where: list[str | int], value: Any, instance: Any) -> str:
    if where and where[-1] == "dependentRequired" and isinstance(value, Mapping):
        for present, needed in value.items():
            if isinstance(instance, Mapping) and present in instance and name in needed:
                return f"{name!r} is a dependency of {present!r}"
    return f"{name!r} is a required property"


def _message(error: Any, schema: Any, checked: Any) -> str:
    """Python `jsonschema`'s words for what jsonschema-rs found; the library's own where
    there is no counterpart. The instance is quoted as the caller gave it (the library's
    copy has its keys sorted)."""
    kind = error.kind.name
    where = list(error.schema_path)
    value = _at(schema, where)
    instance = _at(checked, error.instance_path, _MISSING)
    if instance is _MISSING or kind == "propertyNames":
        instance = error.instance
    if kind == "type" and value is not None:
        names = [value] if isinstance(value, str) else list(value)
        return f"{instance!r} is not of type {', '.join(repr(n) for n in names)}"
    if kind == "required":
        return _missing(error.kind.property, where, value, instance)
    if kind == "enum" and isinstance(value, list):
        return f"{instance!r} is not one of {value!r}"
    if kind == "const":
        return f"{value!r} was expected"
    if kind in _BOUNDS:
        return f"{instance!r} {_BOUNDS[kind]} {value!r}"
    if kind == "multipleOf":
        return f"{instance!r} is not a multiple of {value}"
    if kind in ("minLength", "minItems", "minProperties", "maxLength", "maxItems", "maxProperties"):
        return _sized(instance, value, kind)
    if kind == "uniqueItems":
        return f"{instance!r} has non-unique elements"
    if kind == "additionalProperties":
        return _extras(list(error.kind.unexpected), _at(schema, where[:-1]))
    if kind == "falseSchema" and where[-1:] == ["additionalProperties"]:
        # jsonschema-rs reports `additionalProperties: false` beside no `properties` as
        # the false schema, on the first extra property's value.
        parent = _at(schema, where[:-1])
        if isinstance(instance, Mapping) and isinstance(parent, Mapping):
            known = parent.get("properties") or {}
            return _extras([key for key in instance if key not in known], parent)
    if kind == "falseSchema":
        return f"False schema does not allow {instance!r}"
    if kind == "not":
        return f"{instance!r} should not be valid under {value!r}"
    if kind == "anyOf" or (kind == "oneOf" and all(error.kind.context)):
        return f"{instance!r} is not valid under any of the given schemas"
    if kind == "oneOf" and isinstance(value, list):
        valid = [each for each, why in zip(value, error.kind.context, strict=False) if not why]
        reprs = ", ".join(repr(each) for each in valid[1:] + valid[:1])
        return f"{instance!r} is valid under each of {reprs}"
    if kind == "propertyNames":
        return _message(error.kind.error, schema, error.kind.error.instance)
    if kind == "contains":
        return f"{instance!r} does not contain items matching the given schema"
    return str(error.message)


_BOUNDS = {
    "minimum": "is less than the minimum of",
    "maximum": "is greater than the maximum of",
    "exclusiveMinimum": "is less than or equal to the minimum of",
    "exclusiveMaximum": "is greater than or equal to the maximum of",
}
