"""The poll's window (`domain.lifecycle.claim_window`): a process that has committed no
step holds `START` runs at most through its poll; each step it commits widens the window
by one, up to its capacity."""

from __future__ import annotations

from app.domain.lifecycle.claim_window import START, ClaimWindow


def test_a_new_window_lets_the_poll_take_START_runs_whatever_the_free_slots() -> None:
    window = ClaimWindow()
    assert window.room(held=0, free_slots=64) == START
    assert window.room(held=START - 1, free_slots=64) == 1
    assert window.room(held=START, free_slots=64) == 0


def test_runs_held_past_the_window_leave_no_room_rather_than_a_negative_one() -> None:
    assert ClaimWindow().room(held=20, free_slots=44) == 0


def test_each_committed_step_widens_the_window_by_one_up_to_the_capacity() -> None:
    window = ClaimWindow()
    for _ in range(3):
        window.stepped(capacity=64)
    assert window.room(held=0, free_slots=64) == START + 3
    for _ in range(200):
        window.stepped(capacity=64)
    assert window.width == 64
    assert window.room(held=10, free_slots=54) == 54


def test_the_free_slots_bound_the_room_of_a_wide_window() -> None:
    window = ClaimWindow(width=64)
    assert window.room(held=0, free_slots=5) == 5


def test_a_capacity_below_START_never_narrows_a_window_already_open() -> None:
    window = ClaimWindow()
    window.stepped(capacity=1)
    assert window.width == START  # the free slots (1) are what bound it then
    assert window.room(held=0, free_slots=1) == 1
