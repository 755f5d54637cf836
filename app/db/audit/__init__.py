"""The audit chain's rows (SPEC §3.10)."""
