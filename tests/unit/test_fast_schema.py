"""The compiled check agrees with jsonschema (Draft 2020-12) on every value it is asked
about: never valid where jsonschema finds an error; and for the schemas it compiles, valid
wherever jsonschema finds none. Schemas it cannot compile are left to jsonschema."""

from __future__ import annotations

import itertools
import random
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from app.adapters.builtin_tools.tech_radar import SPECS
from app.domain.fast_schema import compile_check
from app.domain.tools import surely_valid

SCHEMAS: list[dict[str, Any]] = [
    *(spec.input_schema for spec in SPECS.values()),
    *(spec.output_schema for spec in SPECS.values() if spec.output_schema is not None),
    {"type": "integer", "minimum": 1, "maximum": 20},
    {"type": ["string", "null"], "minLength": 2, "maxLength": 3, "pattern": "^a"},
    {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
    {"type": "array", "items": {"type": "boolean"}, "minItems": 1, "maxItems": 2},
    {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"enum": ["x", "y"]}},
        "required": ["a"],
        "additionalProperties": {"type": "string"},
    },
    {"properties": {"a": {"type": "object", "additionalProperties": False}}},
]
#: Not compiled: jsonschema alone decides.
LEFT_TO_JSONSCHEMA: list[Any] = [
    {"enum": [1, True]},
    {"type": "object", "patternProperties": {"^x": {"type": "string"}}},
    {"prefixItems": [{"type": "string"}], "items": {"type": "integer"}},
    {"$ref": "#/$defs/a", "$defs": {"a": {"type": "string"}}},
    {"anyOf": [{"type": "string"}, {"type": "integer"}]},
    {"const": 1},
    {"type": "decimal"},
    {"$schema": "http://json-schema.org/draft-07/schema#", "type": "string"},
    False,
]

SCALARS: list[Any] = [
    None, True, False, 0, 1, 5, 20, 21, -3, 1.0, 0.5, 2.5, 1e300, "", "a", "ab", "abc",
    "abcd", "b", "x", "y", "adopt", "hold", "\U0001f600\U0001f600", "a\U0001f600",
]  # fmt: skip


def values(rng: random.Random, depth: int = 0) -> Any:
    roll = rng.random()
    if depth >= 3 or roll < 0.5:
        return rng.choice(SCALARS)
    if roll < 0.75:
        return [values(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    keys = ["a", "b", "c", "query", "ring", "limit", "items", "total", "id", "name"]
    return {k: values(rng, depth + 1) for k in rng.sample(keys, rng.randint(0, 5))}


def corpus(schema: Any) -> list[Any]:
    rng = random.Random(7)
    found = [values(rng) for _ in range(3000)]
    # Values shaped like the tools' real arguments and outputs, some valid.
    item = {"id": "t1", "name": "n", "category": "c", "ring": "adopt", "summary": "s"}
    found += [
        {"query": "db"},
        {"query": "db", "ring": "trial", "limit": 5},
        {"query": "", "limit": 5.0},
        {"query": "db", "limit": True},
        {"query": "db", "extra": 1},
        {"items": [item] * 3, "total": 3},
        {"items": [{**item, "ring": "later"}], "total": 1},
        {"items": [item], "total": 1.0},
        {"items": [item], "total": "1"},
        {"a": 1, "b": "x", "c": "s"},
        {"a": 1, "c": 2},
        {"a": {"k": 1}},
        {"a": {}},
        {"technology_id": "t1"},
        {"technology_id": "t1", "ring": "adopt", "rationale": "because"},
        {"technology_id": "t1", "ring": "adopt", "rationale": ""},
        {**item, "description": "d", "version": 2},
        {**item, "description": "d", "version": 2.0, "updated_at": "2026"},
        {**item, "description": "d", "version": "2"},
        {"id": "t1", "name": "n", "ring": "hold", "version": 3},
        {"id": "t1", "name": "n", "ring": "hold", "version": False},
    ]
    return found


@pytest.mark.parametrize("schema", SCHEMAS, ids=lambda s: str(s)[:40])
def test_the_compiled_check_agrees_with_jsonschema(schema: dict[str, Any]) -> None:
    check = compile_check(schema)
    assert check is not None
    validator = Draft202012Validator(schema)
    valid_seen = invalid_seen = 0
    for value in corpus(schema):
        expected = validator.is_valid(value)
        assert check(value) == expected, value
        assert surely_valid(schema, value) == expected, value
        valid_seen += expected
        invalid_seen += not expected
    assert valid_seen and invalid_seen  # the corpus tried both sides


@pytest.mark.parametrize("schema", LEFT_TO_JSONSCHEMA, ids=lambda s: str(s)[:40])
def test_what_it_cannot_compile_is_left_to_jsonschema(schema: Any) -> None:
    assert compile_check(schema) is None
    if isinstance(schema, dict):
        assert not any(surely_valid(schema, v) for v in itertools.islice(SCALARS, 10))
