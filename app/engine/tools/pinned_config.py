"""Pinned config versions: the version of its agent and tools a run was created with, kept
by hash in `config_version`, and the config a run is stepped with — its own version,
whatever this process was started with.

This process's versions (one per agent of its config) are written once, before its first
creation, so a creation only names its hash. A run of another version is served from
that version's document, read once per process: its instructions, and its tools as they
were declared. An operator's HTTP, MCP or agent tool is rebuilt from its declaration (its
schemas, policy and URL or server, or the agent it delegates to); a built-in tool is the code's,
so a run whose built-in tool changed since, or whose tool left the config, finds it gone
and the call ends `tool_unavailable`, never served by the new version silently. The
operator's levers stay live: the kill switch, `enabled`, rate limits and the route's own
settings are the current config's."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from app.config.files import AgentConfig, AppConfig
from app.db.tools import config_versions
from app.domain.lifecycle.records import Run
from app.domain.ports import Tool
from app.domain.tools import pinning

log = logging.getLogger(__name__)
#: Builds an operator's tool (HTTP, MCP or agent) from its declaration (None when the
#: declaration no longer parses under this code).
OperatorToolFactory = Callable[[str, Mapping[str, Any]], Tool | None]


@dataclass(frozen=True)
class RunConfig:
    """The config a run is stepped with: its version's agent and tools."""

    hash: str | None
    agent: AgentConfig | None
    tools: Mapping[str, Tool]

    @property
    def instructions(self) -> str:
        return self.agent.instructions if self.agent is not None else ""

    @property
    def context_tokens(self) -> int | None:
        """The agent's model-input budget per step (None: no budget)."""
        limits = getattr(self.agent, "limits", None)
        if isinstance(limits, Mapping):  # a version kept under older code
            return limits.get("context_tokens")
        return getattr(limits, "context_tokens", None)


def _declared(name: str, config: AppConfig, tool: Tool) -> tuple[dict[str, Any], dict[str, Any]]:
    """The tool's declaration as a version keeps it, and its levers (an operator's tool's
    own; a built-in tool's are in its spec)."""
    declared = config.tools.get(name)
    if declared is None:
        return pinning.builtin_declaration(tool.spec), {}
    dumped = declared.model_dump(mode="json")
    return pinning.operator_declaration(dumped), pinning.live_part(dumped)


class Versions:
    def __init__(
        self, config: AppConfig, tools: Mapping[str, Tool], build: OperatorToolFactory
    ) -> None:
        self._tools = tools
        self._build = build
        both = {name: _declared(name, config, t) for name, t in tools.items()}
        self._declared = {name: declared for name, (declared, _) in both.items()}
        self._levers = {name: levers for name, (_, levers) in both.items()}
        self._documents: dict[str, dict[str, Any]] = {}
        self._by_agent: dict[str, str] = {}
        self._served: dict[str, RunConfig] = {}
        for name, agent in config.agents.items():
            tools_of = {t: self._declared[t] for t in agent.tools if t in self._declared}
            doc = pinning.document(
                name, pinning.agent_declaration(agent.model_dump(mode="json")), tools_of
            )
            version = pinning.version_hash(doc)
            self._documents[version] = doc
            self._by_agent[name] = version
            self._served[version] = RunConfig(version, agent, {t: tools[t] for t in tools_of})
        self._agents = dict(config.agents)
        self._kept = False

    def hash_of(self, agent: str) -> str | None:
        """The version a run of `agent` created here is pinned to."""
        return self._by_agent.get(agent)

    async def ensure_kept(self, reads: Any) -> None:
        """Writes this process's versions before its first run is created (those kept
        already are left as they are): one statement, once per process, and none at
        start-up, which never needs the database."""
        if self._kept:
            return
        async with reads() as session:
            await config_versions.save(session, self._documents)
        self._kept = True

    async def of_run(self, reads: Any, run: Run) -> RunConfig:
        """`run`'s config: its version, read once per process; a run created before
        versions were kept is stepped with the current config, as it always was."""
        if run.config_hash is None:
            agent = self._agents.get(run.agent)
            names = agent.tools if agent is not None else run.tools
            return RunConfig(None, agent, {t: self._tools[t] for t in names if t in self._tools})
        served = self._served.get(run.config_hash)
        if served is None:
            async with reads() as session:
                doc = await config_versions.document(session, run.config_hash)
            served = self._serve(run.config_hash, doc)
            self._served[run.config_hash] = served
        return served

    def _serve(self, version: str, doc: Mapping[str, Any] | None) -> RunConfig:
        if doc is None:  # never written: nothing of it can be served
            log.warning("a run's config version %s is not kept; its tools are gone", version)
            return RunConfig(version, None, {})
        tools: dict[str, Tool] = {}
        for name, declared in doc["tools"].items():
            tool = self._tool(name, declared)
            if tool is not None:
                tools[name] = tool
        return RunConfig(version, _agent(doc["agent"]), tools)

    def _tool(self, name: str, declared: Mapping[str, Any]) -> Tool | None:
        if name not in self._tools:
            return None  # left the config: the operator took it away
        if declared == self._declared[name]:
            return self._tools[name]
        kinds = (declared.get("kind"), self._declared[name].get("kind"))
        if kinds[0] not in pinning.OPERATOR_KINDS or kinds[0] != kinds[1]:
            return None  # a built-in tool serves only the code's version
        # The run's version of the tool, under the operator's levers as they are now.
        return self._build(name, {**declared, **self._levers[name]})


def _agent(kept: Mapping[str, Any]) -> AgentConfig | None:
    """The version's agent; one this code no longer reads (a field added or removed by a
    deploy) keeps its instructions and tools, with the default guardrails (never none)."""
    try:
        return AgentConfig.model_validate(kept)
    except ValidationError:
        known = {k: kept[k] for k in ("model", "instructions", "tools") if k in kept}
        try:
            return AgentConfig.model_validate(known)
        except ValidationError:
            log.warning("a run's config version keeps an agent this code cannot read")
            return None
