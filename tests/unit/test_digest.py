"""The history digest (app/domain/model/digest.py) and the window that folds into it
(window.py): folding loses nothing — `decode` gives back every call's step, id, tool,
status, error code, source id and version, for random histories — a long uniform run is a
handful of rows, the builder's size is the message's, and a long run's view fits its
budget with every call id and error code in it."""

from __future__ import annotations

import json
import math
import random
from typing import Any

from app.domain.model.context import CallRecord, TurnRecord, opening_messages, turn_messages
from app.domain.model.digest import (
    DigestBuilder,
    decode,
    digest_message,
    fold_turn,
    identities,
)
from app.domain.model.paging import CHARS_PER_TOKEN, Paging
from app.domain.model.window import (
    ContextWindow,
    View,
    digest_chars,
    message_chars,
    schema_of,
    tool_chars,
)
from app.domain.tools.specs import ToolSpec

TOOL = ToolSpec("lookup", "Look a thing up.", {"type": "object", "properties": {}})
SCHEMAS = [schema_of(TOOL)]
CODES = ("not_found", "stale_data", "upstream_busy")
TOOLS = ("lookup", "search", "move")
STATUSES = ("succeeded", "succeeded", "failed", "rejected", "cancelled", "outcome_unknown")


def _decoded(message: dict[str, Any]) -> list[tuple[Any, ...]]:
    return decode(json.loads(message["content"]))


# Random histories: a pattern holds for a few steps, then another takes over.


def _ids(rng: random.Random) -> Any:
    """How a call slot's ids go from step to step."""
    base, stride = rng.randint(0, 50), rng.choice((1, 1, 2, 3, -1))
    return rng.choice(
        [
            lambda s: f"a{s}",
            lambda s: f"b{base + stride * s}" if base + stride * s >= 0 else "b0",
            lambda s: "c1",  # the same id at every step
            lambda s: f"id{s:04d}",  # leading zeros
            lambda s: f"x..x{s}",  # the range separator inside an id
            lambda s: f"z by {s}",
            lambda s: f"{s}",
            lambda s: f"r{rng.getrandbits(24):x}",  # no pattern
            lambda s: "a1..a2",  # a literal that reads like a range
            lambda s: "q" * 130 + str(s),  # too long to be a range
            lambda s: f"n{s * 10**100}",  # a stride of 101 digits
            lambda s: f'ü"\\😀{s}',  # escaped in JSON: counted as the message's JSON counts it
        ]
    )


def _slot(rng: random.Random) -> Any:
    """A call slot: its tool, status and code fixed, its ids advancing by a pattern."""
    call_id, tool, status = _ids(rng), rng.choice(TOOLS), rng.choice(STATUSES)
    source, version = rng.choice([None, _ids(rng)]), rng.choice([None, "v1", _ids(rng)])
    error = None
    if status != "succeeded" and rng.random() < 0.8:
        error = {"code": rng.choice(CODES), "message": "m"}

    def call(step: int) -> CallRecord:
        src = None if source is None or status != "succeeded" else source(step)
        ver = version(step) if callable(version) else version
        return CallRecord(call_id(step), tool, {"q": step}, status, {"n": step}, src, error,
                          source_version=ver)  # fmt: skip

    return call


def _turn(rng: random.Random, step: int, slots: list[Any], extra: bool) -> TurnRecord:
    roll = rng.random()
    if roll < 0.05:
        rejection = {"code": rng.choice(CODES), "message": "no"}
        return TurnRecord(step, "final", text="an answer", rejection=rejection)
    if roll < 0.07:
        return TurnRecord(step, "final", text="an answer")
    rejected = ()
    if extra:
        error = {"code": "duplicate_call_id", "message": "again"}
        rejected = ({"call_id": "c1", "tool": "lookup", "arguments": {}, "error": error},)
    calls = [slot(step) for slot in slots]
    return TurnRecord(step, "tool_calls", calls=calls, extra_rejections=rejected)


def _history(seed: int, steps: int) -> list[TurnRecord]:
    rng = random.Random(seed)
    turns: list[TurnRecord] = []
    slots: list[Any] = []
    extra = False
    for step in range(1, steps + 1):
        if not slots or rng.random() < 0.2:  # a new pattern: zero to three calls a step
            slots = [_slot(rng) for _ in range(rng.choice((0, 1, 1, 2, 2, 3)))]
            extra = rng.random() < 0.15
        turns.append(_turn(rng, step, slots, extra))
    return turns


def test_decoding_a_digest_gives_back_every_call_of_random_histories() -> None:
    for seed in range(16):
        turns = _history(seed, 80)
        builder = DigestBuilder()
        for k, turn in enumerate(turns, start=1):
            builder.add(fold_turn(turn))
            message = builder.message()
            # Every prefix: exact, and the size kept as turns were added is the message's.
            assert _decoded(message) == identities(turns[:k]), (seed, k)
            assert digest_chars(builder) == message_chars(message), (seed, k)
        assert json.loads(message["content"])["steps"] == "1-80"


def _uniform(steps: int, **kw: Any) -> list[TurnRecord]:
    def call(step: int) -> CallRecord:
        fields = {"source_id": f"s{step}", "source_version": "v1", **kw}
        fields = {k: v(step) if callable(v) else v for k, v in fields.items()}
        return CallRecord(f"c{step}", "lookup", {"q": step}, "succeeded", {}, **fields)

    return [TurnRecord(s, "tool_calls", calls=[call(s)]) for s in range(1, steps + 1)]


def test_a_long_uniform_run_is_one_row_per_call_slot() -> None:
    digest = json.loads(digest_message(_uniform(200))["content"])
    assert digest["rows"] == [["1-200", "c1..c200", "lookup", "succeeded", None, "s1..s200", "v1"]]
    assert digest["type"] == "history_digest" and digest["trust"] == "untrusted"
    assert digest["steps"] == "1-200" and "not instructions" in digest["notice"]

    # Source ids two apart (a second call of each step took the others): a written stride.
    turns = _uniform(200, source_id=lambda s: f"s{2 * s - 1}", source_version=lambda s: f"v{s}")
    [row] = json.loads(digest_message(turns)["content"])["rows"]
    assert row[5:] == ["s1..s399 by 2", "v1..v200"]
    assert _decoded(digest_message(turns)) == identities(turns)


def test_two_calls_a_step_with_a_failure_every_fifth_step_are_a_handful_of_rows() -> None:
    turns = []
    for s in range(1, 201):
        if s % 5 == 0:
            error = {"code": CODES[s % 3], "message": "gone"}
            calls = [CallRecord(f"f{s}", "lookup", {}, "failed", error=error)]
        else:
            calls = [
                CallRecord(f"a{s}", "lookup", {}, "succeeded", {}, f"s{2 * s - 1}"),
                CallRecord(f"b{s}", "lookup", {}, "succeeded", {}, f"s{2 * s}"),
            ]
        turns.append(TurnRecord(s, "tool_calls", calls=calls))
    rows = json.loads(digest_message(turns)["content"])["rows"]
    assert len(rows) == 40 * 3  # per five steps: two rows of four steps, one failure
    assert rows[:3] == [
        ["1-4", "a1..a4", "lookup", "succeeded", None, "s1..s7 by 2", None],
        ["1-4", "b1..b4", "lookup", "succeeded", None, "s2..s8 by 2", None],
        [5, "f5", "lookup", "failed", "upstream_busy", None, None],
    ]
    assert _decoded(digest_message(turns)) == identities(turns)


def test_rejections_cancellations_and_approvals_are_kept() -> None:
    approval = {"code": "rejected_by_approver", "retryable": False, "message": "not this ring"}
    duplicate = {"code": "duplicate_call_id", "message": "again"}
    turns = [
        TurnRecord(
            1,
            "tool_calls",
            calls=[
                CallRecord(
                    "m1", "move", {"ring": "adopt"}, "rejected", error=approval, preview_id="prv_1"
                ),
                CallRecord("x1", "lookup", {}, "cancelled"),  # no error: its status is it
            ],  # fmt: skip
            extra_rejections=[
                {"call_id": "m1", "tool": "move", "arguments": {}, "error": duplicate}
            ],
        ),
        TurnRecord(2, "final", text="t" * 900, rejection={"code": "citations", "message": "no"}),
    ]
    digest = json.loads(digest_message(turns)["content"])
    assert digest["rows"] == [
        [1, "m1", "move", "rejected", "rejected_by_approver", None, None],
        [1, "x1", "lookup", "cancelled", "cancelled", None, None],
        [1, "m1", "move", "rejected", "duplicate_call_id", None, None],
        [2, None, None, "final_rejected", "citations", None, None],
    ]
    # Approval state is never trimmed: the approver's reason, the preview, the arguments.
    assert digest["approvals"] == [
        {"step": 1, "call_id": "m1", "error": approval, "preview_id": "prv_1",
         "arguments": {"ring": "adopt"}},
    ]  # fmt: skip
    assert decode(digest) == identities(turns)


def test_a_literal_that_reads_like_a_range_stays_a_literal() -> None:
    turns = _uniform(3, source_id="s1..s3", source_version="v7..v9")
    rows = json.loads(digest_message(turns)["content"])["rows"]
    assert rows == [["1-3", "c1..c3", "lookup", "succeeded", None, ["s1..s3"], ["v7..v9"]]]
    assert _decoded(digest_message(turns)) == identities(turns)


# The window: folding the oldest compact turns when even they do not fit.


def _lookup(step: int) -> TurnRecord:
    """About 3 KB of result; every fourth step fails with a code instead."""
    if step % 4 == 0:
        error = {"code": CODES[step % 3], "retryable": False, "message": "m" * 200}
        call = CallRecord(f"f{step}", "lookup", {"q": step}, "failed", error=error)
    else:
        output = {"rows": [f"row {i} of step {step}: " + "x" * 40 for i in range(55)]}
        call = CallRecord(f"c{step}", "lookup", {"q": step}, "succeeded", output, f"s{step}",
                          source_version=f"v{step}")  # fmt: skip
    return TurnRecord(step, "tool_calls", calls=[call])


def _window(budget: int) -> ContextWindow:
    return ContextWindow(
        opening_messages(instructions="Be brief.", user_input="Go."), Paging(budget)
    )


def _long_run(budget: int, steps: int) -> tuple[ContextWindow, list[TurnRecord]]:
    window = _window(budget)
    turns = [_lookup(s) for s in range(1, steps + 1)]
    for turn in turns:
        window.append(turn)
    return window, turns


def _named(view: View) -> list[tuple[int, str, str | None]]:
    """(step, call id, error code) of every call the view names: in its digest, as rows;
    in its turns, as observations."""
    named = []
    for message in view.messages[2:]:  # after the instructions and the input
        if message["role"] not in {"user", "tool"}:
            continue
        content = json.loads(message["content"])
        if content["type"] == "history_digest":
            named += [(s, call_id, code) for s, call_id, _, _, code, _, _ in decode(content)]
        else:
            code = (content.get("error") or {}).get("code")
            named.append((content.get("step", 0), content["call_id"], code))
    return named


def _estimate(view: View) -> int:
    chars = 2 + sum(message_chars(m) for m in view.messages) + tool_chars(SCHEMAS)
    return math.ceil(chars / CHARS_PER_TOKEN)


def test_long_runs_fit_their_budget_with_every_call_id_and_error_code() -> None:
    for budget, steps in ((6000, 60), (8000, 200)):
        window, turns = _long_run(budget, steps)
        view = window.view(SCHEMAS)
        assert view.fits and view.summarized and view.tokens <= budget
        assert view.tokens == _estimate(view)
        digest = json.loads(view.messages[2]["content"])
        assert digest["type"] == "history_digest"
        assert len(digest["rows"]) < steps / 2  # a row per failure, one per run between
        expected = [
            (t.step, c.call_id, (c.error or {}).get("code")) for t in turns for c in t.calls
        ]
        named = _named(view)
        # The latest observation is whole (no step of its own): every other by its step.
        assert [n[1:] for n in named] == [e[1:] for e in expected]
        assert [n[0] for n in named[:-1]] == [e[0] for e in expected[:-1]]
        latest = json.loads(view.messages[-1]["content"])
        assert latest["type"] == "tool_result" and latest["call_id"] == turns[-1].calls[0].call_id


def test_every_step_of_a_long_run_fits_and_folds_only_what_it_must() -> None:
    budget = 6000
    window = _window(budget)
    paging = window.paging
    folds = []
    for step in range(1, 61):
        turn = _lookup(step)
        window.append(turn)
        view = window.view(SCHEMAS)
        assert view.fits and view.tokens <= budget and view.tokens == _estimate(view), step
        if view.messages[2]["role"] != "user":
            continue
        folded = len({s for s, *_ in _named_digest(view)})
        folds.append(folded)
        # One turn fewer in the digest (that turn compact instead) would not fit.
        fewer = [_lookup(s) for s in range(1, folded)]
        one_less = [*view.messages[:2], *([digest_message(fewer)] if fewer else [])]
        one_less += turn_messages(_lookup(folded), paging, compact=True)
        one_less += view.messages[3:]
        chars = 2 + sum(message_chars(m) for m in one_less) + tool_chars(SCHEMAS)
        assert math.ceil(chars / CHARS_PER_TOKEN) > budget, step
    assert len(folds) > 20 and folds[-1] >= 10  # from the first step that must fold on


def _named_digest(view: View) -> list[tuple[Any, ...]]:
    return _decoded(view.messages[2])


def test_a_run_ends_only_when_even_a_digest_of_every_older_turn_does_not_fit() -> None:
    budget = 1200
    window = _window(budget)
    rng = random.Random(7)
    views, turns = [], []
    for step in range(1, 400):
        call_id = f"k{rng.getrandbits(40):x}"  # no pattern: a row per step
        output = {"text": "x" * 600}
        call = CallRecord(call_id, "lookup", {"q": step}, "succeeded", output, f"s{step}")
        turns.append(TurnRecord(step, "tool_calls", calls=[call]))
        window.append(turns[-1])
        views.append(window.view(SCHEMAS))
        if not views[-1].fits:
            break
    last, before = views[-1], views[-2]
    assert not last.fits and last.messages == [] and last.tokens > budget
    assert before.fits and _named_digest(before)[0][0] == 1 and len(views) > 10
    # What it needs: the opening, a digest of every older turn and the latest whole.
    least = [*window.opening, digest_message(turns[:-1]), *turn_messages(turns[-1], Paging(budget))]
    chars = 2 + sum(message_chars(m) for m in least) + tool_chars(SCHEMAS)
    assert last.tokens == math.ceil(chars / CHARS_PER_TOKEN)


def test_a_tool_name_or_code_that_reads_like_a_range_is_kept_as_it_is() -> None:
    def turn(step: int) -> TurnRecord:
        error = {"code": "e1..e3"}
        failed = CallRecord(f"c{step}", "t1..t3", {}, "failed", error=error)
        return TurnRecord(step, "tool_calls", calls=(failed,))

    turns = [turn(step) for step in range(1, 4)]
    builder = DigestBuilder()
    for t in turns:
        builder.add(fold_turn(t))
    message = builder.message()
    assert _decoded(message) == identities(turns)
    assert [r[2] for r in json.loads(message["content"])["rows"]] == [["t1..t3"]]
    assert digest_chars(builder) == message_chars(message)
