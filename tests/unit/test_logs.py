"""Structured log lines, and outages said once each way."""

from __future__ import annotations

import asyncio
import json
import logging

import pytest

from app.engine.process.outage import Outage
from app.observability import logs


def test_a_line_is_one_json_object_with_the_request_and_the_run() -> None:
    record = logging.LogRecord("app.engine", logging.WARNING, __file__, 1, "step %s", (3,), None)
    trace = logs.trace_id.set("t" * 32)
    run = logs.run_id.set("run_1")
    try:
        line = json.loads(logs.JsonFormatter().format(record))
    finally:
        logs.trace_id.reset(trace)
        logs.run_id.reset(run)
    assert line["level"] == "WARNING" and line["logger"] == "app.engine"
    assert line["message"] == "step 3" and line["time"].endswith("Z")
    assert line["trace_id"] == "t" * 32 and line["run_id"] == "run_1"


def test_a_line_outside_any_request_or_run_names_neither() -> None:
    record = logging.LogRecord("app", logging.INFO, __file__, 1, "hello", (), None)
    line = json.loads(logs.JsonFormatter().format(record))
    assert "trace_id" not in line and "run_id" not in line


def test_an_outage_is_said_once_and_its_end_once(caplog: pytest.LogCaptureFixture) -> None:
    outage = Outage(logging.getLogger("test.outage"))
    with caplog.at_level(logging.INFO, logger="test.outage"):
        for _ in range(5):
            outage.seen(ConnectionRefusedError())
        for _ in range(3):
            outage.over()
        outage.over()
    messages = [r.getMessage() for r in caplog.records]
    assert messages == [
        "the database is unavailable (ConnectionRefusedError)",
        "the database answers again",
    ]


def test_the_config_keeps_backend_urls_out_of_the_logs() -> None:
    config = logs.config()
    assert config["loggers"]["httpx"]["level"] == "WARNING"
    assert config["formatters"]["json"]["()"] is logs.JsonFormatter


async def test_waiters_on_an_outage_go_on_as_soon_as_anyone_sees_it_over() -> None:
    outage = Outage(logging.getLogger("test.outage"))
    loop = asyncio.get_running_loop()
    started = loop.time()
    await outage.wait_over(30)  # not down: no wait at all
    outage.seen(ConnectionRefusedError())
    await outage.wait_over(0.05)  # still down: waits its time out
    assert loop.time() - started >= 0.05
    waiters = [asyncio.create_task(outage.wait_over(30)) for _ in range(3)]
    await asyncio.sleep(0.01)
    outage.over()
    await asyncio.wait_for(asyncio.gather(*waiters), 5)
    assert loop.time() - started < 5 and not outage.down
