"""The context budget's policy (app/domain/model/window.py, paging.py, carry_over.py):
the estimate's floor, which turns become compact and in what order, what a summary keeps,
when nothing more can be dropped, how a large result is paged, and what a continuation
carries over."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from typing import Any

from app.domain.errors import ErrorValue
from app.domain.lifecycle.records import Call, Run
from app.domain.lifecycle.status import CallStatus, RunStatus
from app.domain.limits.budget import Limits
from app.domain.model import carry_over
from app.domain.model.context import CallRecord, TurnRecord, opening_messages
from app.domain.model.paging import CHARS_PER_TOKEN, Paging, pages
from app.domain.model.window import ContextWindow, message_chars, schema_of, tool_chars
from app.domain.tools.specs import ToolSpec

TOOL = ToolSpec("lookup", "Look a thing up.", {"type": "object", "properties": {}})
SCHEMAS = [schema_of(TOOL)]


def _opening() -> list[dict[str, Any]]:
    return opening_messages(instructions="Be brief.", user_input="What is Kafka?")


def _turn(step: int, *, size: int = 2000, code: str | None = None) -> TurnRecord:
    if code is not None:
        error = {"code": code, "retryable": False, "message": "m" * 200}
        call = CallRecord(f"f{step}", "lookup", {"q": step}, "failed", error=error)
    else:
        output = {"text": "x" * size}
        call = CallRecord(
            f"c{step}", "lookup", {"q": step}, "succeeded", output, f"s{step}",
            source_version=f"v{step}",
        )  # fmt: skip
    return TurnRecord(step, "tool_calls", calls=[call])


def _window(budget: int | None, turns: int, **kw: Any) -> ContextWindow:
    window = ContextWindow(_opening(), Paging(budget))
    for step in range(1, turns + 1):
        window.append(_turn(step, code="not_found" if step % 3 == 0 else None, **kw))
    return window


def _contents(messages: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {m["call_id"]: json.loads(m["content"]) for m in messages if m["role"] == "tool"}


def test_the_estimate_never_counts_fewer_than_a_quarter_of_the_json() -> None:
    for turns in (0, 1, 7):
        view = _window(None, turns).view(SCHEMAS)
        floor = math.ceil(len(json.dumps(view.messages + SCHEMAS)) / 4)
        assert view.tokens >= floor
        # Kept per turn, the count is what the whole request's characters give at once.
        chars = 2 + sum(message_chars(m) for m in view.messages) + tool_chars(SCHEMAS)
        assert view.tokens == math.ceil(chars / CHARS_PER_TOKEN)


def test_without_a_budget_every_turn_is_whole() -> None:
    view = _window(None, 12).view(SCHEMAS)
    seen = _contents(view.messages)
    assert all(c["type"] == "tool_result" for c in seen.values())
    assert not view.summarized


def test_the_oldest_turns_become_summaries_first_and_the_latest_stays_whole() -> None:
    window = _window(4000, 12)
    view = window.view(SCHEMAS)
    assert view.fits and view.tokens <= 4000 and view.summarized
    kinds = [c["type"] for c in _contents(view.messages).values()]
    # A prefix of summaries, then whole results: compaction goes oldest first.
    first_whole = kinds.index("tool_result")
    assert set(kinds[:first_whole]) == {"tool_result_summary"}
    assert set(kinds[first_whole:]) == {"tool_result"}
    assert view.messages[:2] == _opening()
    assert "c11" not in [
        k for k, c in _contents(view.messages).items() if c["type"] != "tool_result"
    ]


def test_a_summary_keeps_call_id_error_code_version_source_and_size() -> None:
    view = _window(2500, 9).view(SCHEMAS)
    seen = _contents(view.messages)
    assert sorted(seen) == sorted(f"f{s}" if s % 3 == 0 else f"c{s}" for s in range(1, 10))
    assert seen["c1"] == {
        "type": "tool_result_summary",
        "trust": "untrusted",
        "tool": "lookup",
        "call_id": "c1",
        "step": 1,
        "status": "succeeded",
        "source_id": "s1",
        "source_version": "v1",
        "size": len(json.dumps({"text": "x" * 2000}, separators=(",", ":"))),
        "pages": 2,  # of 1250 bytes: half of a quarter of the budget
    }
    assert seen["f3"]["error"] == {"code": "not_found"}  # its message is trimmed


def test_approval_state_is_never_trimmed() -> None:
    error = {"code": "rejected_by_approver", "retryable": False, "message": "not this ring"}
    rejected = CallRecord(
        "m1", "move", {"why": "w" * 2000}, "rejected", error=error, preview_id="prv_1"
    )
    window = ContextWindow(_opening(), Paging(2000))
    window.append(TurnRecord(1, "tool_calls", calls=[rejected]))
    for step in range(2, 6):
        window.append(_turn(step, size=1000))
    view = window.view(SCHEMAS)
    summary = _contents(view.messages)["m1"]
    assert summary["type"] == "tool_result_summary"
    assert summary["error"] == error and summary["preview_id"] == "prv_1"
    [proposal] = view.messages[2]["tool_calls"]
    assert proposal["arguments"] == {"why": "w" * 2000}


def test_a_run_ends_when_what_it_must_keep_does_not_fit() -> None:
    # The input alone.
    window = ContextWindow(opening_messages(instructions="x", user_input="y" * 4000), Paging(500))
    view = window.view(SCHEMAS)
    assert not view.fits and view.tokens > 500 and view.messages == []
    # Later: the latest turn whole and a digest of every older one are still too much
    # (ids that follow no pattern fold to a row each, so the digest grows step by step).
    window = ContextWindow(_opening(), Paging(1500))
    step, views = 0, []
    while not views or views[-1].fits:
        step += 1
        call_id = f"k{(step * 7919) % 10007:05d}x{step}"
        output = {"text": "x" * 500}
        call = CallRecord(call_id, "lookup", {"q": step}, "succeeded", output, f"s{step}")
        window.append(TurnRecord(step, "tool_calls", calls=[call]))
        views.append(window.view(SCHEMAS))
    assert 10 < step < 200 and views[-2].fits and views[-1].tokens > 1500
    assert json.loads(views[-2].messages[2]["content"])["type"] == "history_digest"
    assert views[-1].messages == []


def test_a_large_result_is_a_summary_even_when_latest() -> None:
    window = ContextWindow(_opening(), Paging(None))
    window.append(_turn(1, size=9000))
    view = window.view(SCHEMAS)
    observed = _contents(view.messages)["c1"]
    assert "output" not in observed and observed["paged"]["pages"] == 3
    assert "read_result" in observed["paged"]["read_with"] and view.summarized


def test_large_and_page_sizes_follow_the_budget() -> None:
    assert (Paging(None).large_bytes, Paging(None).page_bytes) == (8192, 4096)
    assert (Paging(1000).large_bytes, Paging(1000).page_bytes) == (1000, 500)
    assert Paging(10).page_bytes == 256  # never less


def test_pages_hold_at_most_their_bytes_and_never_split_a_character() -> None:
    text = ("é€😀a" * 3000)[:9001]
    parts = pages(text, 4096)
    assert "".join(parts) == text
    assert all(0 < len(p.encode()) <= 4096 for p in parts)
    assert pages("", 4096) == [""]


def _run(**kw: Any) -> Run:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    limits = Limits(5, 60.0, 1000, 1.0, 5)
    fields: dict[str, Any] = {
        "tenant_id": "t", "id": "run_old", "agent": "a", "route": "r",
        "status": RunStatus.FINISHED, "input": "the task", "tools": ("lookup",),
        "limits": limits, "created_by": "svc", "creator_scopes": None, "root_run_id": "run_old",
        "deadline_at": now, "created_at": now, "updated_at": now,
        "termination_reason": "context_exhausted", "error": {"code": "context_exhausted"},
    }  # fmt: skip
    return Run(**{**fields, **kw})


def _call(step: int, call_id: str, tool: str, status: CallStatus, **kw: Any) -> Call:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    return Call(
        "t", f"call_{call_id}", "run_old", step, 0, call_id, tool, status, {"q": call_id},
        "h", "op", now, now, **kw,
    )  # fmt: skip


def test_a_continuation_carries_summaries_effects_and_unfinished_approvals() -> None:
    calls = [
        _call(1, "c1", "lookup", CallStatus.SUCCEEDED, output={"a": 1}, source_id="s1"),
        _call(1, "c2", "lookup", CallStatus.FAILED, error=ErrorValue("not_found", "no")),
        _call(2, "m1", "move", CallStatus.SUCCEEDED, output={}, source_id="s2", preview_id="p1"),
        _call(3, "m2", "move", CallStatus.CANCELLED, preview_id="p2"),
    ]
    carried = carry_over.build(
        run=_run(), calls=calls, new_input="the task", side_effects=lambda t: t == "move"
    )
    assert carried["continued_from"] == "run_old" and "input" not in carried
    assert carried["ended"] == {
        "termination_reason": "context_exhausted",
        "code": "context_exhausted",
    }
    assert [(r["call_id"], r["status"]) for r in carried["results"]] == [
        ("c1", "succeeded"), ("c2", "failed"), ("m1", "succeeded"), ("m2", "cancelled"),
    ]  # fmt: skip
    assert carried["results"][1]["error"] == {"code": "not_found"}
    assert [e["call_id"] for e in carried["committed"]] == ["m1"]
    assert [a["call_id"] for a in carried["awaiting_approval"]] == ["m2"]
    assert "output" not in json.dumps(carried["results"])

    other = carry_over.build(run=_run(), calls=[], new_input="another", side_effects=bool)
    assert other["input"] == "the task"


def test_a_chain_of_continuations_keeps_the_latest_summaries() -> None:
    calls = [_call(s, f"c{s}", "lookup", CallStatus.FAILED) for s in range(1, 81)]
    first = carry_over.build(run=_run(), calls=calls, new_input="the task", side_effects=bool)
    second_run = _run(id="run_next", carry_over=first)
    more = [_call(s, f"d{s}", "lookup", CallStatus.FAILED) for s in range(1, 41)]
    second = carry_over.build(run=second_run, calls=more, new_input="the task", side_effects=bool)
    ids = [r["call_id"] for r in second["results"]]
    assert len(ids) == carry_over.MAX_RESULTS and ids[-1] == "d40" and ids[0] == "c21"
    assert {r["run_id"] for r in second["results"]} == {"run_old", "run_next"}
