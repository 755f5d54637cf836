"""Tools as the model sees them: specs, proposed calls checked, retries, the gates, pinned
declarations (MCP included) and JSON Schema validation."""
