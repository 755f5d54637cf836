"""A run's rows: runs, turns and calls, events, leases, a step's one statement and the runs born
with it."""
