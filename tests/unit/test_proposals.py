"""check_calls: duplicate id → exposed tool → JSON Schema → semantic check → authorization."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

import pytest

from app.domain.errors import MAX_MESSAGE, ErrorValue
from app.domain.model.replies import ProposedCall
from app.domain.ports import Tool, ToolContext
from app.domain.tools.proposals import CheckedCall, check_calls
from app.domain.tools.specs import Principal, ToolResult, ToolSpec, args_hash

SEARCH_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["query"],
    "properties": {
        "query": {"type": "string", "minLength": 1},
        "limit": {"type": "integer", "minimum": 1, "maximum": 50},
    },
}


class FakeTool:
    """A registered tool as the validation sees it; never executed here."""

    def __init__(
        self,
        name: str = "search",
        *,
        schema: Mapping[str, Any] = SEARCH_SCHEMA,
        permissions: tuple[str, ...] = ("radar:read",),
        check: Callable[[Mapping[str, Any]], str | None] | None = None,
    ) -> None:
        self.spec = ToolSpec(
            name=name, description=f"{name} tool", input_schema=schema, permissions=permissions
        )
        self._check = check
        self.checked: list[Mapping[str, Any]] = []

    def check(self, arguments: Mapping[str, Any]) -> str | None:
        self.checked.append(arguments)
        return self._check(arguments) if self._check else None

    async def execute(self, arguments: Mapping[str, Any], context: ToolContext) -> ToolResult:
        raise AssertionError("validation must never execute a tool")


READER = Principal("t1", "alice", scopes=frozenset({"radar:read"}))


def _check(
    *calls: ProposedCall,
    tools: Mapping[str, Tool] | None = None,
    principal: Principal = READER,
) -> list[CheckedCall]:
    exposed: Mapping[str, Tool] = {"search": FakeTool()} if tools is None else tools
    return check_calls(list(calls), exposed=exposed, principal=principal)


def _call(arguments: Any, *, call_id: str = "c1", name: str = "search") -> ProposedCall:
    return ProposedCall(call_id=call_id, name=name, arguments=arguments)


def _code(checked: CheckedCall) -> str | None:
    return None if checked.rejection is None else checked.rejection.code


# --- accepted ---------------------------------------------------------------------------


def test_valid_call_is_accepted_with_its_hash() -> None:
    [checked] = _check(_call({"query": "kafka", "limit": 3}))
    assert checked == CheckedCall(
        "c1",
        "search",
        {"query": "kafka", "limit": 3},
        args_hash({"query": "kafka", "limit": 3}),
        None,
    )


def test_no_calls_gives_no_results() -> None:
    assert _check() == []


def test_results_keep_proposal_order() -> None:
    checked = _check(
        _call({"query": "a"}, call_id="x"),
        _call({"query": "b"}, call_id="y", name="nope"),
        _call({"query": "c"}, call_id="z"),
    )
    assert [(c.call_id, _code(c)) for c in checked] == [
        ("x", None),
        ("y", "unknown_tool"),
        ("z", None),
    ]


# --- duplicate call id ------------------------------------------------------------------


def test_repeated_call_id_rejects_the_second_only() -> None:
    first, second = _check(_call({"query": "a"}), _call({"query": "b"}))
    assert first.rejection is None
    assert first.arguments == {"query": "a"}
    assert second.rejection == ErrorValue.rejection(
        "duplicate_call_id", "call id already used in this turn"
    )
    assert second.arguments == {"query": "b"}
    assert second.args_hash == args_hash({"query": "b"})


def test_repeated_id_is_rejected_even_when_the_first_was_rejected() -> None:
    first, second = _check(_call({}, name="nope"), _call({"query": "b"}))
    assert _code(first) == "unknown_tool"
    assert _code(second) == "duplicate_call_id"


def test_duplicate_id_is_checked_before_anything_else() -> None:
    _, second = _check(_call({"query": "a"}), _call("{not json", name="nope"))
    assert _code(second) == "duplicate_call_id"


def test_distinct_ids_are_not_duplicates() -> None:
    checked = _check(_call({"query": "a"}, call_id="a"), _call({"query": "a"}, call_id="b"))
    assert [c.rejection for c in checked] == [None, None]


def test_seen_ids_do_not_leak_between_turns() -> None:
    assert _check(_call({"query": "a"}))[0].rejection is None
    assert _check(_call({"query": "a"}))[0].rejection is None


# --- unknown tool -----------------------------------------------------------------------


def test_unknown_tool() -> None:
    [checked] = _check(_call({"query": "a"}, name="delete_everything"))
    assert checked.rejection == ErrorValue.rejection(
        "unknown_tool", "no tool named 'delete_everything' is available"
    )
    assert checked.rejection.retryable is True
    assert checked.tool == "delete_everything"


def test_tool_not_exposed_to_the_run_is_unknown() -> None:
    [checked] = _check(_call({"query": "a"}), tools={})
    assert _code(checked) == "unknown_tool"


def test_unknown_tool_beats_invalid_arguments() -> None:
    [checked] = _check(_call("{oops", name="nope"))
    assert _code(checked) == "unknown_tool"


# --- arguments --------------------------------------------------------------------------


def test_arguments_as_json_string_are_parsed() -> None:
    [checked] = _check(_call('{"limit": 2, "query": "postgres"}'))
    assert checked.rejection is None
    assert checked.arguments == {"query": "postgres", "limit": 2}
    assert checked.args_hash == args_hash({"query": "postgres", "limit": 2})


@pytest.mark.parametrize("raw", ["{not json", "", '{"query": "a"', "{'query': 'a'}"])
def test_invalid_json_string_is_invalid_arguments(raw: str) -> None:
    [checked] = _check(_call(raw))
    assert checked.rejection == ErrorValue.rejection(
        "invalid_arguments", "arguments are not valid JSON"
    )
    assert checked.arguments == raw
    assert checked.args_hash == args_hash(raw)


@pytest.mark.parametrize("raw", [["query", "a"], "[1, 2]", '"text"', "42", 42, None, "null", True])
def test_non_object_arguments_are_invalid(raw: Any) -> None:
    [checked] = _check(_call(raw))
    assert checked.rejection == ErrorValue.rejection(
        "invalid_arguments", "arguments must be an object"
    )


def test_non_object_json_string_keeps_the_parsed_value() -> None:
    [checked] = _check(_call("[1, 2]"))
    assert checked.arguments == [1, 2]


# --- JSON Schema ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("arguments", "where"),
    [
        ({}, "(root)"),
        ({"query": 5}, "query"),
        ({"query": ""}, "query"),
        ({"query": "a", "limit": 0}, "limit"),
        ({"query": "a", "limit": "3"}, "limit"),
        ({"query": "a", "extra": 1}, "(root)"),
    ],
    ids=["missing_required", "wrong_type", "too_short", "below_minimum", "string_int", "extra"],
)
def test_schema_violation_is_invalid_arguments(arguments: dict[str, Any], where: str) -> None:
    [checked] = _check(_call(arguments))
    assert checked.rejection is not None
    assert checked.rejection.code == "invalid_arguments"
    assert checked.rejection.message.startswith(f"{where}: ")
    assert checked.arguments == arguments


def test_unknown_property_message_names_it() -> None:
    [checked] = _check(_call({"query": "a", "tenant_id": "other"}))
    assert checked.rejection is not None
    assert checked.rejection.code == "invalid_arguments"
    assert "tenant_id" in checked.rejection.message


def test_schema_problem_names_the_nested_path() -> None:
    schema = {
        "type": "object",
        "properties": {"filter": {"type": "object", "properties": {"tags": {"type": "array"}}}},
    }
    tools = {"search": FakeTool(schema=schema)}
    [checked] = _check(_call({"filter": {"tags": "x"}}), tools=tools)
    assert checked.rejection is not None
    assert checked.rejection.message.startswith("filter/tags: ")


def test_schema_message_is_truncated() -> None:
    schema = {"type": "object", "properties": {"q": {"enum": ["x" * 400, "y" * 400]}}}
    [checked] = _check(_call({"q": "z"}), tools={"search": FakeTool(schema=schema)})
    assert checked.rejection is not None
    assert checked.rejection.code == "invalid_arguments"
    assert len(checked.rejection.message) == MAX_MESSAGE


# --- semantic check ---------------------------------------------------------------------


def test_semantic_check_message_is_invalid_arguments() -> None:
    tool = FakeTool(check=lambda a: "limit must be even" if a.get("limit", 0) % 2 else None)
    ok, bad = _check(
        _call({"query": "a", "limit": 2}, call_id="ok"),
        _call({"query": "a", "limit": 3}, call_id="bad"),
        tools={"search": tool},
    )
    assert ok.rejection is None
    assert bad.rejection == ErrorValue.rejection("invalid_arguments", "limit must be even")


def test_semantic_check_only_sees_schema_valid_arguments() -> None:
    tool = FakeTool(check=lambda a: "never")
    [checked] = _check(_call({"query": 1}), tools={"search": tool})
    assert checked.rejection is not None
    assert checked.rejection.message.startswith("query: ")
    assert tool.checked == []


def test_semantic_check_receives_parsed_arguments() -> None:
    tool = FakeTool()
    _check(_call('{"query": "q"}'), tools={"search": tool})
    assert tool.checked == [{"query": "q"}]


def test_semantic_check_message_is_truncated() -> None:
    tool = FakeTool(check=lambda a: "x" * 2000)
    [checked] = _check(_call({"query": "a"}), tools={"search": tool})
    assert checked.rejection is not None
    assert checked.rejection.message == "x" * MAX_MESSAGE


def test_semantic_problem_beats_permission_denied() -> None:
    tool = FakeTool(check=lambda a: "bad", permissions=("admin",))
    [checked] = _check(_call({"query": "a"}), tools={"search": tool})
    assert _code(checked) == "invalid_arguments"


# --- authorization ----------------------------------------------------------------------


def test_permission_not_covered_is_denied() -> None:
    tools = {"search": FakeTool(permissions=("radar:read", "radar:write"))}
    [checked] = _check(_call({"query": "a"}), tools=tools)
    assert checked.rejection == ErrorValue.rejection(
        "permission_denied", "the caller may not use this tool"
    )
    assert checked.arguments == {"query": "a"}


def test_principal_without_scopes_list_covers_everything() -> None:
    everyone = Principal("t1", "root", scopes=None)
    tools = {"search": FakeTool(permissions=("radar:read", "radar:write", "admin"))}
    [checked] = _check(_call({"query": "a"}), tools=tools, principal=everyone)
    assert checked.rejection is None


def test_empty_scopes_cover_a_tool_without_permissions() -> None:
    nobody = Principal("t1", "bob", scopes=frozenset())
    [free] = _check(
        _call({"query": "a"}), tools={"search": FakeTool(permissions=())}, principal=nobody
    )
    [guarded] = _check(_call({"query": "a"}), principal=nobody)
    assert free.rejection is None
    assert _code(guarded) == "permission_denied"


def test_invalid_arguments_beat_permission_denied() -> None:
    nobody = Principal("t1", "bob", scopes=frozenset())
    [checked] = _check(_call({"nope": 1}), principal=nobody)
    assert _code(checked) == "invalid_arguments"


# --- rejection and hash -----------------------------------------------------------------


def test_rejection_as_dict() -> None:
    assert ErrorValue.rejection("unknown_tool", "no such tool").as_dict() == {
        "code": "unknown_tool",
        "retryable": True,
        "message": "no such tool",
    }
    assert ErrorValue("x", "y", retryable=False).as_dict()["retryable"] is False


def test_args_hash_is_independent_of_key_order() -> None:
    one, two, three = _check(
        _call({"query": "a", "limit": 2}, call_id="1"),
        _call({"limit": 2, "query": "a"}, call_id="2"),
        _call(json.dumps({"limit": 2, "query": "a"}), call_id="3"),
    )
    assert one.args_hash == two.args_hash == three.args_hash
    assert one.args_hash.startswith("sha256:")


def test_args_hash_differs_for_different_arguments() -> None:
    one, two = _check(_call({"query": "a"}, call_id="1"), _call({"query": "b"}, call_id="2"))
    assert one.args_hash != two.args_hash


def test_nan_and_infinity_are_not_json_arguments() -> None:
    for raw in ('{"q": NaN}', '{"q": Infinity}', '{"q": -Infinity}'):
        [checked] = check_calls(
            [ProposedCall("c1", "probe_nan", raw)],
            exposed={"probe_nan": _NanTool()},
            principal=Principal("t", "s"),
        )
        assert checked.rejection is not None
        assert checked.rejection.code == "invalid_arguments"


def test_deeply_nested_arguments_are_refused_not_raised() -> None:
    raw = '{"q":' + "[" * 100_000 + "]" * 100_000 + "}"
    [checked] = check_calls(
        [ProposedCall("c1", "probe_nan", raw)],
        exposed={"probe_nan": _NanTool()},
        principal=Principal("t", "s"),
    )
    assert checked.rejection is not None and checked.rejection.code == "invalid_arguments"
    assert len(checked.arguments) <= 10_000


def test_an_overlong_tool_name_is_unknown_and_kept_cut() -> None:
    [checked] = _check(_call({"query": "x"}, name="search" + "x" * 10_000))
    assert _code(checked) == "unknown_tool"
    assert len(checked.tool) == 128 and checked.tool.endswith("…")
    assert checked.rejection is not None and len(checked.rejection.message) <= MAX_MESSAGE


@pytest.mark.parametrize("raw", ['{"query": "\\u0000"}', '{"query": "\\ud800"}'])
def test_arguments_decoding_to_what_postgres_cannot_store_are_kept_as_text(raw: str) -> None:
    [checked] = _check(_call(raw))
    assert _code(checked) == "invalid_arguments"
    assert checked.arguments == raw  # the text is clean; what it decodes to is not


def test_refused_object_arguments_are_kept_as_a_note_never_as_nothing() -> None:
    deep: Any = "x"
    for _ in range(40):
        deep = {"k": deep}
    [checked] = _check(_call({"query": deep}))
    assert _code(checked) == "invalid_arguments"
    assert checked.arguments == "(not kept: arguments nest deeper than 32 levels)"


class _NanTool:
    spec = ToolSpec(name="probe_nan", description="d", input_schema={"type": "object"})

    def check(self, arguments):  # type: ignore[no-untyped-def]
        return None

    async def execute(self, arguments, context):  # type: ignore[no-untyped-def]
        raise AssertionError("never executed")
