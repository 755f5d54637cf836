"""`python -m app replay RUN_ID`: replays a finished run against the current code, config
and tools (`engine.forensics.replay`) and prints `no difference` (exit 0) or the first differing
transition, recorded and replayed (exit 1). A run that cannot be replayed (not found, not
finished, ...) is a usage error (exit 2), said in one line.

The service is built in this process with the current config, but every model route that
calls a model is scripted, under the same name and with the same prices, tags,
capabilities, timeout and attempts: the recorded answers stand in for the model, and
everything else (instructions, tool set and schemas, gates, budgets, approvals, the tools
themselves) is what the config says now. No poller runs: only the replayed run advances.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from app.config.files import AppConfig
from app.domain.forensics.replay import Difference, Transition, first_difference, transitions

#: Route fields a scripted route does without.
_MODEL_FIELDS = {"provider": "scripted", "model": None, "base_url": None, "api_key_env": None}


def replay_config(config: AppConfig) -> AppConfig:
    """`config` with every route that calls a model made scripted, names and prices kept."""
    models = {
        name: route if route.provider == "router" else route.model_copy(update=_MODEL_FIELDS)
        for name, route in config.models.items()
    }
    return config.model_copy(update={"models": models})


def _shown(side: Transition | None, note: str | None) -> str:
    if side is not None:
        return json.dumps(side.as_dict(), sort_keys=True, default=str)
    return f"none ({note})" if note else "none (the run had ended)"


def report(difference: Difference | None, note: str | None) -> tuple[str, int]:
    """What to print and the exit code."""
    if difference is None:
        return "no difference", 0
    lines = [
        f"first difference at seq {difference.seq}",
        f"recorded: {_shown(difference.recorded, None)}",
        f"replayed: {_shown(difference.replayed, note)}",
    ]
    return "\n".join(lines), 1


async def _replay(app: Any, run_id: str, tenant: str | None, side_effects: bool) -> tuple[str, int]:
    from app.engine.forensics import replay

    async with app.router.lifespan_context(app):
        rt, driver = app.state.runtime, app.state.driver
        try:
            recorded = await replay.load(
                rt, run_id=run_id, tenant_id=tenant, side_effects=side_effects
            )
        except replay.NotReplayable as exc:
            return f"replay error: {exc}", 2
        done = await replay.replay(rt, driver, recorded)
    where = f"replayed as run {done.run_id}" if done.run_id else "no run was created"
    print(f"{where} in tenant {done.tenant_id}", file=sys.stderr)
    if done.note:
        print(f"replay note: {done.note}", file=sys.stderr)
    difference = first_difference(transitions(recorded.events), transitions(done.events))
    return report(difference, done.note)


def run_cli(settings: Any, run_id: str, tenant: str | None, side_effects: bool) -> int:
    from app.main import create_app, load_app_config

    config = replay_config(load_app_config(settings))
    app = create_app(settings, config=config, run_driver=False)
    text, code = asyncio.run(_replay(app, run_id, tenant, side_effects))
    print(text, file=sys.stderr if code == 2 else sys.stdout)
    return code
