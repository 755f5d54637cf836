"""API keys and Idempotency-Key claims."""
