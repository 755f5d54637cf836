"""Examples for the OpenAPI document."""

from __future__ import annotations

from typing import Any

RUN_EXAMPLE: dict[str, Any] = {
    "agent": "tech-radar",
    "input": "Which databases are in the adopt ring?",
    "limits": {"max_steps": 6, "deadline_s": 30},
    "metadata": {"ticket": "T-1"},
    "wait_s": 10,
    "script": [
        {
            "type": "tool_calls",
            "calls": [
                {"id": "c1", "name": "search_technologies", "arguments": {"query": "database"}}
            ],
            "usage": {"input_tokens": 120, "output_tokens": 20},
        },
        {
            "type": "final",
            "text": "PostgreSQL is in adopt [source:s1]",
            "usage": {"input_tokens": 300, "output_tokens": 22},
        },
    ],
}


RUN_OUT_EXAMPLE: dict[str, Any] = {
    "id": "run_5f0c3e6a9b1d4f2e8a7c6b5d4e3f2a1b",
    "agent": "tech-radar",
    "input": "Which databases are in the adopt ring?",
    "status": "finished",
    "termination_reason": "final",
    "output": {
        "text": "PostgreSQL is in adopt [source:s1]",
        "citations": [
            {
                "source_id": "s1",
                "tool": "search_technologies",
                "observed_at": "2026-11-29T10:00:01Z",
                "source_version": "1",
            }
        ],
    },
    "error": None,
    "parent_run_id": None,
    "root_run_id": "run_5f0c3e6a9b1d4f2e8a7c6b5d4e3f2a1b",
    "metadata": {"ticket": "T-1"},
    "tools": ["search_technologies", "get_technology", "move_technology_ring"],
    "limits": {
        "max_steps": 6,
        "deadline_s": 30.0,
        "max_tokens": 50000,
        "max_cost_usd": 1.0,
        "max_tool_calls": 20,
    },
    "usage": {
        "steps": 2,
        "input_tokens": 420,
        "output_tokens": 42,
        "cost_usd": 0.0,
        "tool_calls": 1,
    },
    "reserved": {"tokens": 0, "cost_usd": 0.0, "tool_calls": 0},
    "pending_approvals": [],
    "consistency": "latest",
    "as_of": None,
    "created_at": "2026-11-29T10:00:00Z",
    "updated_at": "2026-11-29T10:00:02Z",
    "deadline_at": "2026-11-29T10:00:30Z",
    "version": 3,
    "config_hash": "3f7a9c2e5b8d1f4a6c0e9b2d5f8a1c4e7b0d3f6a9c2e5b8d1f4a6c0e9b2d5f8a",
    "continued_from": None,
}


#: A run that corrected a refused call, then spent its steps without an answer.
DIAGNOSIS_EXAMPLE: dict[str, Any] = {
    "first_deviation": {
        "seq": 5,
        "category": "invalid_arguments",
        "explanation": "call c1 to search_technologies was refused (invalid_arguments): "
        "query: 5 is not of type 'string'",
    },
    "root_cause": {
        "seq": 31,
        "category": "needs_review",
        "explanation": "the run ended max_steps with no recorded fault; whether the model "
        "chose the wrong tools cannot be told without a reference: review the run",
    },
    "terminal_cause": {
        "seq": 31,
        "category": "max_steps",
        "explanation": "the run ended max_steps: the step limit was reached without a final answer",
    },
}

#: Said in words: `anyOf` over `required` at the top of a body makes client generators
#: turn the body into a union of types.
INPUT_NOTE = (
    "The task. Required, unless the run continues another (`continue_from`): then it "
    "defaults to that run's input (without either: `422` on `input`)."
)
CONTINUE_NOTE = (
    "A finished run of the tenant (e.g. one that ended `context_exhausted`) to continue: the "
    "new run starts from its recorded state — its input, a summary of each of its calls, the "
    "effects it committed and the calls that awaited approval — under the new run's agent "
    "and limits. Unknown: `404`; not finished: `409`."
)
CONTINUED_NOTE = "The finished run this one continues (`continue_from`); null otherwise."
