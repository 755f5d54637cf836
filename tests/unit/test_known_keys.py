"""The principals a process keeps of keys it looked up: used only while revocations reach
it, forgotten on a revocation's notification or a reconnection, never kept from a lookup
that a forgetting overtook, lapsed after their time."""

from __future__ import annotations

from app.domain.tools.specs import Principal
from app.engine.access.known_keys import KnownKeys

ALICE = Principal("acme", "alice", frozenset({"caller"}), None)
BOB = Principal("acme", "bob", frozenset({"admin"}), frozenset({"radar:read"}))


class Ticking:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def listening_keys(ttl_s: float = 5.0, **kwargs: int) -> tuple[KnownKeys, Ticking, list[bool]]:
    clock, up = Ticking(), [True]
    known = KnownKeys(ttl_s, clock, **kwargs)
    known.listen_through(lambda: up[0])
    return known, clock, up


def test_a_key_looked_up_is_kept_until_its_time_lapses() -> None:
    known, clock, _ = listening_keys(ttl_s=5.0)
    known.keep("h1", "acme", "k1", ALICE, known.ticket())
    clock.now += 4.9
    assert known.get("h1") == ALICE
    clock.now += 0.2
    assert known.get("h1") is None
    assert known.get("h2") is None


def test_nothing_is_kept_or_used_while_revocations_do_not_arrive() -> None:
    known, _, up = listening_keys()
    known.keep("h1", "acme", "k1", ALICE, known.ticket())
    up[0] = False
    assert known.get("h1") is None
    known.keep("h2", "acme", "k2", BOB, known.ticket())
    up[0] = True
    assert known.get("h2") is None  # not kept while deaf
    assert known.get("h1") == ALICE  # until the reconnection forgets it (below)
    known.on_notification("")
    assert known.get("h1") is None


def test_a_process_that_never_listens_keeps_nothing() -> None:
    known = KnownKeys(5.0, Ticking())
    known.keep("h1", "acme", "k1", ALICE, known.ticket())
    assert known.get("h1") is None


def test_a_ttl_of_zero_keeps_nothing() -> None:
    known, _, _ = listening_keys(ttl_s=0.0)
    known.keep("h1", "acme", "k1", ALICE, known.ticket())
    assert known.get("h1") is None


def test_a_revocation_forgets_its_key_only() -> None:
    known, _, _ = listening_keys()
    known.keep("h1", "acme", "k1", ALICE, known.ticket())
    known.keep("h2", "acme", "k2", BOB, known.ticket())
    known.keep("h3", "initech", "k1", ALICE, known.ticket())
    known.on_notification("acme k1")
    assert known.get("h1") is None
    assert known.get("h2") == BOB
    assert known.get("h3") == ALICE  # another tenant's key of the same id


def test_a_tenant_whose_name_has_a_space_has_its_revocations_heard() -> None:
    known, _, _ = listening_keys()
    known.keep("h1", "acme corp", "k1", ALICE, known.ticket())
    known.keep("h2", "acme", "k1", BOB, known.ticket())
    known.on_notification("acme corp k1")
    assert known.get("h1") is None
    assert known.get("h2") == BOB


def test_a_lookup_overtaken_by_a_revocation_is_not_kept() -> None:
    known, _, _ = listening_keys()
    ticket = known.ticket()  # the lookup reads the key while it still opens...
    known.on_notification("acme k9")  # ...a revocation arrives (of any key)...
    known.keep("h1", "acme", "k1", ALICE, ticket)  # ...so what it read is not kept
    assert known.get("h1") is None
    known.keep("h1", "acme", "k1", ALICE, known.ticket())
    assert known.get("h1") == ALICE


def test_the_longest_kept_key_makes_room() -> None:
    known, _, _ = listening_keys(max_keys=2)
    for i in range(3):
        known.keep(f"h{i}", "acme", f"k{i}", ALICE, known.ticket())
    assert [known.get(f"h{i}") for i in range(3)] == [None, ALICE, ALICE]
