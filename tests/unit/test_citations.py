"""Source ids for tool results and the citation check of final answers."""

from __future__ import annotations

import pytest

from app.domain.model.citations import cited_ids, number_sources, source_id, unknown_citations


def test_source_id_format() -> None:
    assert source_id(1) == "s1"
    assert source_id(42) == "s42"


def test_number_sources_continues_from_the_next_number() -> None:
    assert number_sources(1, 3) == ["s1", "s2", "s3"]
    assert number_sources(4, 2) == ["s4", "s5"]


def test_number_sources_of_nothing_is_empty() -> None:
    assert number_sources(7, 0) == []


def test_number_sources_turn_by_turn_never_repeats() -> None:
    first = number_sources(1, 2)
    second = number_sources(1 + len(first), 3)
    assert first + second == ["s1", "s2", "s3", "s4", "s5"]


def test_cited_ids_in_order_of_first_appearance() -> None:
    text = "B [source:s2] then A [source:s1] and C [source:s10]."
    assert cited_ids(text) == ["s2", "s1", "s10"]


def test_cited_ids_without_repeats() -> None:
    text = "[source:s3] x [source:s1] y [source:s3] z [source:s1][source:s2]"
    assert cited_ids(text) == ["s3", "s1", "s2"]


def test_cited_ids_of_text_without_citations() -> None:
    assert cited_ids("") == []
    assert cited_ids("plain answer, see s1 and [s2] and (source:s3)") == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[source:abc_DEF-9]", ["abc_DEF-9"]),
        ("[source:]", []),
        ("[source: s1]", []),
        ("[source:s1 ]", []),
        ("[Source:s1]", []),
        ("[source:s1.2]", []),
        ("[[source:s1]]", ["s1"]),
    ],
)
def test_cited_ids_syntax(text: str, expected: list[str]) -> None:
    assert cited_ids(text) == expected


def test_unknown_citations_are_those_never_produced() -> None:
    text = "[source:s1] [source:s9] [source:s2] [source:s7] [source:s9]"
    assert unknown_citations(text, ["s1", "s2", "s3"]) == ["s9", "s7"]


def test_no_unknown_citations_when_all_were_produced() -> None:
    assert unknown_citations("[source:s1][source:s2]", {"s1", "s2"}) == []


def test_no_citations_is_never_unknown() -> None:
    assert unknown_citations("an answer", []) == []


def test_every_citation_is_unknown_before_any_source() -> None:
    assert unknown_citations("[source:s1]", []) == ["s1"]


def test_unknown_citations_accepts_a_one_shot_iterable() -> None:
    produced = (sid for sid in ["s1", "s2"])
    assert unknown_citations("[source:s2][source:s3][source:s1]", produced) == ["s3"]
