"""Message content on spans, only when asked for (SPEC §8), and never a secret even then.

Off by default: spans carry arguments and results as hashes and sizes only. With
`OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT` set to `true` (or the newer
`span_only` / `span_and_event`), model messages and tool arguments and results are recorded
as JSON, with every value under a secret-looking key, every secret-looking string and every
configured API key's value replaced by `[REDACTED]`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from app.domain.guardrails.sensitive import redact_secrets_text
from app.domain.patterns import WHITE_SPACE, compile

ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
_ON = frozenset({"true", "1", "yes", "span_only", "span_and_event"})
REDACTED = "[REDACTED]"

# RE2 (domain.patterns), as every pattern on a model's or a tool's text.
_SECRET_KEY = compile(
    r"(?i)pass(word|wd|phrase)?$|secret|token|api[-_]?key|authori[sz]ation|credential|cookie"
    r"|private[-_]?key|signature|^auth$|session[-_]?id"
)
_SECRET_TEXT = compile(
    rf"(?i:bearer|basic){WHITE_SPACE}+[A-Za-z0-9._~+/=-]{{8,}}"  # an Authorization header's value
    r"|\btg_[A-Za-z0-9_-]{16,}"  # a Toolgate API key
    r"|\bsk-[A-Za-z0-9_-]{16,}"  # OpenAI / Anthropic style keys
    r"|\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]+"  # a JWT
    r"|\bAKIA[0-9A-Z]{16}\b"  # an AWS access key id
    r"|\bgh[pousr]_[A-Za-z0-9]{30,}"  # a GitHub token
    # Credentials inside a URL: RE2 has no lookaround, so the `://` and `@` around them
    # are matched and put back.
    r"|(://)[^/\s\x0b\x1c-\x1f\x85\p{Z}:@]+:[^/\s\x0b\x1c-\x1f\x85\p{Z}@]+(@)"
)


_REDACTED = REDACTED.encode()


def _redacted(match: Any) -> bytes:
    before, after = match.group(1), match.group(2)
    if before is None:
        return _REDACTED
    return before + _REDACTED + after


def wants_content(environ: Mapping[str, str]) -> bool:
    return environ.get(ENV, "").strip().lower() in _ON


@dataclass(frozen=True)
class Capture:
    enabled: bool = False
    #: Exact values never to record (the model routes' API keys, read from the environment).
    known_secrets: tuple[str, ...] = ()

    @classmethod
    def from_env(
        cls, environ: Mapping[str, str] | None = None, secret_envs: Iterable[str] = ()
    ) -> Capture:
        environ = os.environ if environ is None else environ
        secrets = tuple(v for name in secret_envs if len(v := environ.get(name, "")) >= 4)
        return cls(wants_content(environ), secrets)

    def text(self, value: Any) -> str:
        """`value` as redacted JSON, for a span attribute."""
        return json.dumps(self.redact(value), ensure_ascii=False, default=str)

    def redact(self, value: Any) -> Any:
        if isinstance(value, Mapping):
            return {
                str(k): REDACTED if _SECRET_KEY.search(str(k)) else self.redact(v)
                for k, v in value.items()
            }
        if isinstance(value, list | tuple):
            return [self.redact(v) for v in value]
        if isinstance(value, str):
            for secret in self.known_secrets:
                value = value.replace(secret, REDACTED)
            # The guardrails' list too (Stripe, GitHub fine-grained, PEM keys, …): what a
            # result's redaction removes never reaches a span either.
            return redact_secrets_text(_SECRET_TEXT.sub(_redacted, value))
        return value
