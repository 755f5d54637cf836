"""Tools implemented in code, next to the service."""
