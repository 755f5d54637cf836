"""A run's pinned config version: what it was created with (its agent, and the
declarations of the agent's tools: schemas, descriptions, policy) as one canonical
document, and its hash. A run keeps that version until it finishes, whatever config the
process stepping it was started with; the document is kept by hash, once."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import asdict
from typing import Any

from app.domain.tools.specs import ToolSpec, canonical_json

HTTP = "http"
AGENT = "agent"
BUILTIN = "builtin"
#: The kinds of tool an operator declares, each rebuilt from its declaration.
MCP = "mcp"
OPERATOR_KINDS = frozenset({HTTP, AGENT, MCP})

#: A tool's operator levers: never part of a version, always the current config's, so
#: that switching a tool off, tightening its permissions or its limits reaches every run
#: at once, whatever version it was created with.
LIVE = frozenset(
    {"enabled", "permissions", "rate_limit_per_minute", "concurrency_group", "max_concurrency"}
)


def pinned_part(declared: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in declared.items() if k not in LIVE}


def live_part(declared: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in declared.items() if k in LIVE}


def builtin_declaration(spec: ToolSpec) -> dict[str, Any]:
    """A tool the code provides: its spec is its whole declaration (the code serves only
    its own version)."""
    declared = pinned_part(asdict(spec))
    del declared["listed"]  # whether a server offers it now is a state, not a declaration
    return {"kind": BUILTIN, **declared}


def operator_declaration(declared: Mapping[str, Any]) -> dict[str, Any]:
    """An operator's tool, as the config declared it (an HTTP tool's URLs included; its
    `kind` says `http` unless it says `agent`), but for its levers."""
    return {**pinned_part(declared), "kind": declared.get("kind") or HTTP}


#: Agent fields added after versions were first kept: left out of a version while unset, so
#: that a config that did not change keeps the hashes of its versions across a deploy.
LATER_AGENT_FIELDS = ("output_schema",)


def agent_declaration(declared: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in declared.items() if not (k in LATER_AGENT_FIELDS and v is None)}


def document(
    agent_name: str, agent: Mapping[str, Any], tools: Mapping[str, Mapping[str, Any]]
) -> dict[str, Any]:
    return {"agent_name": agent_name, "agent": dict(agent), "tools": dict(tools)}


def version_hash(version: Mapping[str, Any]) -> str:
    """The version's name: SHA-256 of its canonical JSON, hex."""
    return hashlib.sha256(canonical_json(version).encode()).hexdigest()
