"""Tools as a process serves them: MCP declarations settled, tool lists read, pinned config
versions, the gates (kill switch, rate limits)."""
