"""What the tests share: fakes at the ports, factories, the harness, and the helpers of
one kind of test (approvals, leases, server processes, streams, the live model route).
Test modules import from here, never from each other (tests/unit/test_guards.py)."""
