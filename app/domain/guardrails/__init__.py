"""Guardrails: an agent's policy at three points, and what they look for (secrets, personal data,
injection markers)."""
