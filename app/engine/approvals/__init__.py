"""The approver's use cases: read, approve, reject, commit."""
