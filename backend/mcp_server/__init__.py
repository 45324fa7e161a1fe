"""The MCP server (``rag mcp serve``): the knowledge bases as MCP tools and resources (docs/MCP.md)."""
