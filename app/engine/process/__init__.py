"""What a process holds: its driver, leases, runtime, deferred writes and view of the database."""
