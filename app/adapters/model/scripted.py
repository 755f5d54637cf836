"""The scripted model (SPEC §5): turns come from the run's script, one item per call.

The item read is the one at the run's count of recorded model outcomes, so a call cut off
by a crash is asked again and gets the same item. It honours its call's output cap as a
provider does: an item that declares more output than the cap is cut there (`truncated`,
billed its input and the cap).
"""

from __future__ import annotations

import asyncio
import json

from app.domain.model.replies import (
    FinalAnswer,
    ModelError,
    ModelReply,
    ModelRequest,
    ProposedCall,
    TokenUsage,
    ToolCallsProposal,
    script_usage,
)

MODEL_NAME = "scripted"
TRUNCATED = "the model's answer was cut at its length limit"


def _final_text(item: dict) -> str:
    """A final item's text; its `data` (for a typed agent) as the JSON a model would send."""
    if "text" not in item and "data" in item:
        return json.dumps(item["data"], ensure_ascii=False)
    return str(item.get("text", ""))


class ScriptedModel:
    async def complete(self, request: ModelRequest) -> ModelReply:
        script = request.script or []
        if request.position >= len(script):
            raise ModelError(
                "script_exhausted", "the run's script has no more items", consumed=False
            )
        item = dict(script[request.position])
        delay_ms = item.get("delay_ms") or 0
        if delay_ms:
            # Cancellation (cancel, deadline) interrupts the sleep like a real request.
            await asyncio.sleep(delay_ms / 1000)
        kind = item.get("type")
        usage = script_usage(item)
        if kind == "error":
            raise ModelError(
                str(item.get("code") or "model_error"),
                str(item.get("message") or "scripted model error"),
                retryable=bool(item.get("retryable", False)),
                # An error item may declare what its call was billed (a replayed cut reply).
                usage=usage if item.get("usage") else None,
            )
        cap = request.max_output_tokens
        if kind in ("final", "tool_calls") and cap is not None and usage.output_tokens > cap:
            cut = TokenUsage(usage.input_tokens, cap)
            raise ModelError("truncated", TRUNCATED, usage=cut)
        if kind == "final":
            return FinalAnswer(_final_text(item), usage, MODEL_NAME)
        if kind == "tool_calls":
            calls = tuple(
                ProposedCall(str(c.get("id")), str(c.get("name")), c.get("arguments", {}))
                for c in item.get("calls") or []
            )
            text = item.get("text")
            return ToolCallsProposal(
                calls, usage, MODEL_NAME, text if isinstance(text, str) else None
            )
        raise ModelError("malformed_output", "unknown script item type")
