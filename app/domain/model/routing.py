"""Model routing (SPEC §4, router routes): a deterministic policy narrows the candidates,
then a chooser picks among what is left, and anything outside that set falls back to the
route's default. Clients never name a model; the chosen route and why are recorded."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from app.domain import patterns
from app.domain.errors import ToolgateError


@dataclass(frozen=True)
class Candidate:
    name: str
    tags: frozenset[str]
    #: Empty: the route declares none, and is taken to have all.
    capabilities: frozenset[str]


@dataclass(frozen=True)
class Routed:
    route: str
    reason: str


class NoRoute(ToolgateError):
    """No candidate meets the policy: the run cannot go on here."""


def missing_tags(route_tags: frozenset[str], data_policy: frozenset[str]) -> list[str]:
    """The data-policy tags a route lacks: any one keeps the run's data from it."""
    return sorted(data_policy - route_tags)


def allowed(
    candidates: Iterable[Candidate], *, data_policy: frozenset[str], needs: frozenset[str]
) -> list[str]:
    """The candidates that carry every data-policy tag and have what the agent needs."""
    return [
        c.name
        for c in candidates
        if data_policy <= c.tags and (not c.capabilities or needs <= c.capabilities)
    ]


def by_rules(rules: Sequence[tuple[str, str]], text: str) -> str | None:
    """The route of the first rule whose pattern matches the input."""
    for pattern, use in rules:
        if patterns.search(pattern, text):  # RE2: the input is the caller's text
            return use
    return None


def settle(
    picked: str | None,
    allowed_routes: Sequence[str],
    default: str,
    how: str,
    why_none: str = "no pick",
) -> Routed:
    """The pick when the policy allows it; else the default (or, when the policy rules the
    default out too, the first allowed candidate). `why_none`: why there is no pick."""
    if not allowed_routes:
        raise NoRoute()
    if picked is not None and picked in allowed_routes:
        return Routed(picked, f"{how}: {picked}")
    why = why_none if picked is None else f"{picked} is outside the allowed set"
    if default in allowed_routes:
        return Routed(default, f"{how}: {why}; the default {default}")
    return Routed(allowed_routes[0], f"{how}: {why}; the default is not allowed either")
