"""Structured logs: one JSON object a line, with the time, level, logger, message, and the
request's `trace_id` and the run's `run_id` where there is one — something an operator can
search and alert on. (Outages are said once each way by `app.engine.process.outage`.)"""

from __future__ import annotations

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


class NoSignInQuery(logging.Filter):
    """An access line of the SSO callback without its query: its `code` and `state` are a
    sign-in's secrets, for no log."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and len(args) >= 3 and isinstance(args[2], str):
            path = args[2]
            if path.startswith("/console/sso/") and "?" in path:
                record.args = (*args[:2], path.split("?", 1)[0], *args[3:])
        return True


def config(level: str = "INFO") -> dict[str, Any]:
    """A `logging.config.dictConfig` for the service and uvicorn alike."""
    handler = {"class": "logging.StreamHandler", "formatter": "json"}
    access = {**handler, "filters": ["no_sign_in_query"]}
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"json": {"()": JsonFormatter}},
        "filters": {"no_sign_in_query": {"()": NoSignInQuery}},
        "handlers": {"default": handler, "access": access},
        "root": {"handlers": ["default"], "level": level},
        "loggers": {
            "uvicorn": {"handlers": ["default"], "level": level, "propagate": False},
            "uvicorn.access": {"handlers": ["access"], "level": level, "propagate": False},
            # httpx logs every request's URL at INFO: backend URLs stay out of the logs.
            "httpx": {"level": "WARNING"},
            # The same for the MCP SDK's client (httpx2), and the SDK's own lines, which
            # may quote a server's address (a redirect) or its answer: errors only.
            "httpx2": {"level": "WARNING"},
            "mcp": {"level": "ERROR"},
            "client": {"level": "ERROR"},  # the SDK's session logs under this bare name
            # The model SDK logs requests at DEBUG/INFO; nothing of them belongs in the log.
            "openai": {"level": "WARNING"},
            "anthropic": {"level": "WARNING"},
        },
    }
