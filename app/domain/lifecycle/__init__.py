"""A run's state machine: statuses and their transition tables, every move, the settle rule, the
next step decided from the records, a run's changes, the records and events."""
