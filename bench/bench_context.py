"""What a long run's model input costs to build, step by step, under a context budget: the
time of `ContextWindow.append` + `view` at each step (the CPU a step spends on its input),
and what the last view holds — whole, compact and folded turns, the digest's rows, its
tokens against the budget.

One search a step (a result of about 1 KiB), a failure every seventh step; call ids either
as providers make them (random, nothing to fold into a range) or sequential (`c1, c2, …`:
consecutive steps share a digest row). Pure Python, no database: `make bench-context`.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import string
import time

from app.domain.model.context import CallRecord, TurnRecord, opening_messages
from app.domain.model.paging import Paging
from app.domain.model.window import ContextWindow

SCHEMAS = [
    {
        "name": "lookup",
        "description": "Look a thing up.",
        "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
    }
]


def turn(step: int, call_id: str, rng: random.Random) -> TurnRecord:
    if step % 7 == 0:
        error = {"code": rng.choice(["not_found", "stale_data", "upstream_busy"])}
        call = CallRecord(call_id, "lookup", {"q": f"q{step}"}, "failed", error=error)
    else:
        hits = [{"id": f"t{step}-{i}", "text": "w" * 90} for i in range(9)]
        call = CallRecord(
            call_id,
            "lookup",
            {"q": f"q{step}"},
            "succeeded",
            output={"query": f"q{step}", "hits": hits},
            source_id=f"s{step}",
            source_version=f"W/{rng.getrandbits(32):x}",
        )
    return TurnRecord(step, "tool_calls", calls=(call,))


def trial(steps: int, budget: int, ids: str) -> dict[str, object]:
    rng = random.Random(steps * budget)
    opening = opening_messages(instructions="Answer about the radar.", user_input="Which?")
    window = ContextWindow(opening, Paging(budget))
    times: list[float] = []
    view = None
    for step in range(1, steps + 1):
        if ids == "random":
            call_id = "call_" + "".join(rng.choices(string.ascii_letters + string.digits, k=24))
        else:
            call_id = f"c{step}"
        started = time.perf_counter()
        window.append(turn(step, call_id, rng))
        view = window.view(SCHEMAS)
        times.append(time.perf_counter() - started)
        if not view.fits:
            break
    assert view is not None
    digest = [m for m in view.messages if '"history_digest"' in str(m.get("content"))]
    rows = len(json.loads(digest[0]["content"])["rows"]) if digest else 0
    return {
        "steps": len(times),
        "fits": view.fits,
        "tokens": view.tokens,
        "rows": rows,
        "mean_ms": statistics.fmean(times) * 1000,
        "max_ms": max(times) * 1000,
        "total_ms": sum(times) * 1000,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="the two targets only")
    args = parser.parse_args()
    cases = [(60, 6000), (200, 8000)] if args.quick else [(60, 6000), (200, 8000), (1000, 8000)]
    print(
        f"{'ids':<10} {'steps':>6} {'budget':>7} {'fits':>5} {'tokens':>7} {'rows':>5} "
        f"{'mean ms':>8} {'max ms':>7} {'all ms':>8}"
    )
    for ids in ("random", "sequential"):
        for steps, budget in cases:
            r = trial(steps, budget, ids)
            print(
                f"{ids:<10} {r['steps']:>6} {budget:>7} {r['fits']!s:>5} {r['tokens']:>7} "
                f"{r['rows']:>5} {r['mean_ms']:>8.2f} {r['max_ms']:>7.2f} {r['total_ms']:>8.0f}"
            )


if __name__ == "__main__":
    main()
