"""HTTP: routes, wire schemas, problem+json errors, middleware."""
