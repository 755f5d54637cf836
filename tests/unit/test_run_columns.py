"""A run's flat columns and the records `Run` nests them in: every column of the table is
one of the run's, a row goes to a run and back unchanged, and a write's columns land in
their records (a lease is held exactly when its token is set)."""

from __future__ import annotations

from datetime import timedelta

from app.db.tables import run as run_table
from app.domain.lifecycle.records import RunLease
from app.domain.lifecycle.run_columns import COLUMNS, columns_of, run_of, with_columns
from app.domain.lifecycle.status import RunStatus
from app.domain.limits.budget import Reserved, Usage
from tests.support.run_records import NOW, run_record


def test_the_columns_are_the_run_tables() -> None:
    assert sorted(COLUMNS) == sorted(run_table.c.keys())


def test_a_row_goes_to_a_run_and_back_unchanged() -> None:
    leased = run_record(
        steps=2,
        cost_usd=0.5,
        lease_owner="p",
        lease_token="t",
        lease_expires_at=NOW,
        reserved_tokens=30,
        children_tool_calls=1,
    )
    assert leased.usage == Usage(steps=2, cost_usd=0.5)
    assert leased.lease == RunLease("p", "t", NOW)
    assert leased.reserved == Reserved(tokens=30)
    assert leased.children == Usage(tool_calls=1)
    row = columns_of(leased)
    assert set(row) == set(COLUMNS)
    assert row["lease_token"] == "t" and row["children_tool_calls"] == 1
    assert run_of(row) == leased
    unleased = columns_of(run_record())
    assert unleased["lease_token"] is None and unleased["lease_expires_at"] is None


def test_a_writes_columns_land_in_their_records() -> None:
    leased = run_record(lease_owner="p", lease_token="t", lease_expires_at=NOW, tool_calls=3)
    later = NOW + timedelta(seconds=30)
    renewed = with_columns(leased, {"lease_expires_at": later, "input_tokens": 7, "version": 4})
    assert renewed.lease == RunLease("p", "t", later)
    assert renewed.usage == Usage(input_tokens=7, tool_calls=3)
    assert renewed.version == 4 and renewed.reserved is leased.reserved
    released = with_columns(
        renewed,
        {"status": RunStatus.FINISHED, "lease_owner": None, "lease_token": None},
    )
    assert released.lease is None and released.status is RunStatus.FINISHED
