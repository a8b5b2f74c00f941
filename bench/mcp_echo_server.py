"""The MCP server the MCP bench calls: one ``echo`` tool, written with the official SDK."""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

app = MCPServer("bench-echo", log_level="CRITICAL")


@app.tool(description="Say the text back.")
def echo(text: str) -> str:
    return text


if __name__ == "__main__":
    app.run()
