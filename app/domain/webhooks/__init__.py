"""Webhook destinations (the allowlist, the retry schedule) and their signatures."""
