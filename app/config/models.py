"""The shape of the YAML config (SPEC §4) as pydantic models.

Only single-field rules live here; rules that relate fields or sections to each other (routes
named by agents, tools known to the registry, what this build supports) are in `app.config.files`,
which can name the exact key path of each problem.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, field_validator

from app.config.auth_configs import AuthConfig
from app.config.base import (
    EnvVarName,
    HttpUrl,
    Name,
    NonEmpty,
    NonNegFloat,
    PosFloat,
    PosInt,
    Strict,
    check_schema,
)
from app.config.tool_configs import McpServerConfig, ToolConfig
from app.domain import patterns
from app.domain.guardrails.policy import DEFAULTS, OnBlock, Point, Policy, unknown_at
from app.domain.limits.retention import Retention
from app.domain.webhooks.destinations import BadDestination, pattern


class LimitsConfig(Strict):
    """Server-wide caps; agents and requests can only narrow them."""

    max_steps: PosInt = 50
    deadline_s: PosFloat = 3600.0
    max_tokens: PosInt = 200_000
    max_cost_usd: PosFloat = 10.0
    max_tool_calls: PosInt = 200


class AgentLimitsConfig(Strict):
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


class ApprovalsConfig(Strict):
    preview_ttl_s: PosInt = 900
    allow_self_approval: bool = False


class ChooserRuleConfig(Strict):
    if_input_matches: NonEmpty
    use: Name

    @field_validator("if_input_matches")
    @classmethod
    def _compiles(cls, value: str) -> str:
        why = patterns.problem(value)  # matched against the caller's input: RE2 only
        if why is not None:
            raise ValueError(f"invalid regular expression: {why}")
        return value


class ChooserConfig(Strict):
    # One model rather than a tagged union: pydantic puts the tag into error locations,
    # which would make key paths differ from the YAML the operator wrote.
    kind: Literal["rules", "model"]
    rules: list[ChooserRuleConfig] | None = None  # kind: rules
    route: Name | None = None  # kind: model


Provider = Literal["scripted", "openai", "anthropic", "router"]
#: The output a call on a provider's route asks for at most when its route sets no
#: `max_output_tokens`: what every current chat model can write in one answer.
DEFAULT_MAX_OUTPUT_TOKENS = 4096


class ModelRouteConfig(Strict):
    """A named model route; clients never name a model, only agents name routes."""

    provider: Provider
    model: NonEmpty | None = None
    base_url: HttpUrl | None = None
    api_key_env: EnvVarName | None = None  # secrets only ever come from the environment
    input_cost_per_mtok: NonNegFloat = 0.0
    output_cost_per_mtok: NonNegFloat = 0.0
    timeout_s: PosFloat = 30.0
    max_attempts: PosInt = 3
    #: The model's own limit on one answer's output (a provider refuses a call that asks
    #: for more); each call asks for the smaller of it and what the run's budgets leave.
    max_output_tokens: PosInt | None = None
    tags: list[NonEmpty] = []
    capabilities: list[NonEmpty] = []
    # router only
    candidates: list[Name] | None = None
    default: Name | None = None
    chooser: ChooserConfig | None = None
    fallback: Name | None = None

    @property
    def output_limit(self) -> int | None:
        """`max_output_tokens`, else 4,096 on a provider's route; a scripted route has
        none of its own (its items declare what they write)."""
        if self.max_output_tokens is not None or self.provider == "scripted":
            return self.max_output_tokens
        return DEFAULT_MAX_OUTPUT_TOKENS


class OnBlockConfig(Strict):
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


class GuardrailsConfig(Strict):
    """The guardrails an agent runs at each point, in order (`app.domain.guardrails.policy`)."""

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


class AgentConfig(Strict):
    model: Name
    instructions: str = ""
    tools: list[Name] = []
    limits: AgentLimitsConfig = AgentLimitsConfig()
    data_policy: list[NonEmpty] = []  # tags every route the agent uses must carry
    guardrails: GuardrailsConfig = GuardrailsConfig()
    #: The JSON Schema its final answer must be a document of (`app.domain.model.typed_output`).
    output_schema: dict[str, Any] | None = None

    @field_validator("output_schema")
    @classmethod
    def _valid_output_schema(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        return None if value is None else check_schema(value)


class RetentionConfig(Strict):
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


class QuotasConfig(Strict):
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


class WebhooksConfig(Strict):
    """Where webhooks may be delivered, and how they are retried (SPEC §3.8)."""

    #: `scheme://host[:port]` patterns (see `app.domain.webhooks.destinations`). Only public HTTPS
    #: by default; an internal address must be allowed by its literal (`http://127.0.0.1:*`).
    allow: list[AllowPattern] = ["https://*"]
    #: Seconds before each retry after a failed attempt; after the last, the delivery fails.
    retry_schedule_s: list[PosFloat] = [5, 300, 1800, 7200, 18000, 36000, 36000]
    #: A receiver must answer 2xx within this many seconds.
    timeout_s: PosFloat = 15.0
    #: Endpoints one tenant may have (disabled ones included); one more is refused `409`.
    #: Each endpoint subscribed to an event adds a delivery row to the step that writes it.
    max_endpoints_per_tenant: PosInt = 16


class AppConfig(Strict):
    limits: LimitsConfig = LimitsConfig()
    approvals: ApprovalsConfig = ApprovalsConfig()
    models: dict[Name, ModelRouteConfig] = {}
    tools: dict[Name, ToolConfig] = {}
    agents: dict[Name, AgentConfig] = {}
    quotas: QuotasConfig | None = None  # off unless configured
    webhooks: WebhooksConfig = WebhooksConfig()
    retention: RetentionConfig = RetentionConfig()
    mcp_servers: dict[Name, McpServerConfig] = {}
    auth: AuthConfig = AuthConfig()
