"""mcpmount: mount many MCP servers into one tool registry."""
