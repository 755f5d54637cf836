"""A tenant's quotas (SPEC §4): runs created per minute and the cost of a day's runs, off
unless configured. What they refuse, and for how long, is decided here; what they count
is `db.limits.quotas`'s."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta

from app.domain.errors import DomainError, ErrorCode


@dataclass(frozen=True)
class Quotas:
    runs_per_minute: int | None = None
    daily_cost_usd: float | None = None

    @property
    def any(self) -> bool:
        return self.runs_per_minute is not None or self.daily_cost_usd is not None


def day_start(now: datetime) -> datetime:
    """The start of `now`'s UTC day: a day's cost counts the runs created since."""
    return now.replace(hour=0, minute=0, second=0, microsecond=0)


def until_tomorrow(now: datetime) -> float:
    return (day_start(now) + timedelta(days=1) - now).total_seconds()


def exceeded(what: str, retry_after_s: float) -> DomainError:
    """The refusal: `429 quota-exceeded` with `Retry-After` (whole seconds, at least 1)."""
    return DomainError(
        ErrorCode.QUOTA_EXCEEDED,
        f"the tenant's {what} quota is used up; try again later",
        retry_after_s=max(1, math.ceil(retry_after_s)),
    )


def over_daily_cost(quotas: Quotas, spent_usd: float) -> bool:
    return quotas.daily_cost_usd is not None and spent_usd >= quotas.daily_cost_usd
