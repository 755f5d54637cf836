"""Wire schemas of the HTTP API (requests refuse unknown fields)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
)

from app.api import examples
from app.api.examples import DIAGNOSIS_EXAMPLE, RUN_EXAMPLE, RUN_OUT_EXAMPLE
from app.api.hygiene import RequestBody
from app.api.schemas.script_items import ScriptItem, StrictIn
from app.domain.forensics.taxonomy import DiagnosisCategory
from app.domain.lifecycle.events import EventType
from app.domain.lifecycle.status import CallStatus, RunStatus, TerminationReason
from app.domain.tools.specs import canonical_json, json_depth

METADATA_MAX_BYTES = 4096
#: How deep free-form JSON (metadata, script arguments) may nest.
MAX_JSON_DEPTH = 32
#: The largest integer and number a request may carry where the schema gives no
#: tighter bound: an `integer` column, and a number of seconds or dollars that dates
#: and `numeric(18, 8)` columns still hold.
MAX_INT = 2**31 - 1
MAX_FLOAT = 1e9


# Clamped down to the caps afterwards, but bounded first: a value past what dates and
# columns hold is an error of the request, not a limit to clamp.
class LimitsIn(StrictIn):
    max_steps: int | None = Field(default=None, ge=1, le=MAX_INT)
    deadline_s: float | None = Field(default=None, gt=0, le=MAX_FLOAT)
    max_tokens: int | None = Field(default=None, ge=1, le=MAX_INT)
    max_cost_usd: float | None = Field(default=None, gt=0, le=MAX_FLOAT)
    max_tool_calls: int | None = Field(default=None, ge=1, le=MAX_INT)


class CreateRunIn(RequestBody):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [RUN_EXAMPLE]})

    agent: str = Field(min_length=1, max_length=64)
    input: str | None = Field(
        default=None, min_length=1, max_length=100_000, description=examples.INPUT_NOTE
    )
    tools: list[Annotated[str, Field(min_length=1, max_length=200)]] | None = Field(
        default=None, max_length=100
    )
    limits: LimitsIn | None = None
    parent_run_id: str | None = Field(
        default=None,
        max_length=64,
        description="Makes a child run of this run (same tenant, else `404`): its deadline "
        "and its token, cost and tool-call budgets are clamped to what the parent has left "
        "and reserved on the parent until the child finishes; a finished parent, or one "
        "with nothing left of a budget, is `409 invalid-state`.",
    )
    metadata: dict[str, Any] | None = Field(default=None, description="At most 4 KiB as JSON.")
    consistency: Literal["latest", "snapshot"] | None = Field(
        default=None,
        description="`latest` (the default): every read sees the data as it is then. "
        "`snapshot`: the run's reads are pinned to its creation (`as_of`); its writes "
        "still check the current data at commit.",
    )
    data_policy: list[Annotated[str, Field(min_length=1, max_length=64)]] | None = Field(
        default=None,
        max_length=20,
        description="Tags every model route this run uses must carry (besides its agent's); "
        "a router only chooses among candidates that carry them.",
    )
    continue_from: str | None = Field(
        default=None, min_length=1, max_length=64, description=examples.CONTINUE_NOTE
    )
    wait_s: float = Field(default=10, ge=0, le=30)
    script: list[ScriptItem] | None = Field(default=None, max_length=1000)

    @field_validator("metadata")
    @classmethod
    def _metadata_size(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        if value is None:
            return value
        if json_depth(value) > MAX_JSON_DEPTH:
            raise ValueError(f"metadata may nest at most {MAX_JSON_DEPTH} levels")
        if len(canonical_json(value).encode()) > METADATA_MAX_BYTES:
            raise ValueError("metadata must be at most 4 KiB as JSON")
        return value


class AdvanceIn(RequestBody):
    wait_s: float = Field(default=10, ge=0, le=30)


class LimitsOut(BaseModel):
    max_steps: int
    deadline_s: float
    max_tokens: int
    max_cost_usd: float
    max_tool_calls: int


class UsageOut(BaseModel):
    steps: int
    input_tokens: int
    output_tokens: int
    cost_usd: float
    tool_calls: int


class ReservedOut(BaseModel):
    tokens: int
    cost_usd: float
    tool_calls: int


class Citation(BaseModel):
    source_id: str
    tool: str
    observed_at: str | None
    source_version: str | None


class RunOutput(BaseModel):
    text: str
    citations: list[Citation]
    data: Any = Field(
        default=None,
        description="For an agent with an `output_schema`: the answer parsed, a JSON "
        "document valid against the schema (`text` is the answer as the model wrote it); "
        "absent for other agents.",
    )

    # Absent, not null, for an untyped agent: null can be a typed agent's document. No
    # return annotation: pydantic would take it for the model's schema in the document.
    @model_serializer(mode="wrap")
    def _data_when_typed(self, handler: SerializerFunctionWrapHandler):  # type: ignore[no-untyped-def]
        dumped = handler(self)
        if "data" not in self.model_fields_set:
            dumped.pop("data", None)
        return dumped


class RunError(BaseModel):
    code: str
    message: str


class PendingApproval(BaseModel):
    preview_id: str
    call_id: str
    tool: str
    summary: str
    expires_at: datetime


class RunOut(BaseModel):
    model_config = ConfigDict(json_schema_extra={"examples": [RUN_OUT_EXAMPLE]})

    id: str
    agent: str
    input: str = Field(
        description="What the run was asked (the request's `input`, or the continued "
        "run's), with secrets redacted as in every text the API shows."
    )
    status: RunStatus
    # Always in the answer (null when unset); defaults only make them optional in the
    # document, whose examples cannot spell null.
    termination_reason: TerminationReason | None = None
    output: RunOutput | None = None
    error: RunError | None = None
    parent_run_id: str | None = None
    root_run_id: str = Field(
        description="The run at the top of its tree (itself when it has no parent)."
    )
    metadata: dict[str, Any] | None = None
    tools: list[str]
    limits: LimitsOut
    usage: UsageOut = Field(
        description="What the run used, its finished descendants' usage included (`steps` "
        "counts its own model turns only)."
    )
    reserved: ReservedOut = Field(
        description="What the run holds of its budgets for its unfinished children."
    )
    pending_approvals: list[PendingApproval]
    consistency: Literal["latest", "snapshot"]
    as_of: datetime | None = Field(
        default=None,
        description="What a `snapshot` run's reads are pinned to: its `created_at`; null "
        "for a `latest` run.",
    )
    created_at: datetime
    updated_at: datetime
    deadline_at: datetime
    version: int
    config_hash: str | None = Field(
        default=None,
        description="The config version the run was created with and keeps until it ends "
        "(SHA-256 of its agent and its tools' declarations); null for a run created before "
        "versions were kept.",
    )
    continued_from: str | None = Field(default=None, description=examples.CONTINUED_NOTE)


class RunPage(BaseModel):
    items: list[RunOut]
    next_cursor: str | None


class EventOut(BaseModel):
    seq: int
    type: EventType
    at: datetime
    data: dict[str, Any]


class EventPage(BaseModel):
    items: list[EventOut]
    next_cursor: str | None


class TenantEventOut(EventOut):
    """A run's event as the tenant-wide feed shows it."""

    id: str = Field(
        description="The event's place in the tenant's feed: `after=` (or `Last-Event-ID`) "
        "resumes after it."
    )
    run_id: str


class TenantEventPage(BaseModel):
    items: list[TenantEventOut]
    next_cursor: str | None


class CallErrorOut(BaseModel):
    code: str
    retryable: bool
    message: str | None


class RevisionOut(BaseModel):
    by: str
    reason: str
    at: datetime


class CallOut(BaseModel):
    id: str
    call_id: str
    step: int
    tool: str
    status: CallStatus
    arguments: Any
    args_hash: str
    operation_id: str
    attempts: int
    error: CallErrorOut | None
    output: Any
    source_id: str | None
    observed_at: str | None
    source_version: str | None
    preview_id: str | None
    proposed_arguments: Any = Field(
        description="The model's own arguments when an approver revised them (null: not "
        "revised); `arguments` are the revised ones, which run."
    )
    revision: RevisionOut | None = Field(description="The latest revision: who, why, when.")
    output_withheld: bool = Field(
        description="It took effect, but its output broke its schema or size limit: not kept"
    )
    trust: Literal["untrusted"] = Field(
        description="The trust level of what the tool returned: always `untrusted` data, "
        "which reaches the model inside an envelope and never as instructions (docs/trust.md)"
    )


class CallPage(BaseModel):
    items: list[CallOut]
    next_cursor: str | None


class FindingOut(BaseModel):
    seq: int = Field(
        description="The event that records it (`run.finished` for the terminal cause)."
    )
    category: DiagnosisCategory
    explanation: str = Field(description="One line, for people; not a contract to match on.")


class DiagnosisOut(BaseModel):
    """Why the run went as it did, computed from its own records (null: nothing to say)."""

    model_config = ConfigDict(json_schema_extra={"examples": [DIAGNOSIS_EXAMPLE]})

    first_deviation: FindingOut | None = Field(
        description="The earliest anomaly, even one the run recovered from."
    )
    root_cause: FindingOut | None = Field(
        description="The earliest anomaly the run never recovered from (so far, while it runs)."
    )
    terminal_cause: FindingOut | None = Field(
        description="Why the run ended; null while it has not."
    )


class FieldErrorOut(BaseModel):
    """One invalid field of a `validation-error` problem."""

    path: str = Field(description="Where, as dotted names and indexes: `limits.max_steps`.")
    message: str


class Problem(BaseModel):
    """RFC 9457 problem details; each error response in the document shows examples of its
    own problem types."""

    type: str
    title: str
    status: int
    detail: str
    instance: str
    code: str
    trace_id: str
    errors: list[FieldErrorOut] = Field(
        default_factory=list, description="`validation-error` only: one item per field."
    )


class ReadyOut(BaseModel):
    status: Literal["ready"]
    revision: str
