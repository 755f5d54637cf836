"""The poll's window (`domain.lifecycle.claim_window`): a process that has committed no
step holds `START` runs at most through its poll; each step it commits widens the window
by one, up to its capacity; a process alive `OPEN_AFTER_S` has it open."""

from __future__ import annotations

from app.domain.lifecycle.claim_window import OPEN_AFTER_S, START, ClaimWindow

BORN = 1000.0
EARLY = BORN + 1.0


def test_a_new_window_lets_the_poll_take_START_runs_whatever_the_free_slots() -> None:
    window = ClaimWindow(born=BORN)
    assert window.room(held=0, free_slots=64, now=EARLY) == START
    assert window.room(held=START - 1, free_slots=64, now=EARLY) == 1
    assert window.room(held=START, free_slots=64, now=EARLY) == 0


def test_runs_held_past_the_window_leave_no_room_rather_than_a_negative_one() -> None:
    assert ClaimWindow(born=BORN).room(held=20, free_slots=44, now=EARLY) == 0


def test_each_committed_step_widens_the_window_by_one_up_to_the_capacity() -> None:
    window = ClaimWindow(born=BORN)
    for _ in range(3):
        window.stepped(capacity=64)
    assert window.room(held=0, free_slots=64, now=EARLY) == START + 3
    for _ in range(200):
        window.stepped(capacity=64)
    assert window.width == 64
    assert window.room(held=10, free_slots=54, now=EARLY) == 54


def test_the_free_slots_bound_the_room_of_a_wide_window() -> None:
    window = ClaimWindow(born=BORN, width=64)
    assert window.room(held=0, free_slots=5, now=EARLY) == 5


def test_a_capacity_below_START_never_narrows_a_window_already_open() -> None:
    window = ClaimWindow(born=BORN)
    window.stepped(capacity=1)
    assert window.width == START  # the free slots (1) are what bound it then
    assert window.room(held=0, free_slots=1, now=EARLY) == 1


def test_a_process_alive_OPEN_AFTER_S_claims_up_to_its_free_slots_whatever_it_holds() -> None:
    """Runs that never step (long calls, parents waiting on parked children) cannot keep
    a live process's window shut."""
    window = ClaimWindow(born=BORN)
    assert window.room(held=START, free_slots=60, now=BORN + OPEN_AFTER_S - 0.1) == 0
    assert window.room(held=START, free_slots=60, now=BORN + OPEN_AFTER_S) == 60
    assert window.room(held=START, free_slots=0, now=BORN + OPEN_AFTER_S) == 0
