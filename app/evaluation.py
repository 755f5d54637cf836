"""The real-model evaluation: can a model reliably pick the right tool and arguments?

`python -m app eval --dataset evals/tech_radar.jsonl --route NAME --trials K` runs each
case K times through the real run loop (the service's own API, in process, with the tools
executed for real against the demo radar), grades each run's *first* tool choice and its
arguments against the case's expectations, and reports per case and overall: tool
accuracy, argument accuracy, pass@1 (the mean trial success), pass^K (the share of cases
passed on every trial), mean cost and latency p50/p95. It talks to a real model: it is a
measurement, not a test, and is not part of CI.

A case is one JSON object a line:

    {"id": "find-kafka", "category": "right_tool", "input": "Where is Kafka on the radar?",
     "expect": {"tool": "search_technologies", "arguments": {"query": "kafka"}}}

`expect.tool` is the tool the first turn must call, or null when it must call none (a
question the model can answer itself, or a request it must refuse). `expect.arguments`
lists values the call must carry: a string matches when it occurs in the argument, case
aside; anything else must be equal. Unlisted arguments are free.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import httpx

from app.domain.errors import ToolgateError

#: How long one trial may take before it counts as failed (a run that never finishes).
TRIAL_TIMEOUT_S = 180.0


class DatasetError(ToolgateError, ValueError):
    pass


@dataclass(frozen=True)
class Case:
    id: str
    input: str
    category: str
    tool: str | None
    arguments: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Trial:
    case: str
    passed: bool
    tool_ok: bool
    #: None when the case expects no arguments, or the tool was wrong.
    arguments_ok: bool | None
    chose: str | None
    arguments: Any
    cost_usd: float
    latency_s: float
    termination_reason: str | None


def load_cases(path: Path) -> list[Case]:
    cases: list[Case] = []
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
            expect = item.get("expect") or {}
            case = Case(
                id=str(item["id"]),
                input=str(item["input"]),
                category=str(item.get("category", "")),
                tool=expect.get("tool"),
                arguments=dict(expect.get("arguments") or {}),
            )
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise DatasetError(f"{path}:{number}: not a case ({exc})") from None
        if any(c.id == case.id for c in cases):
            raise DatasetError(f"{path}:{number}: case id {case.id!r} is used twice")
        cases.append(case)
    if not cases:
        raise DatasetError(f"{path}: no cases")
    return cases


def grade(case: Case, first: tuple[str, Any] | None) -> tuple[bool, bool | None]:
    """(tool right, arguments right): `first` is the first turn's first call, or None
    when the first turn called no tool."""
    chose = first[0] if first else None
    tool_ok = chose == case.tool
    if not tool_ok or first is None or not case.arguments:
        return tool_ok, None
    arguments = first[1]
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return tool_ok, False
    if not isinstance(arguments, dict):
        return tool_ok, False
    return tool_ok, all(_matches(arguments.get(k), v) for k, v in case.arguments.items())


def _matches(actual: Any, expected: Any) -> bool:
    if isinstance(expected, str):
        return isinstance(actual, str) and expected.lower() in actual.lower()
    return bool(actual == expected)


async def run_trials(
    client: httpx.AsyncClient,
    headers: Mapping[str, str],
    agent: str,
    cases: Sequence[Case],
    trials: int,
) -> list[Trial]:
    results: list[Trial] = []
    for case in cases:
        for _ in range(trials):
            results.append(await _trial(client, headers, agent, case))
    return results


async def _trial(
    client: httpx.AsyncClient, headers: Mapping[str, str], agent: str, case: Case
) -> Trial:
    started = time.perf_counter()
    body = {"agent": agent, "input": case.input, "wait_s": 30}
    key = {"Idempotency-Key": f"eval-{case.id}-{uuid.uuid4().hex}"}
    response = await client.post("/v1/runs", headers={**headers, **key}, json=body)
    if response.status_code != 201:
        return Trial(
            case.id, False, False, None, None, None, 0.0, 0.0, f"http {response.status_code}"
        )
    run = response.json()
    while run["status"] in ("queued", "running"):
        if time.perf_counter() - started > TRIAL_TIMEOUT_S:
            break
        answer = await client.post(
            f"/v1/runs/{run['id']}/advance", headers=headers, json={"wait_s": 30}
        )
        run = answer.json()
    latency = time.perf_counter() - started
    if run["status"] == "awaiting_approval":  # a write was proposed: nothing is committed
        await client.post(f"/v1/runs/{run['id']}/cancel", headers=headers)
    calls = (await client.get(f"/v1/runs/{run['id']}/calls", headers=headers)).json()["items"]
    first_turn = [c for c in calls if c["step"] == 1]
    first = (first_turn[0]["tool"], first_turn[0]["arguments"]) if first_turn else None
    tool_ok, arguments_ok = grade(case, first)
    return Trial(
        case=case.id,
        passed=tool_ok and arguments_ok is not False,
        tool_ok=tool_ok,
        arguments_ok=arguments_ok,
        chose=first[0] if first else None,
        arguments=first[1] if first else None,
        cost_usd=float(run["usage"]["cost_usd"]),
        latency_s=latency,
        termination_reason=run.get("termination_reason"),
    )


def _share(values: Sequence[bool]) -> float | None:
    return round(sum(values) / len(values), 4) if values else None


def _percentile(values: Sequence[float], p: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(p * len(ordered)))], 3)


def report(cases: Sequence[Case], results: Sequence[Trial], trials: int, route: str) -> dict:
    per_case = []
    for case in cases:
        mine = [t for t in results if t.case == case.id]
        argued = [t.arguments_ok for t in mine if t.arguments_ok is not None]
        per_case.append(
            {
                "id": case.id,
                "category": case.category,
                "expected_tool": case.tool,
                "tool_accuracy": _share([t.tool_ok for t in mine]),
                "argument_accuracy": _share(argued),
                "passed": sum(t.passed for t in mine),
                "trials": len(mine),
                "pass_all": bool(mine) and all(t.passed for t in mine),
                "choices": [t.chose for t in mine],
            }
        )
    argued = [t.arguments_ok for t in results if t.arguments_ok is not None]
    latencies = [t.latency_s for t in results]
    return {
        "route": route,
        "cases": len(cases),
        "trials_per_case": trials,
        "overall": {
            "tool_accuracy": _share([t.tool_ok for t in results]),
            "argument_accuracy": _share(argued),
            "pass@1": _share([t.passed for t in results]),
            f"pass^{trials}": _share([c["pass_all"] for c in per_case]),
            "mean_cost_usd": round(statistics.fmean(t.cost_usd for t in results), 8)
            if results
            else None,
            "latency_p50_s": _percentile(latencies, 0.50),
            "latency_p95_s": _percentile(latencies, 0.95),
        },
        "per_case": per_case,
        "trials": [asdict(t) for t in results],
    }


def markdown(result: Mapping[str, Any]) -> str:
    overall = result["overall"]
    lines = [
        f"# Evaluation of route `{result['route']}`: {result['cases']} cases × "
        f"{result['trials_per_case']} trials",
        "",
        "| metric | value |",
        "|---|---|",
        *(f"| {k} | {v} |" for k, v in overall.items()),
        "",
        "| case | category | expected tool | tool accuracy | argument accuracy | passed "
        "| choices |",
        "|---|---|---|---|---|---|---|",
    ]
    for c in result["per_case"]:
        choices = ", ".join(str(x) for x in c["choices"])
        lines.append(
            f"| {c['id']} | {c['category']} | {c['expected_tool']} | {c['tool_accuracy']} | "
            f"{c['argument_accuracy']} | {c['passed']}/{c['trials']} | {choices} |"
        )
    return "\n".join(lines) + "\n"


def eval_agent_config(config: Any, route: str) -> Any:
    """The config with an agent `eval` on `route` and the demo radar's tools."""
    from app.config.files import AgentConfig

    if route not in config.models:
        raise DatasetError(f"no model route named {route!r} in the config")
    demo = config.agents.get("tech-radar-live") or config.agents.get("tech-radar")
    instructions = demo.instructions if demo else "Answer with the radar's tools."
    agent = AgentConfig(
        model=route,
        instructions=instructions,
        tools=["search_technologies", "get_technology", "move_technology_ring"],
    )
    return config.model_copy(update={"agents": {**config.agents, "eval": agent}})


async def evaluate_with_app(app: Any, cases: Sequence[Case], trials: int, route: str) -> dict:
    """Runs the evaluation against `app` (built by the caller), in a tenant of its own with
    the demo radar seeded, through the public API."""
    import secrets

    from app.adapters.tools.builtin.demo_data import seed
    from app.engine.access.keys import create_key

    async with app.router.lifespan_context(app):
        rt = app.state.runtime
        tenant = f"eval-{secrets.token_hex(4)}"
        async with rt.sessions.begin() as session:
            await seed(session, tenant_id=tenant, now=rt.clock.now())
        _, key = await create_key(
            rt.sessions, rt.clock, tenant_id=tenant, subject="eval", roles=["caller"], scopes=None
        )
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(
            transport=transport, base_url="http://eval", timeout=TRIAL_TIMEOUT_S
        ) as client:
            headers = {"Authorization": f"Bearer {key}"}
            results = await run_trials(client, headers, "eval", cases, trials)
    return report(cases, results, trials, route)


def run_cli(settings: Any, dataset: Path, route: str, trials: int, out: Path | None) -> int:
    from app.main import create_app, load_app_config

    cases = load_cases(dataset)
    config = eval_agent_config(load_app_config(settings), route)
    app = create_app(settings, config=config, run_driver=True)
    result = asyncio.run(evaluate_with_app(app, cases, trials, route))
    table = markdown(result)
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        (out / "report.json").write_text(json.dumps(result, indent=2))
        (out / "report.md").write_text(table)
    print(json.dumps(result, indent=2))
    print(table)
    return 0
