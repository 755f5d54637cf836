"""What a process holds: its runtime, leases, group commit, deferred writes and its view of the
database's availability."""
