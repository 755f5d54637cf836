"""Tables and repositories: rows to and from the domain's records; repositories flush,
never commit."""
