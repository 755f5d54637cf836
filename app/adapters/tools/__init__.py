"""Tool backends: operator HTTP tools, MCP servers, built-in tools."""
