"""API keys and Idempotency-Keys."""
