"""The shape of the YAML config (SPEC §4) as pydantic models.

Only single-field rules live here; rules that relate fields or sections to each other (routes
named by agents, tools known to the registry, what this build supports) are in `app.config.files`,
which can name the exact key path of each problem.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    field_validator,
    model_validator,
)

from app.domain.guardrails import DEFAULTS, OnBlock, Point, Policy, unknown_at
from app.domain.retention import Retention
from app.domain.tools import Risk, ToolSpec
from app.domain.webhooks import BadDestination, pattern

NAME_PATTERN = r"^[a-z0-9][a-z0-9_-]{0,63}$"

# Agent, route and tool names appear in URLs, logs and model tool lists: keep them plain.
Name = Annotated[str, StringConstraints(pattern=NAME_PATTERN)]
NonEmpty = Annotated[str, StringConstraints(min_length=1)]
PosInt = Annotated[int, Field(ge=1)]
# Finite only: YAML spells infinity `.inf`, and an infinite budget is no budget.
PosFloat = Annotated[float, Field(gt=0, allow_inf_nan=False)]
NonNegFloat = Annotated[float, Field(ge=0, allow_inf_nan=False)]
URL_PATTERN = r"^https?://[^\s/]+\S*$"
ENV_VAR_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]*$"
HttpUrl = Annotated[str, StringConstraints(pattern=URL_PATTERN)]
EnvVarName = Annotated[str, StringConstraints(pattern=ENV_VAR_PATTERN)]


class _Strict(BaseModel):
    # strict: YAML already types its scalars, so "8" for an integer or "no" quoted for a bool
    # is a mistake to report, not to coerce. extra=forbid: a typo is an error naming its path.
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)


class LimitsConfig(_Strict):
    """Server-wide caps; agents and requests can only narrow them."""

    max_steps: PosInt = 50
    deadline_s: PosFloat = 3600.0
    max_tokens: PosInt = 200_000
    max_cost_usd: PosFloat = 10.0
    max_tool_calls: PosInt = 200


class AgentLimitsConfig(_Strict):
    """An agent's defaults; an unset field falls back to the server cap."""

    max_steps: PosInt | None = None
    deadline_s: PosFloat | None = None
    max_tokens: PosInt | None = None
    max_cost_usd: PosFloat | None = None
    max_tool_calls: PosInt | None = None
    context_tokens: PosInt | None = None  # model-input budget of each step

    def resolve(self, server: LimitsConfig) -> LimitsConfig:
        """The agent's effective caps: its own values where set, else the server's."""
        own = {
            k: v for k, v in self.model_dump(exclude={"context_tokens"}).items() if v is not None
        }
        return server.model_copy(update=own)


class ApprovalsConfig(_Strict):
    preview_ttl_s: PosInt = 900
    allow_self_approval: bool = False


class ChooserRuleConfig(_Strict):
    if_input_matches: NonEmpty
    use: Name

    @field_validator("if_input_matches")
    @classmethod
    def _compiles(cls, value: str) -> str:
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"invalid regular expression: {exc}") from None
        return value


class ChooserConfig(_Strict):
    # One model rather than a tagged union: pydantic puts the tag into error locations,
    # which would make key paths differ from the YAML the operator wrote.
    kind: Literal["rules", "model"]
    rules: list[ChooserRuleConfig] | None = None  # kind: rules
    route: Name | None = None  # kind: model


Provider = Literal["scripted", "openai", "anthropic", "router"]


class ModelRouteConfig(_Strict):
    """A named model route; clients never name a model, only agents name routes."""

    provider: Provider
    model: NonEmpty | None = None
    base_url: HttpUrl | None = None
    api_key_env: EnvVarName | None = None  # secrets only ever come from the environment
    input_cost_per_mtok: NonNegFloat = 0.0
    output_cost_per_mtok: NonNegFloat = 0.0
    timeout_s: PosFloat = 30.0
    max_attempts: PosInt = 3
    tags: list[NonEmpty] = []
    capabilities: list[NonEmpty] = []
    # router only
    candidates: list[Name] | None = None
    default: Name | None = None
    chooser: ChooserConfig | None = None
    fallback: Name | None = None


def _check_schema(value: dict[str, Any]) -> dict[str, Any]:
    try:
        Draft202012Validator.check_schema(value)
    except SchemaError as exc:
        raise ValueError(f"not a valid JSON Schema: {exc.message}") from None
    return value


def _object_input_schema(value: dict[str, Any]) -> dict[str, Any]:
    _check_schema(value)
    # Unknown properties must be refused, so that a model cannot smuggle parameters.
    if value.get("type") != "object" or value.get("additionalProperties") is not False:
        raise ValueError("must be an object schema with additionalProperties: false")
    return value


class HttpToolConfig(_Strict):
    """An operator-declared HTTP tool (SPEC §4, wire format §4.1)."""

    kind: Literal["http"]
    description: NonEmpty
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None = None
    url: HttpUrl
    preview_url: HttpUrl | None = None
    status_url: HttpUrl | None = None
    # Lax for this one field: strict mode would take only Risk members, YAML gives strings.
    risk: Risk = Field(default=Risk.LOW, strict=False)
    requires_approval: bool  # default: risk == high, filled in by `_approval_default`
    side_effects: bool = False
    idempotent: bool = False
    permissions: list[NonEmpty] = []
    timeout_s: PosFloat = 10.0
    concurrency_group: NonEmpty | None = None
    max_concurrency: PosInt | None = None
    cost_usd: NonNegFloat = 0.0
    max_output_bytes: PosInt = 65536
    max_attempts: PosInt = 3
    rate_limit_per_minute: PosInt | None = None
    enabled: bool = True
    external: bool = False  # outside the trust boundary: `argument_policy` checks its arguments

    @model_validator(mode="before")
    @classmethod
    def _approval_default(cls, data: Any) -> Any:
        # Resolved here so that every reader sees the effective value, not a tri-state.
        if isinstance(data, dict) and "requires_approval" not in data:
            return {**data, "requires_approval": data.get("risk") == Risk.HIGH.value}
        return data

    @field_validator("input_schema")
    @classmethod
    def _object_schema(cls, value: dict[str, Any]) -> dict[str, Any]:
        return _object_input_schema(value)

    @field_validator("output_schema")
    @classmethod
    def _valid_schema(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        return None if value is None else _check_schema(value)

    def to_tool_spec(self, name: str) -> ToolSpec:
        return ToolSpec(
            name=name,
            description=self.description,
            input_schema=self.input_schema,
            output_schema=self.output_schema,
            risk=self.risk,
            requires_approval=self.requires_approval,
            side_effects=self.side_effects,
            idempotent=self.idempotent,
            permissions=tuple(self.permissions),
            timeout_s=self.timeout_s,
            concurrency_group=self.concurrency_group,
            max_concurrency=self.max_concurrency,
            cost_usd=self.cost_usd,
            max_output_bytes=self.max_output_bytes,
            max_attempts=self.max_attempts,
            enabled=self.enabled,
            rate_limit_per_minute=self.rate_limit_per_minute,
            external=self.external,
        )


#: An agent tool's input when its declaration gives no schema: the child run's input text.
DEFAULT_AGENT_INPUT = {
    "type": "object",
    "additionalProperties": False,
    "required": ["input"],
    "properties": {"input": {"type": "string", "minLength": 1, "maxLength": 100_000}},
}


class AgentToolConfig(_Strict):
    """A tool that delegates to another agent as a child run (SPEC §3.5): the call's
    arguments are the child's input, its outcome the child's final output or error."""

    kind: Literal["agent"]
    agent: Name
    description: NonEmpty
    input_schema: dict[str, Any] = DEFAULT_AGENT_INPUT

    @field_validator("input_schema")
    @classmethod
    def _object_schema(cls, value: dict[str, Any]) -> dict[str, Any]:
        return _object_input_schema(value)

    def to_tool_spec(self, name: str) -> ToolSpec:
        # A side effect (it spends the parent's budgets), deduplicated by its operation id
        # (one child per call); its time is the parent's deadline, not a timeout of its own.
        return ToolSpec(
            name=name,
            description=self.description,
            input_schema=self.input_schema,
            side_effects=True,
            idempotent=True,
            timeout_s=AGENT_TOOL_TIMEOUT_S,
        )


#: An agent tool's attempt lasts until the parent's deadline (the executor takes the
#: smaller of this and the time left): a year stands for "no timeout of its own".
AGENT_TOOL_TIMEOUT_S = 365 * 86_400.0

ToolConfig = Annotated[HttpToolConfig | AgentToolConfig, Field(discriminator="kind")]


class OnBlockConfig(_Strict):
    """What a block at each point does: `observe` (the model hears a rejection) or
    `end_run` (the run ends `policy_denied`)."""

    before_call: OnBlock = Field(default=OnBlock.OBSERVE, strict=False)
    after_call: OnBlock = Field(default=OnBlock.OBSERVE, strict=False)
    on_final: OnBlock = Field(default=OnBlock.OBSERVE, strict=False)


def _known_at(point: Point) -> AfterValidator:
    def check(names: list[str]) -> list[str]:
        unknown = unknown_at(point, names)
        if unknown:
            raise ValueError(f"no built-in guardrail {', '.join(unknown)} at {point.value}")
        return names

    return AfterValidator(check)


BeforeCallNames = Annotated[list[str], _known_at(Point.BEFORE_CALL)]
AfterCallNames = Annotated[list[str], _known_at(Point.AFTER_CALL)]
OnFinalNames = Annotated[list[str], _known_at(Point.ON_FINAL)]


class GuardrailsConfig(_Strict):
    """The guardrails an agent runs at each point, in order (`app.domain.guardrails`)."""

    before_call: BeforeCallNames = list(DEFAULTS[Point.BEFORE_CALL])
    after_call: AfterCallNames = list(DEFAULTS[Point.AFTER_CALL])
    on_final: OnFinalNames = list(DEFAULTS[Point.ON_FINAL])
    on_block: OnBlockConfig = OnBlockConfig()

    def policy(self) -> Policy:
        return Policy(
            tuple(self.before_call),
            tuple(self.after_call),
            tuple(self.on_final),
            {point: getattr(self.on_block, point.value) for point in Point},
        )


class AgentConfig(_Strict):
    model: Name
    instructions: str = ""
    tools: list[Name] = []
    limits: AgentLimitsConfig = AgentLimitsConfig()
    data_policy: list[NonEmpty] = []  # tags every route the agent uses must carry
    guardrails: GuardrailsConfig = GuardrailsConfig()
    #: The JSON Schema its final answer must be a document of (`app.domain.typed_output`).
    output_schema: dict[str, Any] | None = None

    @field_validator("output_schema")
    @classmethod
    def _valid_output_schema(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        return None if value is None else _check_schema(value)


class RetentionConfig(_Strict):
    """How long finished work is kept (finished runs only, never one in flight or awaiting
    approval); the purge runs in every driving process."""

    runs_days: PosInt = 30  # a finished run with its turns, calls, previews and events
    events_days: PosInt = 30  # a finished run's events (the run itself may stay longer)
    idempotency_keys_h: PosInt = 24  # how long an Idempotency-Key is honoured
    deliveries_days: PosInt = 7  # webhook deliveries that are done (sent or given up)

    def rules(self) -> Retention:
        return Retention(
            self.runs_days, self.events_days, self.idempotency_keys_h, self.deliveries_days
        )


class QuotasConfig(_Strict):
    """Per-tenant quotas; a field left unset is no quota of that kind."""

    runs_per_minute: PosInt | None = None
    daily_cost_usd: PosFloat | None = None


def _allow_pattern(text: str) -> str:
    try:
        pattern(text)
    except BadDestination as exc:
        raise ValueError(str(exc)) from None
    return text


AllowPattern = Annotated[str, AfterValidator(_allow_pattern)]


class WebhooksConfig(_Strict):
    """Where webhooks may be delivered, and how they are retried (SPEC §3.8)."""

    #: `scheme://host[:port]` patterns (see `app.domain.webhooks`). Only public HTTPS by
    #: default; an internal address must be allowed by its literal (`http://127.0.0.1:*`).
    allow: list[AllowPattern] = ["https://*"]
    #: Seconds before each retry after a failed attempt; after the last, the delivery fails.
    retry_schedule_s: list[PosFloat] = [5, 300, 1800, 7200, 18000, 36000, 36000]
    #: A receiver must answer 2xx within this many seconds.
    timeout_s: PosFloat = 15.0


class AppConfig(_Strict):
    limits: LimitsConfig = LimitsConfig()
    approvals: ApprovalsConfig = ApprovalsConfig()
    models: dict[Name, ModelRouteConfig] = {}
    tools: dict[Name, ToolConfig] = {}
    agents: dict[Name, AgentConfig] = {}
    quotas: QuotasConfig | None = None  # off unless configured
    webhooks: WebhooksConfig = WebhooksConfig()
    retention: RetentionConfig = RetentionConfig()
