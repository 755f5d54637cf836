"""MCP declarations are pinned (SPEC §4): the rules, without I/O.

A tool's declaration is what its server lists of it, as the model would see it: name,
description, input and output schemas, annotations. The first declaration seen of a tool
(per server and the server's name for the tool, for every tenant: the servers and their
tools are the operator's) is pinned with its `declaration_hash`, unless it is refused:
a description over `MAX_DESCRIPTION` characters, a schema over `MAX_SCHEMA_BYTES` of
canonical JSON, annotations with a title over `MAX_TITLE` characters or over
`MAX_ANNOTATIONS_BYTES` in all, an injection marker in the description or in a string of
the schemas or the annotations, or a
schema that cannot be used to check untrusted values (not a Draft 2020-12 schema, a
pattern RE2 does not take). A refused or a different declaration is held as *pending*:
the tool is unavailable until an admin accepts exactly that hash. A listing equal to the
pinned declaration again clears what was pending (the server went back to it).

The tool is served only while its server lists exactly the pinned declaration and
nothing is pending (`Pin.serves`): a change seen by one replica holds the tool on every
replica, and what the model sees never changes without an acceptance."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from app.domain.guardrails.sensitive import markers_in, text_of
from app.domain.tools import schema_validator
from app.domain.tools.specs import canonical_json, sha256_tag

#: A description longer than this many characters is held.
MAX_DESCRIPTION = 2000
#: A schema whose canonical JSON is longer than this many bytes (UTF-8) is held.
MAX_SCHEMA_BYTES = 16 * 1024
#: Annotations whose title is longer than this many characters are held.
MAX_TITLE = 200
#: Annotations whose canonical JSON is longer than this many bytes (UTF-8) are held.
MAX_ANNOTATIONS_BYTES = 4 * 1024


class Held(StrEnum):
    """Why a declaration is pending rather than pinned (`pending_declaration.held_for`)."""

    #: It differs from the pinned declaration.
    CHANGED = "changed"
    DESCRIPTION_TOO_LONG = "description_too_long"
    SCHEMA_TOO_LARGE = "schema_too_large"
    ANNOTATIONS_TOO_LARGE = "annotations_too_large"
    INJECTION_SUSPECTED = "injection_suspected"
    #: Its schemas cannot check untrusted values here: it cannot be accepted either.
    INVALID_SCHEMA = "invalid_schema"


#: What an acceptance cannot make usable.
UNACCEPTABLE = frozenset({Held.INVALID_SCHEMA})
_SCHEMAS = ("input_schema", "output_schema")


def declaration(
    name: str,
    description: str | None,
    input_schema: Any,
    output_schema: Any,
    annotations: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """A tool's declaration as its server lists it, as one JSON document."""
    return {
        "name": name,
        "description": description,
        "input_schema": input_schema,
        "output_schema": output_schema,
        "annotations": None if annotations is None else dict(annotations),
    }


def declaration_hash(declared: Mapping[str, Any]) -> str:
    """`sha256:` and the hex digest of the declaration's canonical JSON."""
    return sha256_tag(canonical_json(declared))


@dataclass(frozen=True)
class Listed:
    """A declaration as a listing gave it, with its hash and the length of its canonical
    JSON (what decides whether its checks run off the event loop)."""

    declaration: Mapping[str, Any]
    hash: str
    size: int


def listed(declared: Mapping[str, Any]) -> Listed:
    """Raises ValueError for a declaration that is not JSON (a NaN or an infinity)."""
    text = canonical_json(declared)
    return Listed(declared, sha256_tag(text), len(text))


def refusals(declared: Mapping[str, Any]) -> list[Held]:
    """Why `declared` may not be pinned without an admin's acceptance ([] when it may).
    The sizes are checked first: the other checks only ever read bounded text."""
    held: list[Held] = []
    description = declared.get("description") or ""
    if not isinstance(description, str) or len(description) > MAX_DESCRIPTION:
        held.append(Held.DESCRIPTION_TOO_LONG)
        description = ""
    schemas = [declared.get(key) for key in _SCHEMAS]
    if any(len(canonical_json(s).encode()) > MAX_SCHEMA_BYTES for s in schemas):
        held.append(Held.SCHEMA_TOO_LARGE)
        schemas = []
    annotations = declared.get("annotations")
    if annotations is not None and _too_large(annotations):
        held.append(Held.ANNOTATIONS_TOO_LARGE)
        annotations = None
    texts = [description, *(text_of(s) for s in [*schemas, annotations] if s is not None)]
    if any(markers_in(text) for text in texts if text):
        held.append(Held.INJECTION_SUSPECTED)
    if Held.SCHEMA_TOO_LARGE not in held and any(
        schema_problem(s) is not None for s in schemas if s is not None
    ):
        held.append(Held.INVALID_SCHEMA)
    return held


def _too_large(annotations: Any) -> bool:
    """Annotations the model or a person would read more of than a tool's hints: not an
    object, a title over `MAX_TITLE` characters, over `MAX_ANNOTATIONS_BYTES` in all."""
    if not isinstance(annotations, Mapping):
        return True
    title = annotations.get("title")
    if title is not None and (not isinstance(title, str) or len(title) > MAX_TITLE):
        return True
    return len(canonical_json(annotations).encode()) > MAX_ANNOTATIONS_BYTES


def schema_problem(schema: Any) -> str | None:
    """Why a server's schema cannot be used, or None (an object at its root, valid Draft
    2020-12, every pattern RE2's)."""
    if not isinstance(schema, Mapping):
        return "not a JSON object"
    try:
        return schema_validator.problem(schema)
    except RecursionError:
        return "nested too deeply"


@dataclass(frozen=True)
class Pin:
    """A tool's pinned declaration and what is pending for it, as stored."""

    server: str
    tool: str
    pinned_hash: str | None
    pinned: Mapping[str, Any] | None
    pending_hash: str | None
    pending: Mapping[str, Any] | None
    held_for: tuple[str, ...]
    #: Bumped by every change of the row: acceptances and pending changes compare it.
    version: int
    pending_since: datetime | None = None

    def serves(self, listed_hash: str | None) -> bool:
        """Whether the tool may be used while its server lists `listed_hash`."""
        return listed_hash is not None and self.pinned_hash == listed_hash and self.pending is None


@dataclass(frozen=True)
class Seen:
    """What a listing changes in a tool's row: the declaration pinned (first sight),
    held as pending, or what was pending cleared (`declaration` None)."""

    declaration: Mapping[str, Any] | None
    hash: str | None
    pinned: bool = False
    held_for: tuple[str, ...] = ()


CLEAR_PENDING = Seen(None, None)


def first_sight(seen: Listed, held: list[Held]) -> Seen:
    if held:
        return Seen(seen.declaration, seen.hash, held_for=tuple(held))
    return Seen(seen.declaration, seen.hash, pinned=True)


def needs_check(pin: Pin, listed_hash: str) -> bool:
    """Whether a listing of `listed_hash` is new to `pin` (its refusals are then asked)."""
    return listed_hash not in (pin.pinned_hash, pin.pending_hash)


def seen_again(pin: Pin, seen: Listed, held: list[Held]) -> Seen | None:
    """What a later listing changes in `pin` (None: nothing). `held`: its refusals, asked
    only when it `needs_check`."""
    if seen.hash == pin.pinned_hash:
        return CLEAR_PENDING if pin.pending is not None else None
    if seen.hash == pin.pending_hash:
        return None
    reasons = () if pin.pinned is None else (Held.CHANGED,)
    return Seen(seen.declaration, seen.hash, held_for=(*reasons, *held))


def acceptance_refusal(pin: Pin | None, declaration_hash: str) -> str | None:
    """Why `declaration_hash` cannot be accepted for `pin` now, or None."""
    if pin is None or pin.pending is None:
        return "the tool has no declaration pending"
    if pin.pending_hash != declaration_hash:
        return "the declaration_hash is not the pending declaration's"
    if UNACCEPTABLE & set(pin.held_for):
        return "the pending declaration's schemas cannot be used to check values"
    return None
