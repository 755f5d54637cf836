"""Tools' rows: pinned MCP declarations, kill switches, config versions."""
