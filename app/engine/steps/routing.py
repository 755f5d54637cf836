"""Which route a model step goes to (SPEC §4): the agent's route, or what its router
chooses among the candidates the policy allows. Deterministic but for a classifier
chooser, which is asked once per run (at its first step) and then followed."""

from __future__ import annotations

from app.domain.model.routing import Candidate, NoRoute, Routed, allowed, by_rules, settle
from app.engine.process.lease import Lease
from app.engine.process.runtime import Runtime
from app.engine.steps.classifier import classify
from app.engine.steps.state import RunState

CONFIGURED = "the agent's route"


def data_policy(lease: Lease, state: RunState) -> frozenset[str]:
    """The tags every route the run uses must carry: its agent's (as the run's pinned
    version has it) and its own."""
    agent = state.config.agent
    return frozenset(agent.data_policy if agent else []) | frozenset(state.run.data_policy)


def policy_allows(lease: Lease, state: RunState, names: list[str]) -> list[str]:
    rt = lease.rt
    needs = frozenset({"tools"}) if state.run.tools else frozenset()
    candidates = [
        Candidate(n, frozenset(rt.route(n).tags), frozenset(rt.route(n).capabilities))
        for n in names
        if n in rt.config.models and n in rt.models
    ]
    return allowed(candidates, data_policy=data_policy(lease, state), needs=needs)


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
    picked, why = await classify(lease, state, step, ok, data_policy(lease, state))
    return settle(picked, ok, default, "classifier", why)


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


__all__ = ["NoRoute", "Routed", "fallback_for", "on_route", "policy_allows", "route_for"]
