"""Tool specs, argument normalization, hashes and the run's exposed tool set."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.domain.tools.specs import (
    Principal,
    Risk,
    ToolError,
    ToolSpec,
    args_hash,
    canonical_json,
    exposed_tools,
    schema_hash,
    sha256_tag,
)

SCHEMA = {"type": "object", "properties": {"q": {"type": "string"}}}


def spec(name: str, **kwargs: Any) -> ToolSpec:
    return ToolSpec(name=name, description=f"{name} tool", input_schema=SCHEMA, **kwargs)


# --- canonical_json / hashes ------------------------------------------------------------


def test_canonical_json_sorts_keys_at_every_level_without_spaces() -> None:
    value = {"b": 1, "a": {"z": [3, {"y": 2, "x": 1}], "c": None}}
    assert canonical_json(value) == '{"a":{"c":null,"z":[3,{"x":1,"y":2}]},"b":1}'


def test_canonical_json_keeps_utf8() -> None:
    assert canonical_json({"name": "Zürich ✓"}) == '{"name":"Zürich ✓"}'


def test_canonical_json_keeps_list_order() -> None:
    assert canonical_json([3, 1, 2]) == "[3,1,2]"


def test_canonical_json_round_trips() -> None:
    value = {"k": [1, 2.5, True, None, "s"], "n": {"m": {}}}
    assert json.loads(canonical_json(value)) == value


def test_sha256_tag() -> None:
    assert sha256_tag("") == (
        "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    )


def test_args_hash_is_the_tag_of_the_canonical_json() -> None:
    assert args_hash({"q": "x"}) == sha256_tag('{"q":"x"}')


def test_args_hash_ignores_key_order_and_spacing() -> None:
    one = args_hash({"a": 1, "b": {"d": 2, "c": 3}})
    two = args_hash(json.loads('{ "b": {"c": 3, "d": 2},  "a": 1 }'))
    assert one == two


def test_args_hash_differs_for_different_values() -> None:
    assert args_hash({"a": 1}) != args_hash({"a": 2})
    assert args_hash({"a": 1}) != args_hash({"a": "1"})
    assert args_hash([1, 2]) != args_hash([2, 1])


def test_schema_hash_is_stable_under_tool_order() -> None:
    a, b, c = spec("alpha"), spec("beta"), spec("gamma")
    expected = schema_hash([a, b, c])
    assert schema_hash([c, a, b]) == expected
    assert schema_hash(t for t in (b, c, a)) == expected


def test_schema_hash_is_stable_under_schema_key_order() -> None:
    one = ToolSpec(name="t", description="d", input_schema={"type": "object", "required": ["q"]})
    two = ToolSpec(name="t", description="d", input_schema={"required": ["q"], "type": "object"})
    assert schema_hash([one]) == schema_hash([two])


@pytest.mark.parametrize(
    "changed",
    [
        ToolSpec(name="other", description="alpha tool", input_schema=SCHEMA),
        ToolSpec(name="alpha", description="changed", input_schema=SCHEMA),
        ToolSpec(name="alpha", description="alpha tool", input_schema={"type": "object"}),
    ],
    ids=["name", "description", "input_schema"],
)
def test_schema_hash_changes_with_what_the_model_sees(changed: ToolSpec) -> None:
    assert schema_hash([changed]) != schema_hash([spec("alpha")])


def test_schema_hash_ignores_what_the_model_does_not_see() -> None:
    hidden = spec("alpha", risk=Risk.HIGH, timeout_s=1.0, permissions=("x",), enabled=False)
    assert schema_hash([hidden]) == schema_hash([spec("alpha")])


def test_schema_hash_of_no_tools() -> None:
    assert schema_hash([]) == sha256_tag("[]")


# --- ToolSpec / ToolError ---------------------------------------------------------------


def test_spec_defaults() -> None:
    s = spec("t")
    assert (s.risk, s.requires_approval, s.side_effects, s.enabled) == (
        Risk.LOW,
        False,
        False,
        True,
    )
    assert s.read_only and s.may_retry


def test_spec_retry_safety() -> None:
    assert spec("w", side_effects=True).may_retry is False
    assert spec("w", side_effects=True).read_only is False
    assert spec("w", side_effects=True, idempotent=True).may_retry is True


def test_tool_error_is_an_exception_with_safe_text() -> None:
    error = ToolError("timeout", "took too long", retryable=True)
    assert isinstance(error, Exception)
    assert str(error) == "timeout: took too long"


# --- Principal.covers -------------------------------------------------------------------


def test_principal_without_scope_list_covers_everything() -> None:
    root = Principal("t1", "root")
    assert root.scopes is None
    assert root.covers(["anything", "at:all"])
    assert root.covers([])


def test_principal_covers_only_its_scopes() -> None:
    reader = Principal("t1", "alice", scopes=frozenset({"radar:read", "docs:read"}))
    assert reader.covers([])
    assert reader.covers(["radar:read"])
    assert reader.covers(("radar:read", "docs:read"))
    assert not reader.covers(["radar:write"])
    assert not reader.covers(["radar:read", "radar:write"])


def test_principal_with_empty_scopes_covers_only_nothing() -> None:
    nobody = Principal("t1", "bob", scopes=frozenset())
    assert nobody.covers([])
    assert not nobody.covers(["radar:read"])


def test_scopes_match_exactly() -> None:
    reader = Principal("t1", "alice", scopes=frozenset({"radar:read"}))
    assert not reader.covers(["radar"])
    assert not reader.covers(["RADAR:READ"])


# --- exposed_tools ----------------------------------------------------------------------

REGISTRY = {
    "search": spec("search", permissions=("radar:read",)),
    "get": spec("get", permissions=("radar:read",)),
    "write": spec("write", permissions=("radar:write",), side_effects=True),
    "off": spec("off", enabled=False),
    "free": spec("free"),
}
EVERYONE = Principal("t1", "root")
READER = Principal("t1", "alice", scopes=frozenset({"radar:read"}))


def _exposed(
    agent: list[str], requested: list[str] | None = None, principal: Principal = EVERYONE
) -> list[str]:
    return exposed_tools(
        agent_tools=agent, requested=requested, registry=REGISTRY, principal=principal
    )


def test_requested_none_means_all_enabled_agent_tools() -> None:
    assert _exposed(["search", "get", "write", "free"]) == ["search", "get", "write", "free"]


def test_result_keeps_the_agent_order() -> None:
    assert _exposed(["free", "write", "search"], requested=["search", "free", "write"]) == [
        "free",
        "write",
        "search",
    ]


def test_requested_narrows_the_agent_tools() -> None:
    assert _exposed(["search", "get", "write"], requested=["get"]) == ["get"]


def test_requested_tool_outside_the_agent_is_not_exposed() -> None:
    assert _exposed(["search"], requested=["search", "write", "free"]) == ["search"]


def test_empty_request_exposes_nothing() -> None:
    assert _exposed(["search", "get"], requested=[]) == []


def test_scopes_narrow_the_tools() -> None:
    agent = ["search", "get", "write", "free"]
    assert _exposed(agent, principal=READER) == ["search", "get", "free"]


def test_disabled_tools_are_not_exposed() -> None:
    assert _exposed(["off", "search"]) == ["search"]
    assert _exposed(["off"], requested=["off"]) == []


def test_tools_missing_from_the_registry_are_not_exposed() -> None:
    assert _exposed(["ghost", "get"], requested=["ghost", "get"]) == ["get"]


def test_all_four_sets_intersect() -> None:
    agent = ["search", "get", "write", "off", "free", "ghost"]
    requested = ["search", "write", "off", "free", "ghost"]
    assert _exposed(agent, requested=requested, principal=READER) == ["search", "free"]


def test_requested_may_be_a_one_shot_iterable() -> None:
    requested = (name for name in ["get", "search"])
    assert exposed_tools(
        agent_tools=["search", "get", "write"],
        requested=requested,
        registry=REGISTRY,
        principal=EVERYONE,
    ) == ["search", "get"]


def test_unstorable_path_names_the_first_string_postgres_cannot_store_and_what_it_holds() -> None:
    from app.domain.tools.specs import unstorable_path

    assert unstorable_path({"a": "ok", "b": [1, "x\x00"]}) == ("b.1", "a NUL character")
    assert unstorable_path({"a": {"k\x00": 1}}) == ("a.k\x00", "a NUL character")
    assert unstorable_path("\ud800") == ("(value)", "an unpaired surrogate")
    assert unstorable_path({"a": ["fine", {"b": None}]}) is None


def test_first_path_names_the_first_value_postgres_cannot_store() -> None:
    from app.domain.tools.specs import first_path, unstorable

    assert first_path({"a": ["ok", "x\ud800"]}, unstorable) == ["a", 1]
    assert first_path({"a": {"k\udfff": 1}}, unstorable) == ["a", "k\udfff"]
    assert first_path({"n": [1.5, float("inf")]}, unstorable) == ["n", 1]
    assert first_path(float("nan"), unstorable) == []
    assert first_path({"a": ["fine", "\U0001f600", {"b": None, "c": 10**30}]}, unstorable) is None


_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(alphabet=st.characters(codec=None, exclude_categories=()), max_size=6)
    | st.sampled_from(["\x00", "a\ud800", "\udfffz", "ok"])
)
_json = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.text(max_size=3) | st.sampled_from(["k\x00", "\ud801"]), inner, max_size=4
        )
    ),
    max_leaves=20,
)


@settings(max_examples=500, deadline=None, derandomize=True)
@given(_json)
def test_scan_answers_as_depth_nan_and_the_other_unstorables_do_one_by_one(value: Any) -> None:
    from app.domain.tools.specs import first_path, json_depth, scan, unstorable

    def any_nan(item: Any) -> bool:
        return isinstance(item, float) and item != item

    expected = (
        json_depth(value),
        first_path(value, any_nan) is not None,
        first_path(value, lambda item: unstorable(item) and not any_nan(item)) is not None,
    )
    assert scan(value) == expected
