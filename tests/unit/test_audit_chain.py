"""The audit chain's rule (SPEC §3.10): each hash covers the previous one and the entry's
canonical JSON, and `verify` names the first entry that was changed, removed or moved."""

from __future__ import annotations

import random
from dataclasses import replace
from datetime import UTC, datetime, timedelta

from app.domain.audit.chain import GENESIS, Action, Entry, entry_hash, extend, verify

T0 = datetime(2026, 12, 6, 9, 0, tzinfo=UTC)


def _entries(n: int) -> list[Entry]:
    return [
        Entry(f"user-{i % 3}", Action.APPROVE, f"prv_{i}", T0 + timedelta(seconds=i))
        for i in range(n)
    ]


def test_a_chain_as_made_holds_and_each_hash_covers_the_one_before() -> None:
    chain = extend(0, GENESIS, _entries(5))
    assert [c.seq for c in chain] == [1, 2, 3, 4, 5]
    assert chain[0].prev_hash == GENESIS
    assert all(b.prev_hash == a.hash for a, b in zip(chain, chain[1:], strict=False))
    assert verify(chain, head=(5, chain[-1].hash)) is None
    # Extending from the head gives the same entries as making them at once.
    more = extend(chain[2].seq, chain[2].hash, [c.entry for c in chain[3:]])
    assert more == chain[3:]


def test_every_change_removal_or_reordering_is_found_at_its_first_entry() -> None:
    rng = random.Random(35)
    for _ in range(200):
        chain = extend(0, GENESIS, _entries(rng.randint(3, 12)))
        head = (chain[-1].seq, chain[-1].hash)
        at = rng.randrange(len(chain))
        kind = rng.choice(["data", "actor", "at", "remove", "swap", "drop_tail", "rehash"])
        broken = list(chain)
        if kind == "data":
            broken[at] = replace(chain[at], entry=replace(chain[at].entry, data={"x": 1}))
        elif kind == "actor":
            broken[at] = replace(chain[at], entry=replace(chain[at].entry, actor="mallory"))
        elif kind == "at":
            moved = chain[at].entry.at + timedelta(seconds=1)
            broken[at] = replace(chain[at], entry=replace(chain[at].entry, at=moved))
        elif kind == "remove":
            del broken[at]
        elif kind == "swap":
            at = min(at, len(chain) - 2)
            broken[at], broken[at + 1] = chain[at + 1], chain[at]
        elif kind == "drop_tail":
            at = len(chain) - 1
            broken.pop()
        else:  # changed and rehashed itself: the next entry's prev_hash gives it away
            at = min(at, len(chain) - 2)
            entry = replace(chain[at].entry, target="prv_other")
            rehashed = entry_hash(chain[at].prev_hash, chain[at].seq, entry)
            broken[at] = replace(chain[at], entry=entry, hash=rehashed)
            at += 1
        found = verify(broken, head=head)
        assert found is not None, kind
        assert found.seq == at + 1, (kind, found)


def test_the_canonical_json_is_independent_of_key_order() -> None:
    a = Entry("alice", Action.CREATE_KEY, "key_1", T0, {"roles": ["admin"], "name": "ops"})
    b = replace(a, data={"name": "ops", "roles": ["admin"]})
    assert entry_hash(GENESIS, 1, a) == entry_hash(GENESIS, 1, b)
    assert entry_hash(GENESIS, 1, a) != entry_hash(GENESIS, 2, a)
