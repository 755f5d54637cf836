"""The audit chain (SPEC §3.10)."""
