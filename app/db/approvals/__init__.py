"""Previews' rows and the conditional writes of a decision."""
