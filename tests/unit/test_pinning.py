"""A config version's hash: the same for the same agent and tools however the mappings
are ordered, and another for any change a run would notice."""

from __future__ import annotations

from typing import Any

import pytest

from app.domain.tools import pinning
from app.domain.tools.specs import ToolSpec

SCHEMA = {"type": "object", "properties": {"q": {"type": "string"}}}
AGENT = {"model": "scripted", "instructions": "Help.", "tools": ["lookup"]}


def _version(agent: dict[str, Any] = AGENT, schema: dict[str, Any] = SCHEMA, **spec: Any) -> str:
    tool = pinning.builtin_declaration(ToolSpec("lookup", "Looks up.", schema, **spec))
    return pinning.version_hash(pinning.document("desk", agent, {"lookup": tool}))


def test_the_hash_names_the_content_not_its_order() -> None:
    reordered = dict(reversed(list(AGENT.items())))
    assert _version(reordered) == _version()
    assert len(_version()) == 64


@pytest.mark.parametrize(
    "changed",
    [
        {"agent": {**AGENT, "instructions": "Help more."}},
        {"agent": {**AGENT, "tools": ["lookup", "other"]}},
        {"schema": {**SCHEMA, "required": ["q"]}},
        {"requires_approval": True},
        {"timeout_s": 3.0},
    ],
)
def test_any_change_a_run_would_notice_is_another_version(changed: dict[str, Any]) -> None:
    assert _version(**changed) != _version()


def test_an_operator_declaration_says_its_kind() -> None:
    declared = pinning.operator_declaration({"kind": "http", "url": "https://tools.example/x"})
    assert declared["kind"] == pinning.HTTP
    delegate = pinning.operator_declaration({"kind": "agent", "agent": "ring-judge"})
    assert delegate["kind"] == pinning.AGENT
    assert pinning.builtin_declaration(ToolSpec("x", "X.", SCHEMA))["kind"] == pinning.BUILTIN


@pytest.mark.parametrize(
    "lever",
    [
        {"permissions": ("radar:read",)},
        {"enabled": False},
        {"rate_limit_per_minute": 5},
        {"concurrency_group": "radar", "max_concurrency": 2},
    ],
)
def test_the_operators_levers_are_no_part_of_a_version(lever: dict[str, Any]) -> None:
    assert _version(**lever) == _version()
    declared = pinning.operator_declaration({"kind": "http", "url": "https://x.example", **lever})
    assert not set(declared) & pinning.LIVE


def test_fields_added_later_leave_a_version_unchanged_while_unset() -> None:
    """A deploy that adds `output_schema` (and MCP's `listed` to specs) keeps the hashes
    of an unchanged config: runs made before and after share their versions."""
    unset = pinning.agent_declaration({**AGENT, "output_schema": None})
    assert _version(unset) == _version()
    typed = pinning.agent_declaration({**AGENT, "output_schema": {"type": "object"}})
    assert _version(typed) != _version()
    assert "listed" not in pinning.builtin_declaration(ToolSpec("lookup", "Looks up.", SCHEMA))
