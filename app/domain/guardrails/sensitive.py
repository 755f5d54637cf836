"""What the guardrails look for in text: secrets (redacted to `[REDACTED]`), personal data,
and the markers of a prompt injection. Pure patterns and walks over JSON values; which of
them a run applies, and where, is `app.domain.guardrails.policy`' business.

The lists are documented in docs/trust.md: a pattern added here belongs there too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from app.domain.patterns import WHITE_SPACE, Linear, Match, compile, utf8

Pattern = Linear
REDACTED = "[REDACTED]"

#: Secrets by kind. Each pattern is longer than `[REDACTED]`, so a redaction never grows
#: a result past its size bound. Every pattern here is RE2 (`app.domain.patterns`): linear
#: in the text, whatever the text.
SECRETS: tuple[tuple[str, Pattern], ...] = (
    # AWS access key ids: long-term (AKIA) and temporary (ASIA).
    ("aws_access_key_id", compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    # Stripe live secret and restricted keys.
    ("stripe_secret_key", compile(r"\b(?:sk|rk)_live_[0-9A-Za-z]{10,}")),
    # GitHub: classic personal, OAuth, user-to-server, server-to-server, refresh tokens,
    # and fine-grained personal access tokens.
    ("github_token", compile(r"\b(?:gh[pousr]_[0-9A-Za-z]{36,}|github_pat_[0-9A-Za-z_]{22,})")),
    # OpenAI keys: legacy `sk-…` and project / service-account / admin keys.
    ("openai_api_key", compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}")),
    # PEM private keys (RSA, EC, OPENSSH, encrypted, …), to their END line or, cut off,
    # to the end of the text.
    (
        "private_key",
        compile(
            r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----"
            r"(?:[\s\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----|[\s\S]*\z)"
        ),
    ),
)


def _luhn(digits: str) -> bool:
    total = 0
    for n, char in enumerate(reversed(digits)):
        d = int(char)
        if n % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


_CARD = compile(r"\b(?:\d[ -]?){12,18}\d\b")
_EMAIL = compile(r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b")
#: The numbers never issued (area 000, 666 or 9xx, group 00, serial 0000) spelled out as
#: classes, since RE2 has no lookahead (and a test of each match afterwards would cost a
#: Python call per near miss).
_SSN = compile(
    r"\b(?:00[1-9]|0[1-9]\d|[1-578]\d\d|6[0-57-9]\d|66[0-57-9])"
    r"-(?:0[1-9]|[1-9]\d)"
    r"-(?:000[1-9]|00[1-9]\d|0[1-9]\d\d|[1-9]\d{3})\b"
)


def _card(match: Match) -> bool:
    return _luhn(match.group().replace(b" ", b"").replace(b"-", b"").decode())


#: Personal data by kind: an e-mail address, a US social security number, a payment card
#: number (13 to 19 digits passing the Luhn check). Each with the test a match must pass
#: (None: every match counts).
PII: tuple[tuple[str, Pattern, Callable[[Match], bool] | None], ...] = (
    ("email", _EMAIL, None),
    ("us_ssn", _SSN, None),
    ("payment_card", _CARD, _card),
)

_S = WHITE_SPACE

#: Markers of a prompt injection in a tool's result, by name: text that tries to speak
#: with the authority of the instructions (override them, claim a role, open a chat
#: template's turn). Searched in the text's `folded` spelling (lower case, and every
#: character Python's case-insensitive matching takes for an ASCII letter spelled as that
#: letter); a match is flagged, never trusted.
INJECTION_MARKERS: tuple[tuple[str, Pattern], ...] = (
    (
        "ignore_instructions",
        compile(
            rf"\b(?:ignore|disregard|forget|override|bypass){_S}+(?:all{_S}+|any{_S}+|the{_S}+|your{_S}+)*"
            rf"(?:previous|prior|above|earlier|preceding|system|original)?{_S}*"
            r"(?:instructions|prompts?|rules|directions|guidelines)\b"
        ),
    ),
    ("new_instructions", compile(rf"\bnew{_S}+(?:system{_S}+)?instructions{_S}*:")),
    ("role_spoofing", compile(rf"(?:^|[\n\r\"{{,]){_S}*(?:system|developer|assistant){_S}*:")),
    (
        "chat_template",
        compile(
            r"<\|(?:im_start|im_end|system|start_header_id)\|>|\[/?inst\]|<</?sys>>|</?system>"
        ),
    ),
    ("role_change", compile(rf"\byou{_S}+are{_S}+now{_S}+(?:a|an|the|in)\b")),
    (
        "prompt_exfiltration",
        compile(
            rf"\b(?:reveal|print|repeat|show){_S}+(?:me{_S}+)?(?:your|the){_S}+"
            rf"(?:system{_S}+prompt|instructions|hidden{_S}+prompt)\b"
        ),
    ),
)


# -- literals a match cannot do without ----------------------------------------------------
# A pattern that opens with `\b` or an alternation is tried at every position of the text:
# 10-25 us a kilobyte each, most of a tool call's guardrail checks. A text without the
# literals a match must contain cannot match, so the search is skipped: the same answers,
# for a few `in` tests (docs/trust.md).

#: Per secret kind, groups of literals: any match contains one of every group (the
#: patterns are case-sensitive, and so is this test).
_SECRET_NEEDLES: dict[str, tuple[tuple[str, ...], ...]] = {
    "aws_access_key_id": (("AKIA", "ASIA"),),
    "stripe_secret_key": (("_live_",),),
    "github_token": (("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),),
    "openai_api_key": (("sk-",),),
    "private_key": (("-----BEGIN ",),),
}
#: Per injection marker, groups of words: any match contains one word of every group, in
#: `folded` spelling.
_MARKER_NEEDLES: dict[str, tuple[tuple[str, ...], ...]] = {
    "ignore_instructions": (
        ("ignore", "disregard", "forget", "override", "bypass"),
        ("instructions", "prompt", "rules", "directions", "guidelines"),
    ),
    "new_instructions": (("instructions",), (":",)),
    "role_spoofing": (("system", "developer", "assistant"), (":",)),
    "chat_template": (("<", "["),),
    "role_change": (("now",), ("you",)),
    "prompt_exfiltration": (("instructions", "prompt"), ("reveal", "print", "repeat", "show")),
}
#: The characters other than an ASCII letter's own cases that `re.IGNORECASE` matches with
#: it and that `str.lower` does not turn into it (found by trying every code point:
#: tests/unit/test_sensitive_needles.py). The Kelvin sign lowers to `k` on its own.
_ALSO_ASCII = str.maketrans({"\u0130": "i", "\u0131": "i", "\u017f": "s"})


def folded(text: str) -> str:
    """`text` as the markers' case-insensitive patterns see its letters: every character
    they match with an ASCII letter is that letter, in lower case."""
    return text.translate(_ALSO_ASCII).lower()


def _holds(text: str, groups: tuple[tuple[str, ...], ...]) -> bool:
    return all(any(needle in text for needle in group) for group in groups)


_SECRET_CHECKS = tuple((kind, _SECRET_NEEDLES[kind], pattern) for kind, pattern in SECRETS)


def _found(text: str, checks: tuple[tuple[str, Any, Pattern], ...]) -> list[str]:
    """The names of `checks` whose needles `text` holds and whose pattern matches it."""
    data: bytes | None = None  # encoded once, for the first pattern whose needles it holds
    found = []
    for name, needles, pattern in checks:
        if _holds(text, needles):
            data = utf8(text) if data is None else data
            if pattern.search(data):
                found.append(name)
    return found


def secrets_in(text: str) -> list[str]:
    """The kinds of secret `text` holds, in the order of `SECRETS`."""
    return _found(text, _SECRET_CHECKS)


def _holds_pii(data: bytes, pattern: Pattern, keep: Callable[[Match], bool] | None) -> bool:
    if keep is None:
        return pattern.search(data)
    return pattern.search(data) and any(keep(m) for m in pattern.finditer(data))


def pii_in(text: str) -> list[str]:
    data = utf8(text)
    return [kind for kind, pattern, keep in PII if _holds_pii(data, pattern, keep)]


_MARKER_CHECKS = tuple(
    (name, _MARKER_NEEDLES[name], pattern) for name, pattern in INJECTION_MARKERS
)


def markers_in(text: str) -> list[str]:
    return _found(folded(text), _MARKER_CHECKS)


_REDACTED = REDACTED.encode()


def _redacted(_match: Match) -> bytes:
    return _REDACTED


def redact_secrets_text(text: str) -> str:
    # The needles first: most strings hold none, and a value's strings are redacted one
    # by one (a result of 300,000 short strings).
    for _, needles, pattern in _SECRET_CHECKS:
        if _holds(text, needles):
            text = pattern.sub(_redacted, text)
    return text


def redact_pii_text(text: str) -> str:
    for _, pattern, keep in PII:
        if keep is None:
            text = pattern.sub(_redacted, text)
        else:
            text = pattern.sub(lambda m, keep=keep: _REDACTED if keep(m) else None, text)
    return text


def scrub_text(text: str) -> str:
    """`text` without its secrets and personal data."""
    return redact_pii_text(redact_secrets_text(text))


def strings_of(value: Any) -> Iterable[str]:
    """Every string of a JSON value, keys included, without recursion."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, dict):
            stack.extend(k for k in item if isinstance(k, str))
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


#: Between the strings of a value searched at once: no pattern matches across it (no
#: `\s`, word or digit run spans a NUL), and its newline lets a string's start still count
#: as a line's start, as `role_spoofing` needs.
_SEPARATOR = "\x00\n"


def found_in(value: Any, find: Callable[[str], list[str]]) -> list[str]:
    """The kinds `find` reports in any string of `value`, each once, in a stable order.
    The strings are searched as one text, each pattern once, not once a string."""
    return kinds_in(text_of(value), find)


def text_of(value: Any) -> str:
    """The strings of a JSON value as the one text `found_in` searches."""
    return value if isinstance(value, str) else _SEPARATOR.join(strings_of(value))


def kinds_in(text: str, find: Callable[[str], list[str]]) -> list[str]:
    """The kinds `find` reports in `text` (a value's `text_of`), each once, in order."""
    return sorted(set(find(text)))


def map_strings(value: Any, change: Callable[[str], str]) -> Any:
    """`value` with `change` applied to every string, keys included. JSON values from a
    tool nest at most as deep as their checks allow, so recursion is bounded."""
    if isinstance(value, str):
        return change(value)
    if isinstance(value, dict):
        return {
            (change(k) if isinstance(k, str) else k): map_strings(v, change)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [map_strings(v, change) for v in value]
    return value


def redact_value(value: Any) -> Any:
    """`value` with every secret replaced by `[REDACTED]`: what the API and the model see
    of a call's arguments (the tool itself receives them as proposed)."""
    if not any(secrets_in(text) for text in strings_of(value)):
        return value
    return map_strings(value, redact_secrets_text)
