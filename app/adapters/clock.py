"""The real clock. Tests inject their own (see tests/support/fakes.py)."""

from __future__ import annotations

from datetime import UTC, datetime


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)
