"""The audit chain's use cases (SPEC §3.10): recording, paging, verifying."""
