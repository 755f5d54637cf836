"""Who may do what once: Idempotency-Keys."""
