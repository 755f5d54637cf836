"""Telemetry, metrics, logs and what content goes on spans."""
