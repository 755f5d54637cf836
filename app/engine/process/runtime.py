"""What the use cases run with: built once in the app's lifespan (or by a test)."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field

from opentelemetry.trace import Tracer
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from app.config.files import AgentConfig, AppConfig, ModelRouteConfig
from app.config.settings import Settings
from app.db.clock import DbTime
from app.domain.limits.retention import Retention
from app.domain.ports import Clock, ModelProvider, Tool
from app.engine.access.known_keys import KnownKeys
from app.engine.access.oidc import OidcVerifier
from app.engine.events.event_hub import EventHub
from app.engine.process.commit_batcher import CommitBatcher
from app.engine.process.deferred import Deferred
from app.engine.tools.gates import DisabledTools
from app.engine.tools.mcp_declarations import Declarations
from app.engine.tools.pinned_config import Versions
from app.observability import telemetry
from app.observability.captured_content import Capture
from app.observability.metrics import Metrics


@dataclass
class Runtime:
    """What every use case runs with. Three handles reach the database, each for one kind
    of work, so that no use case pays for a transaction it does not need:

    - `sessions` — `async with rt.sessions.begin()`: a transaction of several statements
      that must hold together (creating a run with its key, an approver's decision with
      the run it wakes, the claim of a commit with its gates). BEGIN and COMMIT are two
      more round trips; use it only when atomicity needs more than one statement.
    - `single` — `async with rt.single.connect()`: one statement that is atomic on its
      own, without BEGIN/COMMIT. A step's write is this (`db.lifecycle.step_writes` builds the whole
      change as one statement, and `commits` sends many runs' steps as one), which is
      what keeps a step to one round trip, or less.
    - `reads` — `async with rt.reads()`: sessions on `single`, for a read (or one small
      conditional write, such as a rate-limit slot) that stands alone; wrapped in
      `db.session.retrying` where a read may be repeated after a dropped connection.

    The built-in tools get `sessions` too: a tool's effect and its ledger row commit in
    one transaction."""

    sessions: async_sessionmaker[AsyncSession]
    clock: Clock
    settings: Settings
    config: AppConfig
    tools: Mapping[str, Tool]
    models: Mapping[str, ModelProvider]
    #: Connections without an explicit transaction: for work that is one statement (a
    #: step's write, a single read), which saves the BEGIN and COMMIT round trips.
    single: AsyncEngine
    #: Sessions on `single`: each statement stands on its own.
    reads: async_sessionmaker[AsyncSession]
    #: The config versions runs are pinned to: this process's, and others read once.
    versions: Versions
    #: The database's clock, which lease and lock expiry is compared with.
    db_time: DbTime = field(default_factory=DbTime)
    tracer: Tracer = field(default_factory=telemetry.tracer)
    metrics: Metrics = field(default_factory=Metrics)
    #: Whether (and how redacted) message content goes on spans; off by default.
    capture: Capture = field(default_factory=Capture)
    tool_slots: asyncio.Semaphore = field(init=False)
    #: The kill switch's disabled tools, per tenant, as this process last saw them.
    disabled_tools: DisabledTools = field(init=False)
    #: Writes owed to the database since an outage (see `engine.process.deferred`).
    deferred: Deferred = field(default_factory=Deferred, init=False)
    #: Where this process's MCP servers pin their tools' declarations (shared by replicas).
    mcp_declarations: Declarations = field(default_factory=Declarations)
    #: The OIDC issuer's access tokens as principals (`auth.oidc`), or None: keys only.
    oidc: OidcVerifier | None = None
    #: Wakes this process's event streams when events are committed (by any process).
    events: EventHub = field(default_factory=EventHub, init=False)
    #: Commits steps' writes (and Idempotency-Key answers), many runs' in one statement.
    commits: CommitBatcher = field(init=False)
    #: The principals of keys looked up lately (kept while revocations reach the process).
    known_keys: KnownKeys = field(init=False)
    #: Who holds this process's leases: its instance id and a token of this start, so
    #: that no other process (a restart in the same container) passes for it; the token
    #: is also the key of its liveness lock (`engine.process.liveness`).
    owner: str = field(init=False)
    owner_key: int = field(init=False)
    #: `owner_key` as 8 hex digits: the tail of `owner`, and what a claim's token names.
    owner_tag: str = field(init=False)
    #: Holding its liveness lock, registered: what it claims is taken over if it dies.
    live: bool = field(default=False, init=False)
    _group_slots: dict[str, asyncio.Semaphore] = field(default_factory=dict, init=False)

    def __post_init__(self) -> None:
        self.owner_key = int.from_bytes(secrets.token_bytes(4), "big", signed=True)
        self.owner_tag = f"{self.owner_key & 0xFFFFFFFF:08x}"
        self.owner = f"{self.settings.instance_id}:{self.owner_tag}"
        self.tool_slots = asyncio.Semaphore(self.settings.tool_concurrency)
        self.disabled_tools = DisabledTools(self)
        self.commits = CommitBatcher(
            self.single,
            self.metrics,
            max_size=self.settings.commit_batch_max,
        )
        self.known_keys = KnownKeys(self.settings.key_cache_s, self.clock.monotonic)

    @property
    def retention(self) -> Retention:
        return self.config.retention.rules()

    @property
    def idempotency_ttl_s(self) -> int:
        """How long an Idempotency-Key is honoured: the config's
        `retention.idempotency_keys_h` when it sets it, else `TOOLGATE_IDEMPOTENCY_TTL_S`."""
        if "idempotency_keys_h" in self.config.retention.model_fields_set:
            return self.retention.idempotency_ttl_s
        return self.settings.idempotency_ttl_s

    def instructions(self, agent: str) -> str:
        config = self.agent(agent)
        return config.instructions if config else ""

    def agent(self, name: str) -> AgentConfig | None:
        return self.config.agents.get(name)

    def route(self, name: str) -> ModelRouteConfig:
        return self.config.models[name]

    def group_slots(self, group: str, limit: int | None) -> asyncio.Semaphore:
        """One semaphore per concurrency group, sized by the group's first declared limit."""
        if group not in self._group_slots:
            self._group_slots[group] = asyncio.Semaphore(limit or self.settings.tool_concurrency)
        return self._group_slots[group]
