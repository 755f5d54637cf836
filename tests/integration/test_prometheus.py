"""`OTEL_METRICS_EXPORTER=prometheus`: a real server process serves its metrics at
`/metrics` in Prometheus' text format, as a scraper reads them; without it there is no
`/metrics`, and the API document never lists it."""

from __future__ import annotations

import httpx
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample
from sqlalchemy.ext.asyncio import AsyncEngine

from app.db.session import make_sessionmaker
from app.observability.otel_setup import Telemetry
from tests.support.factories import final, run_body, tool_calls
from tests.support.processes import caller_key, free_port, run_cli, server, wait_healthy

#: The four metrics (docs/telemetry.md), as Prometheus names them, and a label each carries.
METRICS = {
    "gen_ai_client_token_usage": "gen_ai_token_type",
    "gen_ai_client_operation_duration_seconds": "gen_ai_request_model",
    "toolgate_runs_finished": "toolgate_termination_reason",
    "toolgate_tool_calls": "gen_ai_tool_name",
}


def scraped(text: str) -> dict[str, list[Sample]]:
    return {family.name: family.samples for family in text_string_to_metric_families(text)}


async def test_a_scrape_finds_the_four_metrics_with_the_runs_values(
    db: AsyncEngine, database_url: str
) -> None:
    key = await caller_key(make_sessionmaker(db))
    port = free_port()
    env = {"TOOLGATE_DATABASE_URL": database_url, "OTEL_METRICS_EXPORTER": "prometheus"}
    with server(["serve", "--port", str(port)], env, unset=("OTEL_TRACES_EXPORTER",)):
        base = f"http://127.0.0.1:{port}"
        await wait_healthy(base)
        async with httpx.AsyncClient(base_url=base, timeout=30) as client:
            headers = {"Authorization": f"Bearer {key}", "Idempotency-Key": "scrape-1"}
            script = [
                tool_calls(("c1", "search_technologies", {"query": "pg"}), usage=(30, 5)),
                final("done", usage=(40, 6)),
            ]
            run = await client.post("/v1/runs", headers=headers, json=run_body(*script))
            assert run.json()["termination_reason"] == "final", run.text
            answer = await client.get("/metrics")  # no key: scrapers come without one
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/plain; version=0.0.4")
    families = scraped(answer.text)
    for name, label in METRICS.items():
        assert any(label in s.labels for s in families.get(name, [])), (name, answer.text)
    tokens = {
        s.labels["gen_ai_token_type"]: s.value
        for s in families["gen_ai_client_token_usage"]
        if s.name.endswith("_sum")
    }
    assert tokens == {"input": 70, "output": 11}
    runs = [s for s in families["toolgate_runs_finished"] if s.name.endswith("_total")]
    assert [(s.labels["toolgate_termination_reason"], s.value) for s in runs] == [("final", 1)]
    calls = [s for s in families["toolgate_tool_calls"] if s.name.endswith("_total")]
    assert [(s.labels["toolgate_call_status"], s.value) for s in calls] == [("succeeded", 1)]
    durations = families["gen_ai_client_operation_duration_seconds"]
    assert [s.value for s in durations if s.name.endswith("_count")] == [2]


async def test_without_prometheus_there_is_no_metrics_path_and_the_document_never_has_one(
    harness_factory,
) -> None:  # type: ignore[no-untyped-def]
    plain = await harness_factory()
    assert (await plain.client.get("/metrics")).status_code == 404
    telemetry = Telemetry.from_env({"OTEL_METRICS_EXPORTER": "prometheus"})
    scraping = await harness_factory(telemetry=telemetry)
    assert (await scraping.client.get("/metrics")).status_code == 200
    document = (await scraping.client.get("/openapi.json")).json()
    assert "/metrics" not in document["paths"]


def test_prometheus_behind_several_workers_is_refused_in_words() -> None:
    """Each worker counts on its own: a scrape of the shared port would see one of them."""
    env = {
        # Never reached: the refusal comes first (and no embedded Postgres is started).
        "TOOLGATE_DATABASE_URL": "postgresql+asyncpg://app@127.0.0.1:1/app",
        "OTEL_METRICS_EXPORTER": "otlp,prometheus",
    }
    done = run_cli("serve", "--port", str(free_port()), "--workers", "2", env=env)
    assert done.returncode == 2, done.stderr
    assert "--workers 2" in done.stderr and "Traceback" not in done.stderr
