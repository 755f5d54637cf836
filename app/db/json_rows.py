"""Rows of a statement passed as an array of JSON objects, one a row: how the batch of step
writes (`db.step_writes`) and the runs made (`db.births`) reach Postgres in one statement
of one shape, whatever each row holds."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any

import orjson


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
    """The rows of `param`, an array of JSON objects, for a column list to follow. Through
    `unnest`, whose row estimate the planner takes from the array itself (or guesses at
    10 in a plan kept for any array), where `jsonb_to_recordset` is always guessed at 100
    rows: at 100 the planner chose to walk every active run for each batch rather than
    look its few runs up by key."""
    return f"unnest({param}::jsonb[]) AS item, jsonb_to_record(item)"
