"""MCP declarations are pinned (SPEC §4): the store every process's MCP servers settle
their listings with (`Declarations`, the `DeclarationPins` port), and an admin's
acceptance of a pending declaration (`accept`).

Settling a listing reads the server's pins in one statement and writes only what changed:
a first sight (`INSERT … ON CONFLICT DO NOTHING`), a declaration held as pending, or a
pending one cleared (each `UPDATE … WHERE version = :seen`). A write that loses a race
with another replica reads the row again and decides again; a change is announced on
`mcp_declarations_repo.CHANNEL`, and every process then reads that server's pins again
and its list (`watch`); until its list is read again, a process changes no pin from the
list it holds (`stale`), which may be older than what was announced. The checks of a
declaration first seen run off the event loop whatever its size (`engine.off_loop`):
compiling a server's patterns costs time by their program, not by their length (a 10 KiB
declaration of 95 wide classes took 1.8 s)."""

from __future__ import annotations

import secrets
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from app.db.tools import mcp_declarations as repo
from app.domain.audit.chain import Action
from app.domain.errors import DomainError, ErrorCode
from app.domain.ids import new_id
from app.domain.tools.mcp_declarations import (
    Held,
    Listed,
    Pin,
    acceptance_refusal,
    first_sight,
    needs_check,
    refusals,
    seen_again,
)
from app.domain.tools.specs import Principal
from app.engine import off_loop
from app.engine.audit import trail

if TYPE_CHECKING:
    from app.engine.runner import Runtime

#: Tries of one tool's write against other replicas' before the listing is given up on
#: (read again at the next need).
_TRIES = 4


class Declarations:
    """The `DeclarationPins` port on the database; attached to the runtime once it exists."""

    def __init__(self) -> None:
        self._rt: Runtime | None = None
        self._watchers: dict[str, Callable[[], None]] = {}
        #: Tells this process's announcements from other processes' (it knows its own).
        self.origin = secrets.token_hex(8)

    def attach(self, rt: Runtime) -> None:
        self._rt = rt

    def watch(self, server: str, on_change: Callable[[], None]) -> None:
        self._watchers[server] = on_change

    def changed(self, server: str) -> None:
        """A pin of `server` changed here: its pins are read again, and its list."""
        watcher = self._watchers.get(server)
        if watcher is not None:
            watcher()

    def on_notification(self, payload: str) -> None:
        """An announcement (`server` and the announcing process), or "" after the
        listener reconnected: whatever was missed, every server's pins are read again."""
        if not payload:
            for watcher in self._watchers.values():
                watcher()
            return
        server, _, origin = payload.partition("\n")
        if origin != self.origin:
            self.changed(server)

    async def settle(
        self, server: str, listed: Mapping[str, Listed], *, stale: bool = False
    ) -> dict[str, Pin]:
        rt = self._rt
        if rt is None:
            raise RuntimeError("the declarations store is not attached to a runtime")
        async with rt.reads() as session:
            found = await repo.pins(session, server, list(listed))
        settled: dict[str, Pin] = {}
        wrote = False
        for tool, seen in listed.items():
            pin, changed = await _settle_one(rt, server, tool, seen, found.get(tool), stale)
            settled[tool] = pin
            wrote = wrote or changed
        if wrote:
            async with rt.reads() as session:
                await repo.announce(session, server, self.origin)
        return settled


async def _held(seen: Listed) -> list[Held]:
    # Always in a check thread: its size says nothing of what its patterns cost to compile.
    return await off_loop.run(off_loop.THRESHOLD, refusals, seen.declaration)


async def _settle_one(
    rt: Runtime, server: str, tool: str, seen: Listed, pin: Pin | None, stale: bool
) -> tuple[Pin, bool]:
    """The tool's pin after `seen`, and whether this process changed it (`stale`: only a
    first sight: a row that exists is read as it stands)."""
    for _ in range(_TRIES):
        if pin is not None and stale:
            return pin, False
        if pin is None:
            change = first_sight(seen, await _held(seen))
        else:
            held = await _held(seen) if needs_check(pin, seen.hash) else []
            again = seen_again(pin, seen, held)
            if again is None:
                return pin, False
            change = again
        now = rt.clock.now()
        async with rt.reads() as session:
            if pin is None:
                written = await repo.first_sight(
                    session, server=server, tool=tool, seen=change, now=now
                )
            else:
                written = await repo.seen_again(session, pin=pin, seen=change, now=now)
            if written is not None:
                return written, True
            pin = await repo.pin(session, server, tool)  # another replica wrote first
    raise RuntimeError("the declaration kept changing under this process")


def _pinned_as(rt: Runtime, name: str) -> tuple[str, str]:
    tool = rt.tools.get(name)
    if tool is None:
        raise DomainError(ErrorCode.NOT_FOUND, "no such tool")
    pinned_as = getattr(tool, "pinned_as", None)
    if pinned_as is None:
        raise DomainError(ErrorCode.INVALID_STATE, "the tool has no declaration pending")
    server, remote = pinned_as
    return server, remote


async def accept(
    rt: Runtime, *, principal: Principal, name: str, declaration_hash: str
) -> dict[str, Any]:
    """Makes the tool's pending declaration (exactly `declaration_hash`) its pinned one,
    and records who accepted it, in one transaction: a compare-and-set on the row's
    version, so two acceptances never race to different results. Returns the acceptance
    as recorded."""
    server, remote = _pinned_as(rt, name)
    async with rt.sessions.begin() as session:
        pin = await repo.pin(session, server, remote)
        refused = acceptance_refusal(pin, declaration_hash)
        if refused is not None:
            raise DomainError(ErrorCode.INVALID_STATE, refused)
        assert pin is not None and pin.pending is not None
        now = rt.clock.now()
        accepted = await repo.accept(session, pin=pin, now=now)
        if accepted is None:
            raise DomainError(
                ErrorCode.INVALID_STATE, "the pending declaration changed meanwhile; read it again"
            )
        record = {
            "tenant_id": principal.tenant_id,
            "id": new_id("acc"),
            "tool_name": name,
            "declaration": pin.pending,
            "accepted_by": principal.subject,
            "now": now,
        }
        await repo.record_acceptance(session, pin=pin, **record)
        await repo.announce(session, server, rt.mcp_declarations.origin)
        await trail.record(
            session,
            principal.tenant_id,
            principal.subject,
            Action.ACCEPT_MCP_DECLARATION,
            name,
            now,
            server=server,
            declaration_hash=declaration_hash,
        )
    rt.mcp_declarations.changed(server)
    return {
        "tool": name,
        "declaration_hash": pin.pending_hash,
        "previous_hash": pin.pinned_hash,
        "accepted_by": principal.subject,
        "accepted_at": now,
    }
