"""The edges: model providers, tool backends, webhook transport and the clock, behind
the domain's ports."""
