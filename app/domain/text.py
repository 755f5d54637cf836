"""Text Postgres can store: what it cannot (U+0000, a lone surrogate), found or removed."""

from __future__ import annotations

import re

# U+0000 fits neither text nor jsonb; a lone surrogate has no UTF-8 form at all.
UNSTORABLE_TEXT = re.compile("[\x00\ud800-\udfff]")


def unstorable_char(text: str) -> str | None:
    """What in `text` Postgres cannot store ("a NUL character", "an unpaired
    surrogate"), or None."""
    found = UNSTORABLE_TEXT.search(text)
    if found is None:
        return None
    return "a NUL character" if found.group() == "\x00" else "an unpaired surrogate"


def storable(text: str) -> str:
    """`text` without what Postgres cannot store."""
    return UNSTORABLE_TEXT.sub("", text)
