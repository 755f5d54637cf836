"""A run's diagnosis, and replay of a recorded run."""
