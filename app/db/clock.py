"""The database's clock, which every lease and lock expiry is compared with: replicas
whose own clocks disagree still agree on who holds what."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy import bindparam, func, literal
from sqlalchemy.sql.elements import ColumnElement
from sqlalchemy.types import Interval


@dataclass
class DbTime:
    """SQL expressions of "now" on the database's clock. `offset_s` is 0 in service;
    tests move it to make leases and locks lapse without waiting or patching code."""

    offset_s: float = 0.0

    def now(self) -> ColumnElement:
        if not self.offset_s:
            return func.now()
        return func.now() + literal(timedelta(seconds=self.offset_s), Interval())

    def after(self, seconds: float) -> ColumnElement:
        """now() + `seconds`, as a timestamptz expression."""
        return func.now() + literal(timedelta(seconds=self.offset_s + seconds), Interval())

    def interval(self, seconds: float) -> timedelta:
        """The value of a bound `now() + :interval` meaning `seconds` from now."""
        return timedelta(seconds=self.offset_s + seconds)

    @staticmethod
    def after_param(name: str) -> ColumnElement:
        """now() + a bound interval (see `interval`), for statements built once."""
        return func.now() + bindparam(name, type_=Interval())

    def advance(self, seconds: float) -> None:
        self.offset_s += seconds
