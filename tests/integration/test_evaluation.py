"""The evaluation harness end to end against the fake provider: it runs every case K
times through the real run loop, grades the first tool choice and its arguments, and
reports a wrong choice as one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import yaml

from app.evaluation import Case, eval_agent_config, load_cases, markdown, report, run_trials
from tests.support.factories import seed_radar
from tests.support.fake_openai import FakeOpenAI, calls, fake_openai, text
from tests.support.harness import Harness
from tests.support.live_model import KEY_ENV, SECRET, live_config
from tests.support.processes import ROOT

CASES = [
    Case("find-kafka", "Where is Kafka?", "right_tool", "search_technologies", {"query": "kafka"}),
    Case("hello", "Hello!", "no_tool", None, {}),
]


@pytest.fixture
async def provider(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[FakeOpenAI]:
    monkeypatch.setenv(KEY_ENV, SECRET)
    async with fake_openai() as fake:
        yield fake


def script_the_model(provider: FakeOpenAI) -> None:
    provider.answer(
        calls(("c1", "search_technologies", '{"query": "Kafka"}')),  # find-kafka, trial 1: right
        text("Kafka is in trial [source:s1]"),
        calls(("c1", "get_technology", '{"technology_id": "kafka"}')),  # trial 2: wrong tool
        text("not found"),
        text("Hi! Ask me about the radar."),  # hello, trial 1: right (no tool)
        calls(("c1", "search_technologies", '{"query": "hello"}')),  # trial 2: wrong
        text("nothing"),
    )


async def test_a_wrong_tool_choice_is_reported_as_one(
    harness_factory, provider: FakeOpenAI
) -> None:  # type: ignore[no-untyped-def]
    config = eval_agent_config(live_config(provider), "live")
    h: Harness = await harness_factory(config=config)
    await seed_radar(h)
    script_the_model(provider)
    results = await run_trials(h.client, await h.key(), "eval", CASES, trials=2)
    result = report(CASES, results, 2, "live")

    overall = result["overall"]
    assert overall["tool_accuracy"] == 0.5 and overall["pass@1"] == 0.5
    assert overall["pass^2"] == 0.0 and overall["argument_accuracy"] == 1.0
    assert overall["latency_p50_s"] is not None and overall["mean_cost_usd"] > 0
    kafka, hello = result["per_case"]
    assert kafka["choices"] == ["search_technologies", "get_technology"]
    assert (kafka["passed"], kafka["pass_all"]) == (1, False)
    assert hello["choices"] == [None, "search_technologies"]
    table = markdown(result)
    assert "| find-kafka | right_tool | search_technologies | 0.5 |" in table


def test_the_shipped_dataset_covers_every_category_with_thirty_cases_or_more() -> None:
    cases = load_cases(ROOT / "evals" / "tech_radar.jsonl")
    assert len(cases) >= 30
    assert {c.category for c in cases} == {"right_tool", "no_tool", "ambiguous", "refuse"}


async def test_the_eval_command_runs_end_to_end(
    provider: FakeOpenAI, database_url: str, tmp_path: Path
) -> None:
    dataset = tmp_path / "cases.jsonl"
    dataset.write_text(
        "\n".join(
            json.dumps(
                {
                    "id": c.id,
                    "category": c.category,
                    "input": c.input,
                    "expect": {"tool": c.tool, "arguments": dict(c.arguments)},
                }
            )  # fmt: skip
            for c in CASES
        )
    )
    config = live_config(provider).model_dump(mode="json", exclude_none=True)
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    provider.answer(
        calls(("c1", "get_technology", '{"technology_id": "x"}')),  # find-kafka: wrong tool
        text("not found"),
        text("Hi!"),  # hello: right
    )
    env = {**os.environ, "TOOLGATE_DATABASE_URL": database_url, "TOOLGATE_CONFIG": str(path)}
    out = tmp_path / "out"
    done = await _run(
        [
            sys.executable,
            "-m",
            "app",
            "eval",
            "--dataset",
            str(dataset),
            "--route",
            "live",
            "--trials",
            "1",
            "--out",
            str(out),
        ],  # fmt: skip
        env,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads((out / "report.json").read_text())
    assert result["overall"]["tool_accuracy"] == 0.5
    assert [c["choices"] for c in result["per_case"]] == [["get_technology"], [None]]
    assert (out / "report.md").read_text().startswith("# Evaluation of route `live`")
    assert SECRET not in done.stdout + done.stderr


async def _run(command: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    import asyncio

    process = await asyncio.create_subprocess_exec(
        *command,
        cwd=ROOT,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), 120)
    return subprocess.CompletedProcess(command, process.returncode or 0, out.decode(), err.decode())
