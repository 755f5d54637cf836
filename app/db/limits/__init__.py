"""Quota counters, child runs' reservations, retention's purges."""
