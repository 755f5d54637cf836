"""Structured logs: one JSON object a line, with the time, level, logger, message, and the
request's `trace_id` and the run's `run_id` where there is one — something an operator can
search and alert on. And outages said once: one warning when the database stops
answering, one line when it is back, however many requests and runs meet it."""

from __future__ import annotations

import asyncio
import json
import logging
import logging.config
import time
from contextvars import ContextVar
from typing import Any

#: The request being served (set by the HTTP middleware).
trace_id: ContextVar[str | None] = ContextVar("trace_id", default=None)
#: The run being advanced (set by the stepper).
run_id: ContextVar[str | None] = ContextVar("run_id", default=None)


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for name, var in (("trace_id", trace_id), ("run_id", run_id)):
            value = getattr(record, name, None) or var.get()
            if value:
                entry[name] = value
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False)


def config(level: str = "INFO") -> dict[str, Any]:
    """A `logging.config.dictConfig` for the service and uvicorn alike."""
    handler = {"class": "logging.StreamHandler", "formatter": "json"}
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"json": {"()": JsonFormatter}},
        "handlers": {"default": handler},
        "root": {"handlers": ["default"], "level": level},
        "loggers": {
            "uvicorn": {"handlers": ["default"], "level": level, "propagate": False},
            "uvicorn.access": {"handlers": ["default"], "level": level, "propagate": False},
            # httpx logs every request's URL at INFO: backend URLs stay out of the logs.
            "httpx": {"level": "WARNING"},
            # The model SDK logs requests at DEBUG/INFO; nothing of them belongs in the log.
            "openai": {"level": "WARNING"},
            "anthropic": {"level": "WARNING"},
        },
    }


class Outage:
    """Whether this process currently sees the database down; says so once each way."""

    def __init__(self, log: logging.Logger) -> None:
        self._log = log
        self.down = False
        self._waiters: set[asyncio.Event] = set()

    def seen(self, error: BaseException) -> None:
        if not self.down:
            self.down = True
            self._log.warning("the database is unavailable (%s)", type(error).__name__)

    def over(self) -> None:
        if self.down:
            self.down = False
            self._log.warning("the database answers again")
        for waiter in self._waiters:
            waiter.set()

    async def wait_over(self, timeout_s: float) -> None:
        """Until some part of this process sees the database answer again, or `timeout_s`."""
        if not self.down:
            return
        waiter = asyncio.Event()  # one per waiter: no event outlives its event loop
        self._waiters.add(waiter)
        try:
            await asyncio.wait_for(waiter.wait(), timeout_s)
        except TimeoutError:
            pass
        finally:
            self._waiters.discard(waiter)


outage = Outage(logging.getLogger("app.outage"))
