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
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping
from typing import Any

import re2

error = re2.error
Pattern = Any  # re2's compiled pattern (the package ships no type hints)

#: What Python's `\s` takes in a `str` pattern, for RE2 (whose `\s` is `[\t\n\f\r ]`).
WHITE_SPACE = r"[\s\x0b\x1c-\x1f\x85\p{Z}]"

_OPTIONS = re2.Options()
#: A pattern's compiled program may use this much memory (RE2's default is 8 MiB; a DFA
#: that outgrows its share falls back to the NFA, still linear).
_OPTIONS.max_mem = 8 << 20


@functools.lru_cache(maxsize=1024)
def compile(pattern: str) -> Pattern:  # noqa: A001 - the name callers know from `re`
    """`pattern` compiled by RE2 (cached: schemas and rules repeat). Raises `error` for a
    pattern RE2 does not take (lookaround, backreferences, bad syntax)."""
    return re2.compile(pattern, _OPTIONS)


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
    return compile(pattern).search(text) is not None


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
