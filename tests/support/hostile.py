"""Hostile values for each place a request carries one, as they travel on the wire: path
and query values already percent-encoded, header values as bytes, JSON numbers as raw
tokens (`1e400` has no Python spelling that json.dumps would write)."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import Any

#: A valid UTF-8 string with NUL, a lone high and a lone low surrogate (as JSON escapes).
TEXTS: list[str] = ["\x00", "a\x00b", "\ud800", "x\udfff"]

#: The same, percent-encoded as UTF-8 (the surrogates as the bytes UTF-8 would give them).
ENCODED: list[str] = ["%00", "a%00b", "%ED%A0%80", "x%ED%BF%BF", "%C0%80"]

PATH_VALUES: list[str] = [*ENCODED, "..%2f..%2fetc%2fpasswd", "%2e%2e", "a" * 5000]

INTEGERS: list[str] = [
    "99999999999999999999",
    "-1",
    "1e400",
    "NaN",
    "1.5",
    "0x10",
    "%C2%B2",  # ² (a digit to str.isdigit, not to int)
    "%D9%A1%D9%A2",  # ١٢ (Arabic-Indic digits, which int() would take)
    "9" * 5000,
]


def cursor_of(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def nested(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


#: Opaque cursors that this service never gave out, each at most 500 characters.
CURSORS: list[str] = [
    "!!!not base64!!!",
    cursor_of(nested(180)),
    cursor_of(b"\xff\xfe\xfd"),
    *(
        cursor_of(json.dumps(value).encode())
        for value in [
            {"a": 1},
            "\x00",
            None,
            [],
            [1, 2, 3],
            [-1, "", 0],
            [10**30, "run_x", 1],
            ["2024-01-01T00:00:00+00:00", "\x00"],
            ["2024-01-01T00:00:00+00:00", "\ud800"],
            ["0001-01-01T00:00:00+14:00", "run_x"],
            ["9999-12-31T23:59:59-14:00", "run_x"],
            ["2024-01-01T00:00:00", "run_x"],
            [1, "\x00", 1],
            [1, "\udfff", 1],
        ]
    ),
    cursor_of(b"[1e400]"),
    "c" * 501,
]

#: Header values, as bytes on the wire.
HEADER_TEXTS: list[bytes] = [b"\x00", b"a\x00b", b"\xed\xa0\x80", b"x\xed\xbf\xbf", b"a\x01b"]

#: Last-Event-ID values that are not an id this service gave out.
EVENT_IDS: list[bytes] = [
    "²".encode("latin-1"),
    "²".encode(),
    "١٢".encode(),
    b"+5",
    b" 5",
    b"5 ",
    b"-1",
    b"1e3",
    b"9" * 30,
    b"9" * 5000,
    cursor_of(nested(20_000)).encode(),
    *(c.encode() for c in CURSORS),
    *HEADER_TEXTS,
]

#: JSON number tokens no numeric field may take.
NUMBERS: list[str] = ["1e400", "-1e400", "-1", "1" + "0" * 30, "NaN", "9" * 5000]

#: Whole bodies that are not JSON a request may carry.
RAW_BODIES: list[bytes] = [
    b'{"x": "\xed\xa0\x80"}',
    b'{"x": "\x00"}',
    b"\xff\xfe",
    nested(100_000),
    b'{"x": 1e400',
]

_RAW = "\x1e{}\x1e"  # a placeholder that json.dumps writes as a string, then replaced


def body_variants(body: dict[str, Any]) -> Iterator[tuple[str, bytes]]:
    """(what, raw JSON) for each hostile value at each leaf of a valid body: strings get
    TEXTS and a deeply nested value, numbers get NUMBERS, objects get hostile keys."""
    for where, replacement in _mutations(body, ""):
        yield where.lstrip("."), _dump(replacement)


def _mutations(node: Any, where: str) -> Iterator[tuple[str, Any]]:
    if isinstance(node, bool):
        return
    if isinstance(node, str):
        for text in [*TEXTS, _RAW.format(nested(400).decode())]:
            yield f"{where}={text[:20]!r}", text
    elif isinstance(node, int | float):
        for number in NUMBERS:
            yield f"{where}={number[:20]}", _RAW.format(number)
    elif isinstance(node, dict):
        for text in TEXTS:
            yield f"{where}.{text!r}", {**node, text: "x"}
        for key, child in node.items():
            for at, value in _mutations(child, f"{where}.{key}"):
                yield at, {**node, key: value}
    elif isinstance(node, list):
        for i, child in enumerate(node):
            for at, value in _mutations(child, f"{where}.{i}"):
                yield at, [*node[:i], value, *node[i + 1 :]]


def _dump(value: Any) -> bytes:
    text = json.dumps(value)  # ASCII: NUL and surrogates as \u escapes, as a client sends
    while '"\\u001e' in text:
        start = text.index('"\\u001e')
        end = text.index('\\u001e"', start + 7)
        text = text[:start] + text[start + 7 : end] + text[end + 7 :]
    return text.encode()
