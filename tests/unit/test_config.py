"""Config loading: what is accepted, and that every refusal names the key path."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from app.config.files import (
    DEMO_CONFIG_PATH,
    AppConfig,
    ConfigError,
    LimitsConfig,
    load_config,
    parse_config,
)
from app.domain.tools.specs import Risk, ToolSpec


def _spec(name: str, *, permissions: tuple[str, ...], **kwargs: Any) -> ToolSpec:
    schema = {"type": "object", "additionalProperties": False, "properties": {}}
    return ToolSpec(
        name=name, description=name, input_schema=schema, permissions=permissions, **kwargs
    )


BUILTIN: dict[str, ToolSpec] = {
    "search_technologies": _spec("search_technologies", permissions=("radar:read",)),
    "get_technology": _spec("get_technology", permissions=("radar:read",)),
    "move_technology_ring": _spec(
        "move_technology_ring",
        permissions=("radar:write",),
        risk=Risk.HIGH,
        requires_approval=True,
        side_effects=True,
    ),
}

HTTP_TOOL: dict[str, Any] = {
    "kind": "http",
    "description": "Open a support ticket for the customer.",
    "input_schema": {
        "type": "object",
        "additionalProperties": False,
        "required": ["title"],
        "properties": {"title": {"type": "string", "maxLength": 200}},
    },
    "url": "http://127.0.0.1:9100/tools/create_ticket",
}


def _config(**sections: Any) -> dict[str, Any]:
    """A minimal valid config with one scripted route and one agent, sections overridden."""
    base: dict[str, Any] = {
        "models": {"scripted": {"provider": "scripted"}},
        "agents": {"radar": {"model": "scripted", "tools": ["search_technologies"]}},
    }
    return {**base, **sections}


def _agent(**fields: Any) -> dict[str, Any]:
    return {"radar": {"model": "scripted", **fields}}


def _refused(data: Any) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        parse_config(data, builtin_tools=BUILTIN)
    return info.value


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "toolgate.yaml"
    path.write_text(text, encoding="utf-8")
    return path


# -- accepted --------------------------------------------------------------------------------


def test_demo_config_loads() -> None:
    config = load_config(DEMO_CONFIG_PATH, builtin_tools=BUILTIN)

    assert config.limits == LimitsConfig(
        max_steps=50, deadline_s=604800, max_tokens=200000, max_cost_usd=10, max_tool_calls=200
    )
    assert config.approvals.preview_ttl_s == 900
    assert config.approvals.allow_self_approval is False
    assert config.models["scripted"].provider == "scripted"
    agent = config.agents["tech-radar"]
    assert agent.model == "scripted"
    assert agent.instructions.endswith("Cite sources as [source:ID].")
    assert agent.tools == ["search_technologies", "get_technology", "move_technology_ring"]
    assert agent.limits.max_steps == 8
    assert agent.limits.resolve(config.limits) == LimitsConfig(
        max_steps=8, deadline_s=3600, max_tokens=50000, max_cost_usd=1, max_tool_calls=20
    )
    assert config.tools == {} and config.quotas is None


def test_empty_file_is_a_config_with_defaults_and_no_agents(tmp_path: Path) -> None:
    config = load_config(_write(tmp_path, "# nothing yet\n"), builtin_tools=BUILTIN)

    assert config == AppConfig()
    assert config.limits.max_steps == 50 and config.limits.max_cost_usd == 10
    assert config.agents == {} and config.models == {}


def test_null_sections_mean_absent() -> None:
    config = parse_config({"tools": None, "quotas": None, "agents": None}, builtin_tools=BUILTIN)

    assert config.tools == {} and config.quotas is None and config.agents == {}


def test_unset_agent_limits_fall_back_to_server_caps() -> None:
    data = _config(agents=_agent(limits={"max_steps": 3}))
    config = parse_config(data, builtin_tools=BUILTIN)

    limits = config.agents["radar"].limits.resolve(config.limits)
    assert limits.max_steps == 3 and limits.max_tool_calls == 200


# -- routes of every provider ----------------------------------------------------------------


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_provider_routes_are_accepted(provider: str) -> None:
    route = {"provider": provider, "model": "m-1", "api_key_env": "KEY"}
    config = parse_config(
        _config(models={"scripted": {"provider": "scripted"}, "small": route}),
        builtin_tools=BUILTIN,
    )

    assert config.models["small"].model == "m-1"


def test_a_router_route_is_accepted() -> None:
    router = {
        "provider": "router",
        "candidates": ["scripted"],
        "default": "scripted",
        "chooser": {"kind": "rules", "rules": [{"if_input_matches": "(?i)x", "use": "scripted"}]},
    }
    config = parse_config(
        _config(models={"scripted": {"provider": "scripted"}, "auto": router}),
        builtin_tools=BUILTIN,
    )

    assert config.models["auto"].candidates == ["scripted"]


def test_http_tool_is_accepted_and_its_spec_holds_no_url() -> None:
    agents = _agent(tools=["search_technologies", "create_ticket"])
    config = parse_config(
        _config(tools={"create_ticket": HTTP_TOOL}, agents=agents), builtin_tools=BUILTIN
    )

    spec = config.tools["create_ticket"].to_tool_spec("create_ticket")
    assert spec.name == "create_ticket" and spec.read_only and not spec.requires_approval
    assert "127.0.0.1" not in repr(spec)


def test_tools_requiring_approval_are_accepted_with_a_preview() -> None:
    extra = {"risk": "high", "preview_url": "http://127.0.0.1:9100/p"}
    tools = ["search_technologies", "move_technology_ring", "create_ticket"]
    config = parse_config(
        _config(tools={"create_ticket": {**HTTP_TOOL, **extra}}, agents=_agent(tools=tools)),
        builtin_tools=BUILTIN,
    )

    assert config.tools["create_ticket"].to_tool_spec("create_ticket").requires_approval
    assert config.agents["radar"].tools == tools


def test_quotas_are_taken_and_checked() -> None:
    config = parse_config(_config(quotas={"runs_per_minute": 10}), builtin_tools=BUILTIN)
    assert config.quotas is not None
    assert config.quotas.runs_per_minute == 10 and config.quotas.daily_cost_usd is None

    error = _refused(_config(quotas={"daily_cost_usd": 0}))
    assert error.path == "quotas.daily_cost_usd"


def test_context_tokens_is_an_agents_model_input_budget() -> None:
    config = parse_config(
        _config(agents=_agent(limits={"context_tokens": 4000})), builtin_tools=BUILTIN
    )
    assert config.agents["radar"].limits.context_tokens == 4000

    error = _refused(_config(agents=_agent(limits={"context_tokens": 0})))
    assert error.path == "agents.radar.limits.context_tokens"


def test_read_result_is_a_built_in_tools_name() -> None:
    error = _refused(_config(tools={"read_result": HTTP_TOOL}))
    assert error.path == "tools.read_result"
    assert "built-in" in error.message


# -- refused: references between sections ------------------------------------------------


def test_unknown_model_route() -> None:
    error = _refused(_config(agents=_agent(model="gpt")))

    assert error.path == "agents.radar.model"
    assert "'gpt'" in error.message


def test_unknown_tool() -> None:
    error = _refused(_config(agents=_agent(tools=["get_technology", "drop_table"])))

    assert error.path == "agents.radar.tools.1"
    assert "unknown tool 'drop_table'" in error.message


def test_tool_listed_twice() -> None:
    tools = ["get_technology", "search_technologies", "get_technology"]
    error = _refused(_config(agents=_agent(tools=tools)))

    assert error.path == "agents.radar.tools.2"
    assert "twice" in error.message


def test_data_policy_tag_missing_on_route() -> None:
    models = {"scripted": {"provider": "scripted", "tags": ["eu"]}}
    error = _refused(_config(models=models, agents=_agent(data_policy=["eu", "internal"])))

    assert error.path == "agents.radar.data_policy.1"
    assert "'internal'" in error.message and "'scripted'" in error.message


def test_data_policy_met_by_route_tags() -> None:
    models = {"scripted": {"provider": "scripted", "tags": ["eu", "internal"]}}
    data = _config(models=models, agents=_agent(data_policy=["internal"]))

    assert parse_config(data, builtin_tools=BUILTIN).agents["radar"].data_policy == ["internal"]


def test_agent_limit_above_server_cap() -> None:
    error = _refused(_config(agents=_agent(limits={"max_steps": 51})))

    assert error.path == "agents.radar.limits.max_steps"
    assert "server limit" in error.message


def test_field_that_does_not_apply_to_the_provider() -> None:
    error = _refused(_config(models={"scripted": {"provider": "scripted", "model": "gpt-4o"}}))

    assert error.path == "models.scripted.model"


def test_router_candidate_must_exist() -> None:
    router = {"provider": "router", "candidates": ["scripted", "nope"], "default": "scripted"}
    error = _refused(_config(models={"scripted": {"provider": "scripted"}, "auto": router}))

    assert error.path == "models.auto.candidates.1"
    assert "'nope'" in error.message


# -- refused: shape ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "path"),
    [
        ({"limitz": {}}, "limitz"),
        ({"limits": {"max_step": 5}}, "limits.max_step"),
        ({"approvals": {"ttl": 5}}, "approvals.ttl"),
        (
            _config(models={"scripted": {"provider": "scripted", "api_key": "x"}}),
            "models.scripted.api_key",
        ),
        (_config(agents=_agent(tool=["get_technology"])), "agents.radar.tool"),
        (_config(agents=_agent(limits={"max_steps": 5, "steps": 1})), "agents.radar.limits.steps"),
        (_config(tools={"t": {**HTTP_TOOL, "retries": 2}}), "tools.t.retries"),
    ],
)
def test_unknown_key_names_its_path(data: dict[str, Any], path: str) -> None:
    error = _refused(data)

    assert error.path == path
    assert error.message == "unknown key"


@pytest.mark.parametrize(
    ("data", "path"),
    [
        ({"limits": {"max_steps": 0}}, "limits.max_steps"),
        ({"limits": {"max_cost_usd": -1}}, "limits.max_cost_usd"),
        ({"limits": {"max_cost_usd": 0}}, "limits.max_cost_usd"),
        ({"limits": {"deadline_s": 0}}, "limits.deadline_s"),
        ({"limits": {"max_tokens": "many"}}, "limits.max_tokens"),
        ({"limits": {"max_tool_calls": 2.5}}, "limits.max_tool_calls"),
        ({"approvals": {"preview_ttl_s": 0}}, "approvals.preview_ttl_s"),
        (
            _config(agents=_agent(limits={"max_tool_calls": 0})),
            "agents.radar.limits.max_tool_calls",
        ),
        (_config(agents=_agent(limits={"max_cost_usd": -0.5})), "agents.radar.limits.max_cost_usd"),
    ],
)
def test_bad_limit_value_names_its_path(data: dict[str, Any], path: str) -> None:
    assert _refused(data).path == path


def test_bad_name_is_refused() -> None:
    error = _refused(_config(agents={"Tech Radar": {"model": "scripted"}}))

    assert error.path == "agents.Tech Radar"
    assert "invalid name" in error.message


def test_unknown_provider() -> None:
    error = _refused(_config(models={"scripted": {"provider": "ollama"}}))

    assert error.path == "models.scripted.provider"


def test_http_tool_input_schema_must_refuse_unknown_properties() -> None:
    schema = {"type": "object", "properties": {"sql": {"type": "string"}}}
    error = _refused(_config(tools={"t": {**HTTP_TOOL, "input_schema": schema}}))

    assert error.path == "tools.t.input_schema"
    assert "additionalProperties" in error.message


def test_http_tool_input_schema_must_be_valid_json_schema() -> None:
    schema = {"type": "object", "additionalProperties": False, "required": "title"}
    error = _refused(_config(tools={"t": {**HTTP_TOOL, "input_schema": schema}}))

    assert error.path == "tools.t.input_schema"
    assert "JSON Schema" in error.message


def test_high_risk_http_tool_needs_a_preview_url() -> None:
    error = _refused(_config(tools={"t": {**HTTP_TOOL, "risk": "high"}}))

    # requires_approval defaults to risk == high, and approval binds to a preview.
    assert error.path == "tools.t.preview_url"


def test_several_problems_are_all_reported_and_path_is_the_first() -> None:
    error = _refused({"limits": {"max_steps": 0, "max_tokens": 0}})

    assert error.path == "limits.max_steps"
    assert [path for path, _ in error.issues] == ["limits.max_steps", "limits.max_tokens"]
    assert "limits.max_tokens" in error.message


def test_top_level_must_be_a_mapping() -> None:
    error = _refused(["limits"])

    assert error.path == ""
    assert str(error) == error.message == "must be a mapping"


# -- file and YAML errors ----------------------------------------------------------------


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path / "absent.yaml", builtin_tools=BUILTIN)

    assert info.value.path == ""
    assert "not found" in str(info.value)


def test_yaml_syntax_error(tmp_path: Path) -> None:
    path = _write(tmp_path, "limits:\n  max_steps: [8\n")
    with pytest.raises(ConfigError) as info:
        load_config(path, builtin_tools=BUILTIN)

    assert info.value.path == ""
    assert "invalid YAML" in str(info.value) and "line" in str(info.value)


def test_duplicate_yaml_key_is_an_error_not_last_one_wins(tmp_path: Path) -> None:
    path = _write(tmp_path, "limits:\n  max_steps: 8\n  max_steps: 80\n")
    with pytest.raises(ConfigError) as info:
        load_config(path, builtin_tools=BUILTIN)

    assert info.value.path == ""
    assert "duplicate key 'max_steps'" in str(info.value)


def test_yaml_quoted_number_is_not_coerced(tmp_path: Path) -> None:
    path = _write(tmp_path, 'limits:\n  max_steps: "8"\n')
    with pytest.raises(ConfigError) as info:
        load_config(path, builtin_tools=BUILTIN)

    assert info.value.path == "limits.max_steps"


def test_http_tool_url_must_be_http() -> None:
    error = _refused(_config(tools={"t": {**HTTP_TOOL, "url": "file:///etc/passwd"}}))

    assert error.path == "tools.t.url"
    assert error.message == "must be an http:// or https:// URL"


def test_an_unknown_top_level_key_is_refused_even_when_empty() -> None:
    with pytest.raises(ConfigError) as refused:
        parse_config({"webhookz": None}, builtin_tools=BUILTIN)
    assert refused.value.path == "webhookz"


# -- patterns that run on untrusted text: RE2 only -------------------------------------------
@pytest.mark.parametrize(
    "pattern", [r"^(?!admin)\w+$", r"(a)\1", r"(?<=x)y"], ids=["lookahead", "backref", "behind"]
)
def test_a_schema_pattern_the_linear_engine_cannot_run_is_refused_naming_its_path(
    pattern: str,
) -> None:
    schema = {
        "type": "object",
        "additionalProperties": False,
        "properties": {"title": {"type": "string", "pattern": pattern}},
    }
    tool = {**HTTP_TOOL, "input_schema": schema}
    error = _refused(_config(tools={"create_ticket": tool}, agents=_agent(tools=["create_ticket"])))
    assert error.path == "tools.create_ticket.input_schema"
    assert "/properties/title/pattern" in str(error) and "RE2" in str(error)


def test_a_pattern_property_the_linear_engine_cannot_run_is_refused() -> None:
    schema = {"type": "object", "patternProperties": {"^(?=x)": {"type": "string"}}}
    error = _refused(_config(agents=_agent(output_schema=schema)))
    assert error.path == "agents.radar.output_schema"


def test_a_router_rule_the_linear_engine_cannot_run_is_refused() -> None:
    router = {
        "provider": "router",
        "candidates": ["scripted"],
        "default": "scripted",
        "chooser": {"kind": "rules", "rules": [{"if_input_matches": "(?!x)y", "use": "scripted"}]},
    }
    error = _refused(_config(models={"scripted": {"provider": "scripted"}, "auto": router}))
    assert error.path == "models.auto.chooser.rules.0.if_input_matches"
