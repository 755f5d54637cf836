"""The executor's retry decision: which tool errors are retried, which end the run."""

from __future__ import annotations

import pytest

from app.domain.tools.retry import backoff_s, ends_run, may_retry
from app.domain.tools.specs import ToolError, ToolSpec

SCHEMA = {"type": "object"}
READ_ONLY = ToolSpec(name="read", description="reads", input_schema=SCHEMA)
IDEMPOTENT_WRITE = ToolSpec(
    name="put", description="writes once", input_schema=SCHEMA, side_effects=True, idempotent=True
)
PLAIN_WRITE = ToolSpec(name="send", description="sends", input_schema=SCHEMA, side_effects=True)

RETRYABLE = ToolError("unavailable", "try later", retryable=True)
PERMANENT = ToolError("not_found", "no such thing")
FATAL = ToolError("broken", "gave up", fatal=True)
RETRYABLE_FATAL = ToolError("weird", "both", retryable=True, fatal=True)


# --- backoff_s --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("attempts", "ceiling"),
    [(0, 0.1), (1, 0.1), (2, 0.2), (3, 0.4), (4, 0.8), (6, 3.2), (7, 5.0), (30, 5.0)],
)
def test_backoff_doubles_up_to_the_cap(attempts: int, ceiling: float) -> None:
    assert backoff_s(attempts, jitter=1.0) == pytest.approx(ceiling)
    assert backoff_s(attempts, jitter=0.0) == pytest.approx(ceiling / 2)


def test_backoff_jitter_scales_between_half_and_full_ceiling() -> None:
    assert backoff_s(3, jitter=0.5) == pytest.approx(0.4 * 0.75)


def test_backoff_custom_base_and_cap() -> None:
    assert backoff_s(3, base=1.0, cap=10.0, jitter=1.0) == pytest.approx(4.0)
    assert backoff_s(5, base=1.0, cap=10.0, jitter=1.0) == pytest.approx(10.0)
    assert backoff_s(5, base=1.0, cap=10.0, jitter=0.0) == pytest.approx(5.0)


def test_random_backoff_stays_within_bounds() -> None:
    for _ in range(200):
        assert 0.2 <= backoff_s(3) <= 0.4


# --- may_retry --------------------------------------------------------------------------


@pytest.mark.parametrize("spec", [READ_ONLY, IDEMPOTENT_WRITE], ids=["read_only", "idempotent"])
def test_retryable_error_of_retry_safe_tool_is_retried(spec: ToolSpec) -> None:
    assert may_retry(spec, RETRYABLE, attempts=1, seconds_left=60.0)


def test_side_effect_without_idempotency_is_never_retried() -> None:
    assert not may_retry(PLAIN_WRITE, RETRYABLE, attempts=1, seconds_left=60.0)


@pytest.mark.parametrize("error", [PERMANENT, FATAL, RETRYABLE_FATAL])
def test_non_retryable_or_fatal_error_is_not_retried(error: ToolError) -> None:
    assert not may_retry(READ_ONLY, error, attempts=1, seconds_left=60.0)


def test_retries_stop_at_max_attempts() -> None:
    spec = ToolSpec(name="read", description="reads", input_schema=SCHEMA, max_attempts=3)
    assert may_retry(spec, RETRYABLE, attempts=2, seconds_left=60.0)
    assert not may_retry(spec, RETRYABLE, attempts=3, seconds_left=60.0)
    assert not may_retry(spec, RETRYABLE, attempts=4, seconds_left=60.0)


def test_single_attempt_tool_is_never_retried() -> None:
    spec = ToolSpec(name="read", description="reads", input_schema=SCHEMA, max_attempts=1)
    assert not may_retry(spec, RETRYABLE, attempts=1, seconds_left=60.0)


def test_no_retry_when_the_deadline_leaves_no_time_for_the_backoff() -> None:
    # After 3 attempts the longest backoff (full jitter) is 0.4 s: the pause must fit.
    spec = ToolSpec(name="read", description="reads", input_schema=SCHEMA, max_attempts=5)
    assert may_retry(spec, RETRYABLE, attempts=3, seconds_left=0.41)
    assert not may_retry(spec, RETRYABLE, attempts=3, seconds_left=0.4)
    assert not may_retry(spec, RETRYABLE, attempts=3, seconds_left=0.0)


# --- ends_run ---------------------------------------------------------------------------


@pytest.mark.parametrize("spec", [READ_ONLY, IDEMPOTENT_WRITE, PLAIN_WRITE])
def test_fatal_error_ends_the_run(spec: ToolSpec) -> None:
    assert ends_run(spec, FATAL)
    assert ends_run(spec, RETRYABLE_FATAL)


@pytest.mark.parametrize("spec", [READ_ONLY, IDEMPOTENT_WRITE, PLAIN_WRITE])
def test_retryable_error_that_is_no_longer_retried_ends_the_run(spec: ToolSpec) -> None:
    # Asked only once may_retry said no: retries exhausted, or not safe to resend.
    assert ends_run(spec, RETRYABLE)


@pytest.mark.parametrize("spec", [READ_ONLY, IDEMPOTENT_WRITE, PLAIN_WRITE])
def test_permanent_error_goes_back_to_the_model(spec: ToolSpec) -> None:
    assert not ends_run(spec, PERMANENT)


def test_tool_error_text() -> None:
    assert str(PERMANENT) == "not_found: no such thing"
