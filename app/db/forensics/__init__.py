"""The reads of diagnosis and replay."""
