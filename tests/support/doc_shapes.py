"""Sample outputs as the docs show them, against real answers.

A sample is JSON where `…` (or `...`) stands for what is left out: as an object's member
(`{"id": "run_…", …}`), more members; as a list item, more items; as a whole value
(`{...}`, `[...]`, `"…"`), anything. Everything shown must be true of the real answer:

- an object without `…` has exactly the keys shown; with it, at least those;
- a list without `…` has exactly as many items; with it, at least as many (a prefix);
- numbers, booleans and `null` are equal, with the same JSON type (`3600.0` is not `3600`);
- a string is equal; or, holding `…`, it begins and ends like the real one
  (`"sha256:b66a…"`); or both are timestamps; or both are ids with the same prefix
  (`run_19733f780d78…`, shortened or not, stands for any run id); or both are SHA-256
  hex digests (a `config_hash`).
"""

from __future__ import annotations

import json
import re
from typing import Any

MORE = "…"
_TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$")
#: A SHA-256 hex digest (a config version's name): any digest.
_DIGEST = re.compile(r"^[0-9a-f]{64}$")
_ID = re.compile(r"^(?P<prefix>[a-z]+_)[0-9a-f]{8,}$")
#: An id shown shortened (`run_19733f…`, `call_…`): any id with that prefix.
_SHORT_ID = re.compile(r"^(?P<prefix>[a-z]+_)[0-9a-f]*(…|\.\.\.)$")


def parse_sample(text: str) -> Any:
    """The sample as JSON, each `…` outside a string made a marker member or item."""
    out: list[str] = []
    stack: list[str] = []
    i, in_string = 0, False
    while i < len(text):
        char = text[i]
        if in_string:
            out.append(char)
            if char == "\\":
                out.append(text[i + 1])
                i += 1
            elif char == '"':
                in_string = False
        elif text.startswith("...", i) or char == MORE:
            out.append(f'"{MORE}": true' if stack and stack[-1] == "{" else f'"{MORE}"')
            i += 3 if char == "." else 1
            continue
        else:
            out.append(char)
            in_string = char == '"'
            if char in "{[":
                stack.append(char)
            elif char in "}]" and stack:
                stack.pop()
        i += 1
    return json.loads("".join(out))


def last_json(output: str) -> Any:
    """The last JSON object or array in a command's output (which may hold several, and
    other lines)."""
    decoder = json.JSONDecoder()
    found, i = None, 0
    while i < len(output):
        if output[i] in "{[":
            try:
                found, end = decoder.raw_decode(output, i)
                i = end
                continue
            except json.JSONDecodeError:
                pass
        i += 1
    if found is None:
        raise AssertionError(f"the command printed no JSON:\n{output[-2000:]}")
    return found


def differences(sample: Any, real: Any, path: str = "$") -> list[str]:
    """Where the real answer is not what the sample shows; [] when it is."""
    if sample == MORE:
        return []
    if isinstance(sample, dict):
        return _object(sample, real, path)
    if isinstance(sample, list):
        return _list(sample, real, path)
    if isinstance(sample, str):
        return [] if _string_matches(sample, real) else [f"{path}: {real!r}, shown {sample!r}"]
    if type(sample) is not type(real) or sample != real:
        return [f"{path}: {real!r}, shown {sample!r}"]
    return []


def _object(sample: dict[str, Any], real: Any, path: str) -> list[str]:
    if not isinstance(real, dict):
        return [f"{path}: {type(real).__name__}, shown an object"]
    more = sample.get(MORE) is True
    shown = {k: v for k, v in sample.items() if k != MORE}
    found = [f"{path}.{k}: missing" for k in shown if k not in real]
    if not more and (extra := sorted(set(real) - set(shown))):
        found.append(f"{path}: keys not shown (add them, or …): {extra}")
    for key, value in shown.items():
        if key in real:
            found += differences(value, real[key], f"{path}.{key}")
    return found


def _list(sample: list[Any], real: Any, path: str) -> list[str]:
    if not isinstance(real, list):
        return [f"{path}: {type(real).__name__}, shown a list"]
    more = bool(sample) and sample[-1] == MORE
    shown = sample[:-1] if more else sample
    if len(real) < len(shown) or (not more and len(real) != len(shown)):
        return [f"{path}: {len(real)} items, shown {len(shown)}{' or more' if more else ''}"]
    found: list[str] = []
    for index, (want, got) in enumerate(zip(shown, real, strict=False)):
        found += differences(want, got, f"{path}[{index}]")
    return found


def _string_matches(sample: str, real: Any) -> bool:
    if not isinstance(real, str):
        return False
    if sample == real:
        return True
    short, got = _SHORT_ID.match(sample), _ID.match(real)
    if short and got:
        return short["prefix"] == got["prefix"]
    for more in (MORE, "..."):
        if more in sample:
            head, tail = sample.split(more, 1)
            return real.startswith(head) and real.endswith(tail.replace(more, ""))
    if _TIMESTAMP.match(sample) and _TIMESTAMP.match(real):
        return True
    if _DIGEST.match(sample) and _DIGEST.match(real):
        return True
    shown, got = _ID.match(sample), _ID.match(real)
    return bool(shown and got and shown["prefix"] == got["prefix"])
