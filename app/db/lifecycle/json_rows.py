"""Rows of a statement passed as an array of JSON objects, one a row: how the batch of step
writes (`db.lifecycle.step_writes`) and the runs made (`db.lifecycle.births`) reach Postgres in one
statement of one shape, whatever each row holds."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any

import orjson
from sqlalchemy import DDL
from sqlalchemy import event as sql_events

from app.db.tables import metadata

#: Migration 0027 creates the same function (see `each`).
BATCH_ITEMS = DDL(
    "CREATE FUNCTION batch_items(items jsonb[]) RETURNS SETOF jsonb "
    "LANGUAGE sql VOLATILE ROWS 10 AS 'SELECT unnest(items)'"
)
sql_events.listen(metadata, "after_create", BATCH_ITEMS)


def _json_default(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if hasattr(value, "as_dict"):
        return value.as_dict()
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, tuple | frozenset | set):
        return list(value)
    raise TypeError(f"not JSON: {type(value).__name__}")


def encode(item: Any) -> str:
    """An item of the batch as JSON text: orjson (a step's write is a few kilobytes), or the
    standard library for what orjson refuses (an integer wider than 64 bits, which a
    tool's output may hold)."""
    try:
        return orjson.dumps(
            item, default=_json_default, option=orjson.OPT_PASSTHROUGH_DATACLASS
        ).decode()
    except TypeError:
        return json.dumps(item, default=_json_default)


def each(param: str) -> str:
    """The rows of `param`, an array of JSON objects, for a column list to follow: through
    `batch_items` (migration 0027), which the planner takes for 10 rows whatever the array,
    so that a connection keeps one plan for every batch, and sizes it near what a batch
    holds (`jsonb_to_recordset` is guessed at 100 rows, at which it walked every active
    run rather than look a batch's few runs up by key)."""
    return f"batch_items({param}::jsonb[]) AS item, jsonb_to_record(item)"
