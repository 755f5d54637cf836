"""A finished run explained and replayed: diagnosis, its taxonomy, replay's comparison and
script."""
