"""The kept validator (jsonschema-rs) agrees with Python's `jsonschema` (Draft 2020-12) on
what fits, and reports each misfit where and in the words the API has always shown; its
compiled validators are kept per schema; a `$ref` is never fetched; what it cannot build
is refused where a schema is declared."""

from __future__ import annotations

import random
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from app.adapters.tools.builtin.tech_radar import SPECS
from app.domain.tools import schema_validator
from app.domain.tools.schema_validator import errors, fits, problem

SCHEMAS: list[Any] = [
    *(spec.input_schema for spec in SPECS.values()),
    *(spec.output_schema for spec in SPECS.values() if spec.output_schema is not None),
    {"type": "integer", "minimum": 1, "maximum": 20},
    {"type": ["string", "null"], "minLength": 2, "maxLength": 3, "pattern": "^a"},
    {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1, "multipleOf": 0.5},
    {"type": "array", "items": {"type": "boolean"}, "minItems": 1, "maxItems": 2},
    {"type": "array", "uniqueItems": True, "contains": {"type": "string"}},
    {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"enum": ["x", "y"]}},
        "required": ["a"],
        "additionalProperties": {"type": "string"},
        "minProperties": 1,
        "maxProperties": 2,
    },
    {"properties": {"a": {"type": "object", "additionalProperties": False}}},
    {"enum": [1, True]},
    {"type": "object", "patternProperties": {"^x": {"type": "string"}}},
    {"patternProperties": {"^a": {"type": "integer"}}, "additionalProperties": False},
    {"prefixItems": [{"type": "string"}], "items": {"type": "integer"}},
    {"$ref": "#/$defs/a", "$defs": {"a": {"type": "string"}}},
    {"anyOf": [{"type": "string"}, {"type": "integer"}]},
    {"oneOf": [{"type": "integer"}, {"minimum": 2}]},
    {"not": {"type": "string"}},
    {"const": 1},
    {"dependentRequired": {"a": ["b"]}},
    {"propertyNames": {"maxLength": 1}},
    False,
]

SCALARS: list[Any] = [
    None, True, False, 0, 1, 5, 20, 21, -3, 1.0, 0.5, 2.5, 1e300, "", "a", "ab", "abc",
    "abcd", "b", "x", "y", "adopt", "hold", "\U0001f600\U0001f600", "a\U0001f600",
]  # fmt: skip
ITEM = {"id": "t1", "name": "n", "category": "c", "ring": "adopt", "summary": "s"}
SHAPED: list[Any] = [
    {"query": "db"},
    {"query": "db", "ring": "trial", "limit": 5},
    {"query": "", "limit": 5.0},
    {"query": "db", "limit": True},
    {"query": "db", "extra": 1},
    {"items": [ITEM] * 3, "total": 3},
    {"items": [{**ITEM, "ring": "later"}], "total": 1},
    {"items": [ITEM], "total": "1"},
    {"a": 1, "b": "x", "c": "s"},
    {"a": 1, "c": 2},
    {"a": {"k": 1}},
    {"xa": "s", "xb": 1, "ab": 2},
    {"technology_id": "t1", "ring": "adopt", "rationale": ""},
    [1, 1],
    ["a", "a"],
]


def values(rng: random.Random, depth: int = 0) -> Any:
    roll = rng.random()
    if depth >= 3 or roll < 0.5:
        return rng.choice(SCALARS)
    if roll < 0.75:
        return [values(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    keys = ["a", "b", "c", "xa", "query", "ring", "limit", "items", "total", "id"]
    return {k: values(rng, depth + 1) for k in rng.sample(keys, rng.randint(0, 5))}


def corpus() -> list[Any]:
    rng = random.Random(7)
    return [values(rng) for _ in range(1500)] + SHAPED


def _pointer(path: Any) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


def _reference(schema: Any, value: Any) -> list[tuple[str, str]]:
    found = []
    for error in Draft202012Validator(schema).iter_errors(value):
        message = error.message
        if error.validator == "pattern":  # searched by RE2 here, which never quoted the value
            message = f"the string does not match {error.validator_value!r}"
        found.append((_pointer(error.absolute_path), message))
    return sorted(found)


@pytest.mark.parametrize("schema", SCHEMAS, ids=lambda s: str(s)[:40])
def test_what_fits_and_why_not_agree_with_jsonschema(schema: Any) -> None:
    reference = Draft202012Validator(schema)
    seen = {True: 0, False: 0}  # the corpus finds misfits of every schema
    for value in corpus():
        expected = reference.is_valid(value)
        assert fits(schema, value) == expected, value
        found = sorted((e.pointer, e.message) for e in errors(schema, value))
        assert found == _reference(schema, value), value
        seen[expected] += 1
    assert seen[False]


def test_the_messages_the_api_documents() -> None:
    search = SPECS["search_technologies"].input_schema
    found = errors(search, {"query": 5, "limit": 0, "x": 1})
    assert [(e.pointer, e.message) for e in found] == [
        ("/query", "5 is not of type 'string'"),
        ("/limit", "0 is less than the minimum of 1"),
        ("", "Additional properties are not allowed ('x' was unexpected)"),
    ]
    assert [e.message for e in errors(search, {})] == ["'query' is a required property"]


def test_a_false_subschema_is_reported_where_it_applies() -> None:
    """Python's jsonschema reported it at the root (its `descend` drops the path there)."""
    found = errors({"properties": {"f": False}}, {"f": 1})
    assert [(e.pointer, e.message) for e in found] == [("/f", "False schema does not allow 1")]


def test_a_validator_is_compiled_once_per_schema() -> None:
    schema = {"type": "object", "properties": {"q": {"type": "string", "pattern": "^q"}}}
    first = schema_validator.validator(schema)
    assert schema_validator.validator(schema) is first
    again = {"properties": {"q": {"pattern": "^q", "type": "string"}}, "type": "object"}
    assert schema_validator.validator(again) is first  # the same canonical JSON


def test_a_catastrophic_pattern_is_searched_in_linear_time() -> None:
    """`^(a+)+$` on "a"*n + "!" takes time exponential in n on a backtracking engine."""
    import time

    for schema, value in [
        ({"type": "string", "pattern": "^(a+)+$"}, "a" * 5000 + "!"),
        (
            {"patternProperties": {"^(a+)+$": {}}, "additionalProperties": False},
            {"a" * 5000 + "!": 1},
        ),
        ({"propertyNames": {"pattern": "^(a+)+$"}}, {"a" * 5000 + "!": 1}),
    ]:
        started = time.perf_counter()
        assert not fits(schema, value)
        assert errors(schema, value)
        assert time.perf_counter() - started < 0.5


def test_a_ref_is_never_fetched() -> None:
    schema = {"$ref": "https://example.invalid/schema.json"}
    why = problem(schema)
    assert why is not None and why.startswith("not a schema this service can check: ")
    assert "resolved within the schema only" in why
    assert not fits(schema, "anything")
    assert errors(schema, 1)[0].message.startswith("the schema cannot be checked: ")


def test_refusals_where_a_schema_is_declared() -> None:
    assert problem({"type": "strin"}) == (
        "not a valid JSON Schema: 'strin' is not valid under any of the given schemas"
    )
    lookahead = problem({"properties": {"x": {"pattern": "a(?=b)"}}})
    assert lookahead is not None and lookahead.startswith("/properties/x/pattern: ")
    backreference = problem({"patternProperties": {"(a)\\1": {}}})
    assert backreference is not None and backreference.startswith("/patternProperties/")
    cjk = "".join(chr(0x4E00 + 7 * i) for i in range(64))
    huge = problem({"pattern": f"[{cjk}]{{999}}"})
    assert huge is not None and "pattern too large" in huge
    # What the engine before this one could not check linearly is checked now.
    both = {"patternProperties": {"^a": {}}, "unevaluatedProperties": False}
    assert problem(both) is None
    assert not fits(both, {"b": 1}) and fits(both, {"a": 1})


def test_a_value_the_library_cannot_read_never_fits() -> None:
    assert not fits({"type": "string"}, "\ud800")
    assert errors({"type": "string"}, "\ud800")[0].message.startswith("the value cannot be")
