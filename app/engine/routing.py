"""Which route a model step goes to (SPEC §4): the agent's route, or what its router
chooses among the candidates the policy allows. Deterministic but for a classifier
chooser, which is asked once per run (at its first step) and then followed."""

from __future__ import annotations

import logging

from app.domain.budget import seconds_left
from app.domain.model import FinalAnswer, ModelRequest
from app.domain.routing import Candidate, NoRoute, Routed, allowed, by_rules, settle
from app.engine.lease import Interrupted, Lease
from app.engine.runtime import Runtime
from app.engine.state import RunState

log = logging.getLogger(__name__)
CONFIGURED = "the agent's route"


def policy_allows(lease: Lease, state: RunState, names: list[str]) -> list[str]:
    rt = lease.rt
    run = state.run
    agent = rt.agent(run.agent)
    policy = frozenset(agent.data_policy if agent else []) | frozenset(run.data_policy)
    needs = frozenset({"tools"}) if run.tools else frozenset()
    candidates = [
        Candidate(n, frozenset(rt.route(n).tags), frozenset(rt.route(n).capabilities))
        for n in names
        if n in rt.config.models and n in rt.models
    ]
    return allowed(candidates, data_policy=policy, needs=needs)


async def route_for(lease: Lease, state: RunState, step: int) -> Routed:
    """Raises NoRoute when no candidate meets the run's policy."""
    rt = lease.rt
    run = state.run
    router = rt.route(run.route)
    if router.provider != "router":
        return Routed(run.route, CONFIGURED)
    ok = policy_allows(lease, state, list(router.candidates or []))
    default = router.default or ""
    chooser = router.chooser
    if chooser is None:
        return settle(None, ok, default, "no chooser")
    if chooser.kind == "rules":
        rules = [(r.if_input_matches, r.use) for r in chooser.rules or []]
        return settle(by_rules(rules, run.input), ok, default, "rules")
    earlier = state.turn.route if state.turn is not None else None
    if earlier in ok:
        return Routed(earlier, f"classifier: {earlier}, as chosen at an earlier step")
    return settle(await _classify(lease, state, step, ok), ok, default, "classifier")


def fallback_for(lease: Lease, state: RunState, chosen: Routed) -> Routed | None:
    """The router's fallback, when it has one the policy allows, other than the choice."""
    rt = lease.rt
    router = rt.route(state.run.route)
    name = router.fallback if router.provider == "router" else None
    if name is None or name == chosen.route:
        return None
    if not policy_allows(lease, state, [name]):
        return None
    return Routed(name, f"fallback after {chosen.route} ran out of attempts")


def on_route(
    rt: Runtime, chosen: Routed, fallback: Routed | None, attempt: int
) -> tuple[Routed, int]:
    """Where this attempt of the step goes, and its try there: the chosen route for its
    `max_attempts`, then the fallback (derived from the step's count of attempts, so that
    a step taken up after a crash goes on where it was)."""
    first = rt.route(chosen.route).max_attempts
    if fallback is not None and attempt > first:
        return fallback, attempt - first
    return chosen, attempt


async def _classify(lease: Lease, state: RunState, step: int, ok: list[str]) -> str | None:
    """The classifier route's pick, or None when it fails (the default is used then)."""
    rt = lease.rt
    run = state.run
    name = rt.route(run.route).chooser.route  # type: ignore[union-attr]
    if name not in rt.models or rt.route(name).provider == "scripted":
        return None
    route = rt.route(name)
    timeout = min(route.timeout_s, seconds_left(rt.clock.now(), run.deadline_at))
    if timeout <= 0:
        return None
    instructions = (
        "Choose the model route best suited to the user's request. Answer with exactly "
        f"one of these names and nothing else: {', '.join(ok)}."
    )
    request = ModelRequest(
        run_id=run.id,
        step=step,
        attempt=1,
        route=name,
        instructions=instructions,
        messages=[
            {"role": "system", "content": instructions},
            {"role": "user", "content": run.input},
        ],
        tools=[],
        timeout_s=timeout,
        position=0,
    )
    try:
        reply = await lease.guarded(rt.models[name].complete(request), timeout)
    except Interrupted:
        raise
    except Exception as exc:  # the chooser failing is not the run failing
        log.info("the classifier route failed (%s); using the default", type(exc).__name__)
        return None
    if not isinstance(reply, FinalAnswer):
        return None
    return reply.text.strip().strip("`'\".").strip() or None


__all__ = ["NoRoute", "Routed", "fallback_for", "on_route", "policy_allows", "route_for"]
