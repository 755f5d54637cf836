"""Consistent snapshots (SPEC §3.1, issue 18 item 5): a run created with `consistency:
"snapshot"` reads the data as it stood at its creation (`as_of` = `created_at`), whatever
changes after; its citations say so; its writes still check the current data at commit;
HTTP read tools are told `as_of`; and the history behind the built-in tools keeps no more
than the runs in progress can read.

A run is held between its creation and its reads by parking it on a preview first: what
happens while it waits (another run's commit, a direct update) happens after its creation
and before its reads, deterministically."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import delete, select, text, update
from sqlalchemy.exc import DBAPIError

from app.db.radar.history_tables import technology_version
from app.db.radar.radar_tables import technology
from app.domain.limits.retention import HISTORY_GRACE_S, Kind
from app.domain.ports import ToolContext
from app.domain.tools.specs import Principal
from app.engine.limits import retention
from tests.support.approvals import (
    WRITER,
    approvals_harness,
    approve,
    commit,
    keys,
    move,
    moved_meanwhile,
    row,
)
from tests.support.backend import FakeBackend, ok, serving
from tests.support.factories import final, run_body, seed_radar, tool_calls
from tests.support.harness import DEFAULT_AGENT, Harness, make_config

DAY_S = 86_400
#: Deadlines long enough that no run is ended by the clock while the test moves it.
LONG = {**WRITER, "limits": {**WRITER["limits"], "deadline_s": DAY_S}}


def at(value: str | None) -> datetime | None:
    return None if value is None else datetime.fromisoformat(value.replace("Z", "+00:00"))


def read_context(snapshot: str | None) -> ToolContext:
    """A read's context, as of `snapshot` (None: the latest)."""
    return ToolContext(
        tenant_id="acme",
        run_id="run_x",
        step=1,
        call_id="c1",
        operation_id="op_x",
        principal=Principal("acme", "svc"),
        as_of=None if snapshot is None else datetime.now(UTC),
        snapshot=snapshot,
    )


async def created(h: Harness, headers: dict[str, str], *script: Any, **fields: Any) -> Any:
    answer = await h.client.post("/v1/runs", headers=headers, json=run_body(*script, **fields))
    assert answer.status_code == 201, answer.text
    return answer.json()


async def calls_of(h: Harness, headers: dict[str, str], run_id: str) -> dict[str, Any]:
    items = (await h.client.get(f"/v1/runs/{run_id}/calls", headers=headers)).json()["items"]
    return {c["call_id"]: c for c in items}


async def reject(h: Harness, approver: dict[str, str], run: dict[str, Any]) -> Any:
    """Rejects the run's preview and waits for the run to finish."""
    preview_id = run["pending_approvals"][0]["preview_id"]
    rejected = await h.client.post(
        f"/v1/previews/{preview_id}/reject", headers=approver, json={"reason": "not now"}
    )
    assert rejected.status_code == 200, rejected.text
    return await h.driver.wait("acme", run["id"], 10)


def reads(tech_id: str) -> dict[str, Any]:
    """The second turn of a parked run: the technology, and a search that finds it."""
    return tool_calls(
        ("c1", "get_technology", {"technology_id": tech_id}),
        ("c2", "search_technologies", {"query": "kafka"}),
    )


async def test_a_snapshot_run_reads_as_of_its_creation_after_another_runs_commit(
    harness_factory,
) -> None:  # type: ignore[no-untyped-def]
    h = await approvals_harness(harness_factory)
    caller, approver = await keys(h)
    kafka = await row(h, "Kafka")
    pinned = await created(
        h,
        caller,
        tool_calls(move(kafka["id"], "hold")),
        reads(kafka["id"]),
        final("Kafka is in trial [source:s1] [source:s2]"),
        consistency="snapshot",
    )
    assert pinned["status"] == "awaiting_approval", pinned
    assert pinned["consistency"] == "snapshot" and pinned["as_of"] == pinned["created_at"]

    # Meanwhile another run moves Kafka to adopt, approved and committed.
    other = await created(h, caller, tool_calls(move(kafka["id"], "adopt")), final("moved"))
    preview_id = other["pending_approvals"][0]["preview_id"]
    await approve(h, approver, preview_id)
    assert (await commit(h, approver, preview_id, "c-other")).status_code == 200
    assert (await row(h, "Kafka"))["version"] == kafka["version"] + 1

    finished = await reject(h, approver, pinned)
    assert finished.termination_reason == "final"
    calls = await calls_of(h, caller, pinned["id"])
    got, found = calls["c1"], calls["c2"]
    assert (got["output"]["ring"], got["output"]["version"]) == ("trial", kafka["version"])
    assert [i["ring"] for i in found["output"]["items"]] == ["trial"]
    as_of = at(pinned["as_of"])
    for call in (got, found):
        assert at(call["observed_at"]) == as_of and call["source_version"] == "1"

    # The run view and the final answer's citations say what was read and as of when.
    view = (await h.client.get(f"/v1/runs/{pinned['id']}", headers=caller)).json()
    assert (view["consistency"], at(view["as_of"])) == ("snapshot", at(view["created_at"]))
    citations = view["output"]["citations"]
    assert [(c["source_id"], c["tool"], c["source_version"]) for c in citations] == [
        ("s1", "get_technology", "1"),
        ("s2", "search_technologies", "1"),
    ]
    assert {at(c["observed_at"]) for c in citations} == {as_of}

    # A `latest` run sees the new version, observed when it read it.
    latest = await created(
        h,
        caller,
        tool_calls(("c1", "get_technology", {"technology_id": kafka["id"]})),
        final("Kafka is in adopt [source:s1]"),
    )
    assert (latest["consistency"], latest["as_of"]) == ("latest", None)
    [citation] = latest["output"]["citations"]
    assert citation["source_version"] == "2" and at(citation["observed_at"]) > as_of
    now = (await calls_of(h, caller, latest["id"]))["c1"]["output"]
    assert (now["ring"], now["version"]) == ("adopt", 2)


async def test_a_snapshot_run_reads_as_of_its_creation_after_a_direct_update_and_insert(
    harness_factory,
) -> None:  # type: ignore[no-untyped-def]
    h = await approvals_harness(harness_factory)
    caller, approver = await keys(h)
    kafka = await row(h, "Kafka")
    pinned = await created(
        h,
        caller,
        tool_calls(move(kafka["id"], "hold")),
        reads(kafka["id"]),
        final("done"),
        consistency="snapshot",
    )
    await moved_meanwhile(h, kafka["id"], "assess")
    async with h.runtime.sessions.begin() as session:  # a technology that came later
        await session.execute(
            technology.insert().values(
                tenant_id="acme",
                id="tech_new",
                name="Kafka Streams",
                category="messaging",
                ring="assess",
                description="Stream processing on Kafka.",
                updated_at=h.runtime.clock.now(),
            )
        )

    await reject(h, approver, pinned)
    calls = await calls_of(h, caller, pinned["id"])
    assert calls["c1"]["output"]["ring"] == "trial"
    assert calls["c2"]["output"]["total"] == 1  # not Kafka Streams: it came later
    assert [i["name"] for i in calls["c2"]["output"]["items"]] == ["Kafka"]


async def test_a_write_of_a_snapshot_run_checks_the_current_version_at_commit(
    harness_factory,
) -> None:  # type: ignore[no-untyped-def]
    h = await approvals_harness(harness_factory)
    caller, approver = await keys(h)
    kafka = await row(h, "Kafka")
    pinned = await created(
        h, caller, tool_calls(move(kafka["id"], "adopt")), final("moved"), consistency="snapshot"
    )
    first = pinned["pending_approvals"][0]["preview_id"]
    await approve(h, approver, first)
    await moved_meanwhile(h, kafka["id"], "assess")

    # The run's reads are pinned; its write is not: the stale preview is refused, and the
    # new one is made from the data as it is now, not as the run saw it.
    conflict = await commit(h, approver, first, "commit-1")
    assert conflict.status_code == 409 and conflict.json()["code"] == "version-conflict"
    second = conflict.json()["new_preview_id"]
    new = (await h.client.get(f"/v1/previews/{second}", headers=approver)).json()
    assert new["resource_version"] == "2" and new["summary"] == "Move Kafka from assess to adopt"
    assert (await row(h, "Kafka"))["ring"] == "assess"

    await approve(h, approver, second)
    done = await commit(h, approver, second, "commit-2")
    assert done.status_code == 200, done.text
    moved = await row(h, "Kafka")
    assert (moved["ring"], moved["version"]) == ("adopt", 3)


def lookup_tool(backend: FakeBackend, name: str, **fields: Any) -> dict[str, Any]:
    return {
        "kind": "http",
        "description": f"The {name} tool.",
        "input_schema": {
            "type": "object",
            "additionalProperties": False,
            "required": ["q"],
            "properties": {"q": {"type": "string"}},
        },
        "url": backend.tool_url(name),
        "timeout_s": 2,
        **fields,
    }


async def test_an_http_read_tool_receives_as_of_and_a_side_effect_does_not(
    harness_factory,
) -> None:  # type: ignore[no-untyped-def]
    async with serving() as backend:
        specs = {
            "lookup": lookup_tool(backend, "lookup"),
            "notify": lookup_tool(backend, "notify", side_effects=True, idempotent=True),
        }
        agent = {**DEFAULT_AGENT, "tools": [*DEFAULT_AGENT["tools"], *specs]}
        h = await harness_factory(config=make_config({"tech-radar": agent}, tools=specs))
        headers = await h.key()
        script = (
            tool_calls(("c1", "lookup", {"q": "kafka"})),
            tool_calls(("c2", "notify", {"q": "done"})),
            final("found [source:s1]"),
        )
        backend.answer("lookup", ok({"hits": 1}, source_version="7"))
        pinned = await created(h, headers, *script, consistency="snapshot")
        await created(h, headers, *script)

    assert pinned["termination_reason"] == "final", pinned
    [pinned_read, latest_read] = backend.sent("lookup")
    assert at(pinned_read.body["as_of"]) == at(pinned["as_of"]) == at(pinned["created_at"])
    assert latest_read.body["as_of"] is None
    # A side effect acts on the data as it is now, in a snapshot run too.
    assert [r.body["as_of"] for r in backend.sent("notify")] == [None, None]
    [citation] = pinned["output"]["citations"]
    assert (citation["tool"], citation["source_version"]) == ("lookup", "7")


async def test_every_change_of_a_technology_is_kept_in_its_history(harness) -> None:  # type: ignore[no-untyped-def]
    await seed_radar(harness)
    kafka = await row(harness, "Kafka")
    await moved_meanwhile(harness, kafka["id"], "adopt")
    async with harness.runtime.sessions() as session:
        snapshot = (await session.execute(text("SELECT pg_current_snapshot()::text"))).scalar()
    async with harness.runtime.sessions.begin() as session:
        await session.execute(delete(technology).where(technology.c.id == kafka["id"]))

    async with harness.runtime.sessions() as session:
        history = (
            await session.execute(
                select(technology_version.c.version, technology_version.c.ring,
                       technology_version.c.deleted)
                .where(technology_version.c.id == kafka["id"])
                .order_by(technology_version.c.version)
            )
        ).all()  # fmt: skip
    assert [tuple(r) for r in history] == [
        (1, "trial", False),
        (2, "adopt", False),
        (3, "adopt", True),  # the deletion's tombstone
    ]

    # A snapshot from before the deletion still sees Kafka; the radar now does not.
    tools = harness.runtime.tools
    seen = await tools["get_technology"].execute(
        {"technology_id": kafka["id"]}, read_context(snapshot)
    )
    assert (seen.output["ring"], seen.source_version) == ("adopt", "2")
    found = await tools["search_technologies"].execute({"query": "kafka"}, read_context(None))
    assert found.output["total"] == 0


async def test_a_change_that_keeps_the_version_is_refused(harness) -> None:  # type: ignore[no-untyped-def]
    await seed_radar(harness)
    kafka = await row(harness, "Kafka")
    with pytest.raises(DBAPIError, match="must raise its version"):
        async with harness.runtime.sessions.begin() as session:
            await session.execute(
                update(technology).where(technology.c.id == kafka["id"]).values(ring="hold")
            )
    assert await row(harness, "Kafka") == kafka


async def _kafka_versions(h: Harness, tech_id: str) -> list[int]:
    async with h.runtime.sessions() as session:
        found = await session.execute(
            select(technology_version.c.version)
            .where(technology_version.c.id == tech_id)
            .order_by(technology_version.c.version)
        )
        return list(found.scalars())


async def test_the_purge_keeps_the_versions_an_unfinished_snapshot_run_may_read(
    harness_factory,
) -> None:  # type: ignore[no-untyped-def]
    config = make_config({"tech-radar": LONG}, limits={"deadline_s": DAY_S})
    h = await harness_factory(config=config, run_driver=False)
    await seed_radar(h)
    caller, approver = await keys(h)
    kafka = await row(h, "Kafka")
    await moved_meanwhile(h, kafka["id"], "assess")  # version 2, before the run
    pinned = await created(
        h,
        caller,
        tool_calls(move(kafka["id"], "hold")),
        reads(kafka["id"]),
        final("done"),
        consistency="snapshot",
    )
    await moved_meanwhile(h, kafka["id"], "adopt")  # version 3, after it
    h.travel(HISTORY_GRACE_S + 1)

    # Version 2 is what the parked run reads: kept, whatever else goes (version 1 too,
    # when no older transaction anywhere on the server holds the horizon back).
    await retention.purge(h.runtime.sessions, retention.pass_of(h.runtime))
    assert {2, 3} <= set(await _kafka_versions(h, kafka["id"]))
    await reject(h, approver, pinned)
    assert (await calls_of(h, caller, pinned["id"]))["c1"]["output"]["ring"] == "assess"

    # Finished, the run needs nothing: only the latest version of each technology stays.
    counted = await retention.count(h.runtime.sessions, retention.pass_of(h.runtime))
    assert counted.removed[Kind.TECHNOLOGY_HISTORY] >= 1
    done = await retention.purge(h.runtime.sessions, retention.pass_of(h.runtime))
    assert done.removed[Kind.TECHNOLOGY_HISTORY] == counted.removed[Kind.TECHNOLOGY_HISTORY]
    assert await _kafka_versions(h, kafka["id"]) == [3]


async def test_a_version_younger_than_the_grace_period_keeps_its_predecessor(harness) -> None:  # type: ignore[no-untyped-def]
    await seed_radar(harness)
    kafka = await row(harness, "Kafka")
    await moved_meanwhile(harness, kafka["id"], "adopt")
    done = await retention.purge(harness.runtime.sessions, retention.pass_of(harness.runtime))
    assert done.removed[Kind.TECHNOLOGY_HISTORY] == 0
    assert await _kafka_versions(harness, kafka["id"]) == [1, 2]
