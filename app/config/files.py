"""Loading and validating the YAML config (SPEC §4).

A config error stops start-up with a message naming the key path. So does anything this build
cannot run yet: it is refused here, at load time, rather than half-accepted and found out by a
run. Checks go in three passes — shape (pydantic), references between sections, then what this
build supports — and every problem found is reported; `ConfigError.path` names the first.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError
from pydantic_core import ErrorDetails

from app.config.base import ENV_VAR_PATTERN, NAME_PATTERN, URL_PATTERN
from app.config.models import (
    AgentConfig,
    AgentLimitsConfig,
    AppConfig,
    ApprovalsConfig,
    ChooserConfig,
    ChooserRuleConfig,
    LimitsConfig,
    ModelRouteConfig,
    QuotasConfig,
    RetentionConfig,
    WebhooksConfig,
)
from app.config.tool_configs import AgentToolConfig, HttpToolConfig, McpToolConfig
from app.domain.errors import ToolgateError
from app.domain.model.paging import READ_RESULT
from app.domain.tools.specs import ToolSpec

__all__ = [
    "DEMO_CONFIG_PATH",
    "AgentConfig",
    "AgentLimitsConfig",
    "AgentToolConfig",
    "AppConfig",
    "ApprovalsConfig",
    "ChooserConfig",
    "ChooserRuleConfig",
    "ConfigError",
    "HttpToolConfig",
    "LimitsConfig",
    "McpToolConfig",
    "ModelRouteConfig",
    "QuotasConfig",
    "WebhooksConfig",
    "RetentionConfig",
    "load_config",
    "parse_config",
]

DEMO_CONFIG_PATH: Path = Path(__file__).parents[1] / "resources" / "demo.yaml"

Issue = tuple[str, str]  # (dotted key path, message)
_Target = Callable[[str, str], Iterator[Issue]]  # checks one route a router refers to

# Which optional route fields mean something for which provider; a field set where it has no
# effect would be silently ignored, so it is an error instead.
_MODEL_FIELDS = ("model", "base_url", "api_key_env")
_CALL_FIELDS = ("input_cost_per_mtok", "output_cost_per_mtok", "timeout_s", "max_attempts")
_ROUTER_FIELDS = ("candidates", "default", "chooser", "fallback")
_LIMIT_FIELDS = tuple(LimitsConfig.model_fields)
_TOOL_KINDS = ("http", "agent", "mcp")

# Plain words for the patterns pydantic would otherwise quote as regular expressions.
_PATTERN_MESSAGES = {
    NAME_PATTERN: f"must be a name matching {NAME_PATTERN}",
    URL_PATTERN: "must be an http:// or https:// URL",
    ENV_VAR_PATTERN: "must be an environment variable name",
}


class ConfigError(ToolgateError):
    """A config problem. `path` is a dotted key path ("" when it concerns the whole file)."""

    def __init__(self, path: str, message: str, *, issues: Sequence[Issue] = ()) -> None:
        self.path = path
        self.message = message
        self.issues: tuple[Issue, ...] = tuple(issues) or ((path, message),)
        super().__init__(f"{path}: {message}" if path else message)


def load_config(path: str | Path, *, builtin_tools: Mapping[str, ToolSpec]) -> AppConfig:
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError("", f"config file not found: {file}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError("", f"cannot read config file {file}: {exc}") from None
    try:
        # A SafeLoader subclass: plain data only, never arbitrary Python objects.
        data = yaml.load(text, Loader=_UniqueKeyLoader)
    except yaml.YAMLError as exc:
        raise ConfigError("", f"invalid YAML in {file}: {exc}") from None
    return parse_config(data, builtin_tools=builtin_tools)


def parse_config(data: Any, *, builtin_tools: Mapping[str, ToolSpec]) -> AppConfig:
    if data is None:  # an empty file: every section takes its defaults
        data = {}
    if isinstance(data, dict):
        # `tools:` with every entry commented out reads as null; mean "absent", not an error.
        data = {
            key: value
            for key, value in data.items()
            if value is not None or key not in AppConfig.model_fields
        }
    try:
        config = AppConfig.model_validate(data)
    except ValidationError as exc:
        issues = [(_loc_path(err["loc"]), _describe(err)) for err in exc.errors()]
        raise _error(issues) from None
    issues = list(_reference_issues(config, builtin_tools))
    if issues:
        raise _error(issues)
    return config


def _error(issues: Sequence[Issue]) -> ConfigError:
    path, message = issues[0]
    if len(issues) > 1:
        rest = "; ".join(f"{p or '(top level)'}: {m}" for p, m in issues[1:])
        message = f"{message} (and {len(issues) - 1} more: {rest})"
    return ConfigError(path, message, issues=issues)


def _loc_path(loc: tuple[int | str, ...]) -> str:
    # pydantic marks a bad dict key with a trailing "[key]"; the key itself is the path.
    # A tool's kind is the union's tag, which pydantic puts after the tool's name
    # (`tools.x.http.url`): the YAML the operator wrote has no such key.
    parts = [part for part in loc if part != "[key]"]
    if len(parts) > 2 and parts[0] == "tools" and parts[2] in _TOOL_KINDS:
        del parts[2]
    return ".".join(str(part) for part in parts)


def _describe(err: ErrorDetails) -> str:
    kind = err["type"]
    if "[key]" in err["loc"]:
        return f"invalid name {err['input']!r}: must match {NAME_PATTERN}"
    if kind == "extra_forbidden":
        return "unknown key"
    if kind == "missing":
        return "required key is missing"
    if kind in ("model_type", "model_attributes_type", "dict_type"):
        return "must be a mapping"
    if kind == "string_pattern_mismatch":
        pattern = (err.get("ctx") or {}).get("pattern")
        return _PATTERN_MESSAGES.get(pattern, err["msg"])
    return err["msg"].removeprefix("Value error, ")


# -- references between sections ----------------------------------------------------------


def _reference_issues(config: AppConfig, builtin: Mapping[str, ToolSpec]) -> Iterator[Issue]:
    for name, route in config.models.items():
        yield from _route_issues(f"models.{name}", route, config.models)
    for name, tool in config.tools.items():
        if name in builtin or name == READ_RESULT:
            yield f"tools.{name}", "name is taken by a built-in tool"
        quorum = not isinstance(tool, AgentToolConfig) and tool.approvals_required > 1
        if quorum and not tool.requires_approval:  # a quorum of approvers for no approval
            yield f"tools.{name}.approvals_required", "needs requires_approval: true"
        if isinstance(tool, AgentToolConfig):
            if tool.agent not in config.agents:
                yield f"tools.{name}.agent", f"unknown agent {tool.agent!r}"
            continue
        if isinstance(tool, McpToolConfig):
            if tool.server not in config.mcp_servers:
                yield f"tools.{name}.server", f"unknown MCP server {tool.server!r}"
            continue  # the service previews an MCP call itself
        if tool.requires_approval and tool.preview_url is None:
            # Approval binds to a preview, so a tool needing approval must offer one.
            yield f"tools.{name}.preview_url", "required when requires_approval is true"
    for name, agent in config.agents.items():
        yield from _agent_issues(f"agents.{name}", agent, config, builtin)


def _route_issues(
    at: str, route: ModelRouteConfig, routes: Mapping[str, ModelRouteConfig]
) -> Iterator[Issue]:
    provider = route.provider
    if provider == "router":
        misplaced = (*_MODEL_FIELDS, *_CALL_FIELDS)  # the chosen route's settings apply
    else:
        misplaced = _ROUTER_FIELDS if provider != "scripted" else (*_ROUTER_FIELDS, *_MODEL_FIELDS)
    for field in misplaced:
        if field in route.model_fields_set:
            yield f"{at}.{field}", f"does not apply to provider {provider}"
    if provider in ("openai", "anthropic") and route.model is None:
        yield f"{at}.model", f"required for provider {provider}"
    if provider == "router":
        yield from _router_issues(at, route, routes)


def _router_issues(
    at: str, route: ModelRouteConfig, routes: Mapping[str, ModelRouteConfig]
) -> Iterator[Issue]:
    def target(path: str, name: str) -> Iterator[Issue]:
        # Routers do not nest: one level keeps choice simple and rules out cycles.
        if name not in routes:
            yield path, f"unknown model route {name!r}"
        elif routes[name].provider == "router":
            yield path, f"route {name!r} is a router; routers cannot be nested"

    candidates = route.candidates or []
    if not candidates:
        yield f"{at}.candidates", "a router needs at least one candidate"
    for i, name in enumerate(candidates):
        if name in candidates[:i]:
            yield f"{at}.candidates.{i}", f"route {name!r} is listed twice"
        yield from target(f"{at}.candidates.{i}", name)
    if route.default is None:
        yield f"{at}.default", "required for provider router"
    elif route.default not in candidates:
        yield f"{at}.default", f"route {route.default!r} is not one of the candidates"
    if route.fallback is not None:
        yield from target(f"{at}.fallback", route.fallback)
    if route.chooser is not None:
        yield from _chooser_issues(f"{at}.chooser", route.chooser, candidates, target)


def _chooser_issues(
    at: str, chooser: ChooserConfig, candidates: list[str], target: _Target
) -> Iterator[Issue]:
    if chooser.kind == "rules":
        if chooser.route is not None:
            yield f"{at}.route", "does not apply to chooser kind rules"
        if not chooser.rules:
            yield f"{at}.rules", "chooser kind rules needs at least one rule"
        for i, rule in enumerate(chooser.rules or []):
            if rule.use not in candidates:
                yield f"{at}.rules.{i}.use", f"route {rule.use!r} is not one of the candidates"
    else:
        if chooser.rules is not None:
            yield f"{at}.rules", "does not apply to chooser kind model"
        if chooser.route is None:
            yield f"{at}.route", "required for chooser kind model"
        else:
            yield from target(f"{at}.route", chooser.route)


def _agent_issues(
    at: str, agent: AgentConfig, config: AppConfig, builtin: Mapping[str, ToolSpec]
) -> Iterator[Issue]:
    if agent.model not in config.models:
        yield f"{at}.model", f"unknown model route {agent.model!r}"
    for i, tool in enumerate(agent.tools):
        if tool in agent.tools[:i]:
            yield f"{at}.tools.{i}", f"tool {tool!r} is listed twice"
        elif tool not in builtin and tool not in config.tools:
            yield f"{at}.tools.{i}", f"unknown tool {tool!r}"
    # Agents can only narrow the server caps, never widen them.
    for field in _LIMIT_FIELDS:
        own, cap = getattr(agent.limits, field), getattr(config.limits, field)
        if own is not None and own > cap:
            yield f"{at}.limits.{field}", f"exceeds the server limit ({cap})"
    if agent.model in config.models:
        used = _routes_used(agent.model, config.models)
        for i, tag in enumerate(agent.data_policy):
            for route in used:
                if tag not in config.models[route].tags:
                    yield f"{at}.data_policy.{i}", f"route {route!r} does not carry tag {tag!r}"


def _routes_used(name: str, routes: Mapping[str, ModelRouteConfig]) -> list[str]:
    """The route and, for a router, every route it may hand a request to (known ones only)."""
    route = routes[name]
    used = [name]
    if route.provider == "router":
        chooser_route = route.chooser.route if route.chooser else None
        for other in (*(route.candidates or []), route.fallback, chooser_route):
            if other is not None and other in routes and other not in used:
                used.append(other)
    return used


class _UniqueKeyLoader(yaml.SafeLoader):
    """SafeLoader that refuses duplicate keys, which PyYAML would resolve to the last one."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Hashable] = set()
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":  # `<<:` merges may override
                continue
            key = self.construct_object(key_node, deep=deep)
            if isinstance(key, Hashable):
                if key in seen:
                    raise yaml.constructor.ConstructorError(
                        "while constructing a mapping",
                        node.start_mark,
                        f"found duplicate key {key!r}",
                        key_node.start_mark,
                    )
                seen.add(key)
        return super().construct_mapping(node, deep=deep)
