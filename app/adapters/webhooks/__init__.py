"""Webhook transport: resolving and posting to a checked address."""
