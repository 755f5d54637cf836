"""The service's settings (environment) and its config file (YAML)."""
