"""Plain keyword-argument factories for test data."""

from __future__ import annotations

from typing import Any

from app.adapters.tools.builtin.demo_data import seed


def tool_calls(
    *calls: tuple[str, str, Any], usage: tuple[int, int] = (0, 0), delay_ms: int = 0
) -> dict[str, Any]:
    return {
        "type": "tool_calls",
        "calls": [{"id": cid, "name": name, "arguments": args} for cid, name, args in calls],
        "usage": {"input_tokens": usage[0], "output_tokens": usage[1]},
        "delay_ms": delay_ms,
    }


def final(text: str, *, usage: tuple[int, int] = (0, 0), delay_ms: int = 0) -> dict[str, Any]:
    return {
        "type": "final",
        "text": text,
        "delay_ms": delay_ms,
        "usage": {"input_tokens": usage[0], "output_tokens": usage[1]},
    }


def error(code: str, *, retryable: bool, delay_ms: int = 0) -> dict[str, Any]:
    return {"type": "error", "code": code, "retryable": retryable, "delay_ms": delay_ms}


def run_body(
    *script: dict[str, Any], agent: str = "tech-radar", wait_s: float = 10, **fields: Any
) -> dict[str, Any]:
    return {
        "agent": agent,
        "input": "Which databases are in adopt?",
        "script": list(script),
        "wait_s": wait_s,
        **fields,
    }


async def seed_radar(harness: Any, tenant: str = "acme") -> None:
    async with harness.runtime.sessions.begin() as session:
        await seed(session, tenant_id=tenant, now=harness.runtime.clock.now())


def search_rounds(n: int) -> list[dict[str, Any]]:
    """A script of `n` rounds that each search the radar, then a final answer citing it."""
    search = ("c1", "search_technologies", {"query": "database"})
    return [*(tool_calls(search, usage=(100, 10)) for _ in range(n)), final("done [source:s1]")]
