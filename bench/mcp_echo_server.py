"""The MCP server the MCP bench calls, written with the official SDK: ``echo``, and ``big``
(an answer of that many megabytes on one line, the hostile row's)."""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

app = MCPServer("bench-echo", log_level="CRITICAL")


@app.tool(description="Say the text back.")
def echo(text: str) -> str:
    return text


@app.tool(description="Answers with this many megabytes of text.")
def big(megabytes: int) -> str:
    return "x" * (megabytes * 1024 * 1024)


if __name__ == "__main__":
    app.run()
