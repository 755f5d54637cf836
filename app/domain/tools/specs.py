"""Tool specs as the executor and the API see them, and argument normalization."""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from app.domain.errors import ToolgateError
from app.domain.text import UNSTORABLE_TEXT, unstorable_char


class Risk(StrEnum):
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"


@dataclass(frozen=True)
class ToolSpec:
    """What is known about a tool before it runs; never holds a backend URL."""

    name: str
    description: str
    input_schema: Mapping[str, Any]
    output_schema: Mapping[str, Any] | None = None
    risk: Risk = Risk.LOW
    requires_approval: bool = False
    #: Distinct approvers a preview of it needs, none of them the run's creator (quorum).
    approvals_required: int = 1
    side_effects: bool = False
    idempotent: bool = False
    permissions: tuple[str, ...] = ()
    timeout_s: float = 10.0
    concurrency_group: str | None = None
    max_concurrency: int | None = None
    cost_usd: float = 0.0
    max_output_bytes: int = 65536
    max_attempts: int = 3
    enabled: bool = True
    #: Calls per tenant and minute, across replicas (None: no limit).
    rate_limit_per_minute: int | None = None
    #: Its backend is outside the operator's trust boundary: the `argument_policy`
    #: guardrail checks what is sent to it.
    external: bool = False
    #: Its server offers it now, as far as this process knows (an MCP tool whose server's
    #: list lacks it, or could not be read yet, is not): not part of any declaration.
    listed: bool = True

    @property
    def read_only(self) -> bool:
        return not self.side_effects

    @property
    def sequential(self) -> bool:
        """Run one at a time in proposal order, after a turn's reads: a side effect, or a
        call that waits for approval, whatever its tool."""
        return not self.read_only or self.requires_approval

    @property
    def may_retry(self) -> bool:
        """Only calls without side effects, or whose backend dedupes, are re-sent."""
        return self.read_only or self.idempotent


@dataclass(frozen=True)
class ToolError(ToolgateError):
    """A tool's own failure, as the wire format describes it. `message` is safe text."""

    code: str
    message: str
    retryable: bool = False
    fatal: bool = False

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


@dataclass(frozen=True)
class OutputRefused(ToolError):
    """A 2xx answer whose output cannot be kept (not JSON, too large, against its output
    schema). A read-only call fails with it; a side effect took effect all the same, so it
    succeeds with its output withheld (`ToolResult.withheld`)."""


class SentUnanswered(ToolgateError):
    """A tool's request may have reached its backend and no answer came (a timeout or a
    connection lost after sending). For a side effect, its outcome is unknown."""


@dataclass(frozen=True)
class ToolResult:
    output: Any
    source_version: str | None = None
    observed_at: str | None = None
    #: The code of why a side effect's output was not kept (`output` is then None).
    withheld: str | None = None

    @classmethod
    def withholding(cls, refused: OutputRefused) -> ToolResult:
        return cls(None, withheld=refused.code)


class Role(StrEnum):
    """What a key may do (SPEC §3): run agents, decide approvals, administer the tenant."""

    CALLER = "caller"
    APPROVER = "approver"
    ADMIN = "admin"


@dataclass(frozen=True)
class Principal:
    """Who calls, resolved server-side from the API key."""

    tenant_id: str
    subject: str
    roles: frozenset[str] = field(default_factory=frozenset)
    scopes: frozenset[str] | None = None  # None: every scope

    def covers(self, permissions: Iterable[str]) -> bool:
        return self.scopes is None or all(p in self.scopes for p in permissions)


def rfc3339(moment: datetime) -> str:
    """A time as tools and citations spell it: RFC 3339, UTC, with `Z`."""
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def canonical_json(value: Any) -> str:
    """One spelling per value: sorted keys, no spaces, UTF-8 kept."""
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )


def json_depth(value: Any) -> int:
    """How deeply a JSON value nests (a scalar is 0), without recursion."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children = list(item.values())
        elif isinstance(item, list):
            children = item
        else:
            deepest = max(deepest, depth)
            continue
        deepest = max(deepest, depth + 1)
        stack.extend((child, depth + 1) for child in children)
    return deepest


def unstorable(item: Any) -> bool:
    """A string Postgres cannot store (U+0000, a lone surrogate), or a number JSON has no
    spelling for (NaN, an infinity: Python's parser accepts them, jsonb does not)."""
    if isinstance(item, str):
        return UNSTORABLE_TEXT.search(item) is not None
    return isinstance(item, float) and not math.isfinite(item)


def scan(value: Any) -> tuple[int, bool, bool]:
    """In one walk: how deeply `value` nests (as `json_depth`), whether it holds a NaN, and
    whether it holds something `unstorable` (a string or key, or an infinity)."""
    deepest, nan, infinite = 0, False, False
    # Searched once, joined: a NUL or a lone surrogate is in the joined text if and only if
    # it is in one of the strings (a search a string cost more than the walk).
    texts: list[str] = []
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            deepest = max(deepest, depth + 1)
            for key, child in item.items():
                if isinstance(key, str):
                    texts.append(key)
                stack.append((child, depth + 1))
        elif isinstance(item, list):
            deepest = max(deepest, depth + 1)
            stack.extend((child, depth + 1) for child in item)
        else:
            deepest = max(deepest, depth)
            if isinstance(item, str):
                texts.append(item)
            elif isinstance(item, float) and not math.isfinite(item):
                nan = nan or math.isnan(item)
                infinite = infinite or not math.isnan(item)
    bad = infinite or UNSTORABLE_TEXT.search("".join(texts)) is not None
    return deepest, nan, bad


def _any(value: Any, bad: Callable[[Any], bool]) -> bool:
    """Whether `bad` holds for a scalar or key of `value`: `first_path`'s walk without the
    paths, which only a value that has one needs."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key, child in item.items():
                if isinstance(key, str) and bad(key):
                    return True
                stack.append(child)
        elif isinstance(item, list):
            stack.extend(item)
        elif bad(item):
            return True
    return False


def first_path(value: Any, bad: Callable[[Any], bool]) -> list[str | int] | None:
    """The keys and indexes leading to the first scalar or key for which `bad` holds
    (`[]`: the value itself), or None. Without recursion."""
    if not _any(value, bad):
        return None
    stack: list[tuple[Any, list[str | int]]] = [(value, [])]
    while stack:
        item, path = stack.pop()
        if isinstance(item, dict):
            children: list[tuple[Any, Any]] = list(item.items())
        elif isinstance(item, list):
            children = list(enumerate(item))
        elif bad(item):
            return path
        else:
            continue
        for key, child in reversed(children):  # reversed: the first match is found first
            if isinstance(key, str) and bad(key):
                return [*path, key]
            stack.append((child, [*path, key]))
    return None


def _dotted(path: list[str | int]) -> str:
    return ".".join(str(part) for part in path) or "(value)"


def unstorable_path(value: Any) -> tuple[str, str] | None:
    """Where in a JSON value the first string Postgres cannot store is, and what it
    holds (see `unstorable_char`), or None."""
    culprits: list[str] = []

    def bad(item: Any) -> bool:
        if isinstance(item, str) and unstorable(item):
            culprits.append(item)
            return True
        return False

    where = first_path(value, bad)
    if where is None:
        return None
    return _dotted(where), unstorable_char(culprits[-1]) or "an unstorable character"


#: What a hash's text starts with: `sha256:` and 64 hex digits.
SHA256_TAG = "sha256:"


def sha256_tag(text: str) -> str:
    return SHA256_TAG + hashlib.sha256(text.encode()).hexdigest()


def args_hash(arguments: Any) -> str:
    return sha256_tag(canonical_json(arguments))


def schema_hash(tools: Iterable[ToolSpec]) -> str:
    described = [
        {"name": t.name, "description": t.description, "input_schema": t.input_schema}
        for t in sorted(tools, key=lambda t: t.name)
    ]
    return sha256_tag(canonical_json(described))


def exposed_tools(
    *,
    agent_tools: Iterable[str],
    requested: Iterable[str] | None,
    registry: Mapping[str, ToolSpec],
    principal: Principal,
    disabled: frozenset[str] = frozenset(),
) -> list[str]:
    """agent tools ∩ requested tools ∩ tools the principal's scopes cover ∩ enabled tools
    (neither off in the config nor disabled for the tenant: `disabled`)."""
    wanted = None if requested is None else set(requested)
    result = []
    for name in agent_tools:
        spec = registry.get(name)
        if spec is None or not spec.enabled or name in disabled:
            continue
        if wanted is not None and name not in wanted:
            continue
        if not principal.covers(spec.permissions):
            continue
        result.append(name)
    return result
