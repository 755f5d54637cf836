"""Regular expressions that run on untrusted text: RE2, whose matching takes time linear in
the text whatever the pattern (no backtracking), and releases the GIL while it matches.

Every pattern applied to what a model, a tool, a server or a caller wrote goes through
here: the guardrails' secret, personal-data and injection patterns, citation parsing,
a JSON Schema's `pattern` and `patternProperties` on tool arguments, outputs and typed
answers, and a router's `if_input_matches` rules. Python's `re` backtracks: a pattern with
adjacent or nested quantifiers takes time quadratic (or worse) in a hostile text, and holds
the GIL and the event loop the whole while (docs/trust.md, "No text can stall a process").

RE2 has no lookaround and no backreferences; a pattern that uses them is refused where it
is declared (a config error, or an MCP declaration held), never run by another engine. Its
`\\b`, `\\d`, `\\w` and `\\s` are ASCII: where a pattern must see Unicode white space it
spells it (`WHITE_SPACE`).

Matching is done on the text's UTF-8 bytes, encoded once by the caller where several
patterns search one text: RE2's wrapper would encode a `str` on every call and turn every
match's byte offsets back into character offsets (most of the time of a text dense with
matches), and it refuses a lone surrogate, which JSON can carry (`"\\ud800"`); encoded
with `surrogatepass`, such a character is a few bytes no pattern matches.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import re2

error = re2.error
Match = Any  # an RE2 match over bytes: `group()`, `groups()`, `span()` are of the bytes

#: What Python's `\s` takes in a `str` pattern, for RE2 (whose `\s` is `[\t\n\f\r ]`).
WHITE_SPACE = r"[\s\x0b\x1c-\x1f\x85\p{Z}]"


#: The memory one compiled pattern may use, its program and its DFA's cache together. A
#: pattern whose program needs more is refused (`pattern too large`): a declared pattern
#: such as `[<64 CJK characters>]{999}` would otherwise take tens of milliseconds to
#: compile and most of a megabyte to keep. A DFA that outgrows its share falls back to
#: the NFA, slower but still linear.
MAX_MEM = 1 << 20


def _options(*, captures: bool) -> Any:
    options = re2.Options()
    options.max_mem = MAX_MEM
    # A search that only asks whether there is a match runs RE2's DFA alone; asking for
    # groups makes it run a slower engine over the match (45x on `^(.*a){12}$`).
    options.never_capture = not captures
    # RE2 would write a refused pattern to standard error as it is: a declared pattern
    # with newlines could forge log lines. The refusal is reported where it is declared.
    options.log_errors = False
    return options


_CAPTURING, _TESTING = _options(captures=True), _options(captures=False)


def utf8(text: str) -> bytes:
    """`text` as the patterns here search it."""
    return text.encode("utf-8", "surrogatepass")


def _text(data: bytes) -> str:
    return data.decode("utf-8", "surrogatepass")


class Linear:
    """One pattern, compiled by RE2 for existence tests (no groups: the fastest engine)
    and, when first asked for, for matches with their groups."""

    __slots__ = ("_found", "_test", "pattern")

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self._test = re2.compile(utf8(pattern), _TESTING)  # raises `error` for what RE2 refuses
        self._found: Any = None

    def search(self, text: str | bytes) -> bool:
        """Whether `text` (or its `utf8`) holds a match."""
        data = utf8(text) if isinstance(text, str) else text
        return self._test.search(data) is not None

    def finditer(self, text: str | bytes) -> Iterator[Match]:
        """Every match, leftmost first, over the text's UTF-8 bytes."""
        if self._found is None:
            self._found = re2.compile(utf8(self.pattern), _CAPTURING)
        data = utf8(text) if isinstance(text, str) else text
        return self._found.finditer(data)

    def sub(self, replace: Callable[[Match], bytes | None], text: str) -> str:
        """`text` with each match replaced by what `replace` makes of it (None: kept),
        joined once however many matches there are."""
        data = utf8(text)
        pieces: list[bytes] = []
        last = 0
        for match in self.finditer(data):
            made = replace(match)
            if made is None:
                continue
            start, end = match.span()
            pieces += (data[last:start], made)
            last = end
        if not pieces:
            return text
        pieces.append(data[last:])
        return _text(b"".join(pieces))


@functools.lru_cache(maxsize=256)
def compile(pattern: str) -> Linear:  # noqa: A001 - the name callers know from `re`
    """`pattern` compiled by RE2 (cached: schemas and rules repeat). Raises `error` for a
    pattern RE2 does not take (lookaround, backreferences, bad syntax)."""
    return Linear(pattern)


def problem(pattern: str) -> str | None:
    """Why `pattern` cannot be used on untrusted text, or None when it can."""
    try:
        compile(pattern)
    except error as exc:
        return (
            f"not a pattern this service runs (RE2 syntax, no lookaround or backreferences): {exc}"
        )
    return None


def search(pattern: str, text: str) -> bool:
    return compile(pattern).search(text)


def schema_patterns(schema: Any) -> Iterator[tuple[str, str]]:
    """Every regular expression a JSON Schema holds, with a pointer-like path to it: the
    values of `pattern` and the keys of `patternProperties`, at any depth (without
    recursion: a server's schema may nest deeply)."""
    stack: list[tuple[str, Any]] = [("", schema)]
    while stack:
        path, node = stack.pop()
        if isinstance(node, list):
            stack.extend((f"{path}/{i}", item) for i, item in enumerate(node))
            continue
        if not isinstance(node, Mapping):
            continue
        for key, value in node.items():
            where = f"{path}/{key}"
            if key == "pattern" and isinstance(value, str):
                yield where, value
            elif key == "patternProperties" and isinstance(value, Mapping):
                yield from ((f"{where}/{k}", k) for k in value if isinstance(k, str))
            if isinstance(value, Mapping | list):
                stack.append((where, value))


def schema_problem(schema: Any) -> str | None:
    """Why a JSON Schema's patterns cannot be checked here, naming the first, or None."""
    for where, pattern in schema_patterns(schema):
        why = problem(pattern)
        if why is not None:
            return f"{where or '/'}: {why}"
    return None
