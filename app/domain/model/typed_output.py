"""Typed final output: an agent that declares `output_schema` must answer with a JSON
document valid against it. The final text is parsed and validated at the on-final check;
what does not fit is rejected with the reasons the model needs to correct it.

The reasons name where the answer is wrong (a JSON pointer) and what is wrong, bounded in
number and length: they become the model's observation and an event, and the answer they
describe is untrusted text.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from app.domain.tools import schema_validator
from app.domain.tools.specs import scan

#: The error code of a final answer that is not a document valid against the schema.
INVALID_OUTPUT = "invalid_output"
#: How many validation errors a rejection reports (the model fixes a few at a time).
MAX_ERRORS = 3
#: How much of each error's message is kept (a message may quote the model's values).
MAX_ERROR_CHARS = 120
#: How deeply a typed answer may nest (as deep as a tool's output may).
MAX_DEPTH = 64


@dataclass(frozen=True)
class OutputSchema:
    """What a provider may ask for: the agent's name (providers want one for the format)
    and its JSON Schema."""

    name: str
    schema: Mapping[str, Any]


@dataclass(frozen=True)
class OutputError:
    path: str  # a JSON pointer into the answer ("" is the whole document)
    message: str

    def as_dict(self) -> dict[str, str]:
        return {"path": self.path, "message": self.message}


@dataclass(frozen=True)
class Typed:
    """The answer as a typed document: `data` when it fits (`errors` empty), else why not."""

    data: Any = None
    errors: tuple[OutputError, ...] = field(default_factory=tuple)

    @property
    def fits(self) -> bool:
        return not self.errors

    def message(self) -> str:
        """The rejection's message: the reasons one by one, so the model can correct them."""
        reasons = "; ".join(f"at {e.path or '/'}: {e.message}" for e in self.errors)
        return f"the answer must be a JSON document valid against the output schema: {reasons}"


def _cut(text: str) -> str:
    return text if len(text) <= MAX_ERROR_CHARS else text[: MAX_ERROR_CHARS - 1] + "…"


def check(text: str, schema: Mapping[str, Any]) -> Typed:
    """`text` parsed as JSON and validated against `schema` (checked at config load)."""
    try:
        data = json.loads(_unfenced(text), parse_constant=_not_json)
    except (ValueError, RecursionError) as exc:
        position = getattr(exc, "pos", None)
        where = f" (at character {position})" if position is not None else ""
        return Typed(errors=(OutputError("", f"not a JSON document{where}"),))
    depth, nan, unstorable = scan(data)
    if nan or unstorable or depth > MAX_DEPTH:
        # Kept as `output.data` (jsonb): a NUL, a lone surrogate or a NaN cannot be.
        message = f"a document nested at most {MAX_DEPTH} deep, without NUL characters"
        return Typed(errors=(OutputError("", message),))
    if schema_validator.fits(schema, data):
        return Typed(data)
    found = sorted(schema_validator.errors(schema, data), key=lambda e: (e.pointer, e.message))
    errors = tuple(OutputError(e.pointer, _cut(e.message)) for e in found[:MAX_ERRORS])
    return Typed(errors=errors)


def _not_json(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _unfenced(text: str) -> str:
    """The document inside one Markdown code fence, which models add unasked even when
    told to answer with JSON only; anything else is taken as it is."""
    stripped = text.strip()
    if not (stripped.startswith("```") and stripped.endswith("```")) or len(stripped) < 6:
        return text
    body = stripped[3:-3]
    first_line, _, rest = body.partition("\n")
    return rest if first_line.strip() in ("", "json") else body
