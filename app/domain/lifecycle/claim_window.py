"""How many runs a process's poll may take up: in proportion to what it has shown it can
carry, not to its free slots alone.

A process that just started has proven nothing; in a crash loop it is the one about to die
again, and every run it claims then waits for a takeover. So its window opens at `START`
runs and widens by one for each step it commits (TCP's slow start, with steps for
acknowledgements), up to its capacity: a process that advances what it holds reaches its
full share within a few steps, and one that dies before committing any holds `START`
runs at most. A process alive for `OPEN_AFTER_S` is in no crash loop of that period, and
its window is open whatever it holds (runs whose calls outlast that, parents waiting on
parked children, would otherwise keep it shut). Runs created or kicked here by a request
are not the poll's to refuse; they count against the window all the same, as runs this
process holds. The window bounds the claim only: the poll's sweep of parked runs that are
due runs whatever it allows."""

from __future__ import annotations

from dataclasses import dataclass

#: Runs a process that has committed nothing yet may hold through its poll.
START = 4
#: Seconds alive after which the window is open: well past a crash loop's period, well
#: within a lease (30 s), which is what a dead process's runs would wait for otherwise.
OPEN_AFTER_S = 10.0


@dataclass
class ClaimWindow:
    born: float  #: when the process started (a monotonic clock's reading)
    width: int = START

    def stepped(self, capacity: int) -> None:
        """A step of a run held here committed: the process carries what it holds."""
        self.width = min(self.width + 1, max(capacity, START))

    def room(self, held: int, free_slots: int, now: float) -> int:
        """Runs the poll may claim at `now` (monotonic): within the window and free slots."""
        if now - self.born >= OPEN_AFTER_S:
            return max(0, free_slots)
        return max(0, min(free_slots, self.width - held))
