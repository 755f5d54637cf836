"""Source ids given to tool results, and the check of citations in a final answer."""

from __future__ import annotations

from collections.abc import Iterable

from app.domain.patterns import compile

#: RE2, as every pattern on a model's text (domain.patterns).
_CITATION = compile(r"\[source:([A-Za-z0-9_-]+)\]")


def source_id(number: int) -> str:
    return f"s{number}"


def number_sources(next_number: int, count: int) -> list[str]:
    """Ids for `count` successful results, in proposal order, from `next_number` on."""
    return [source_id(next_number + i) for i in range(count)]


def cited_ids(text: str) -> list[str]:
    """Cited ids in order of first appearance, without repeats."""
    seen: dict[str, None] = {}
    for match in _CITATION.finditer(text):
        seen.setdefault(match.group(1).decode(), None)  # ASCII: the pattern's class
    return list(seen)


def unknown_citations(text: str, produced: Iterable[str]) -> list[str]:
    known = set(produced)
    return [sid for sid in cited_ids(text) if sid not in known]
