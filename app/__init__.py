"""Toolgate: an HTTP service that runs agents' tool calls under approval, budgets and guardrails."""
