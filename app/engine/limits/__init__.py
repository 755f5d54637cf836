"""A tenant's quotas at a run's creation, and retention's purge."""
