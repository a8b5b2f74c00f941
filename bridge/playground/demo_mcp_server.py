"""The playground's demo MCP server: one tool over stdio, for the scripted model to call.

    python demo_mcp_server.py

Run by the bridge as an owner's stdio server is (confined: it reads Python, this file and its
own folder), so `make try` shows an MCP tool call with no server of the owner's. Written with
the official SDK the bridge's client uses; it is never imported by the bridge itself.
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

TOOL = "server_facts"
FACT = "the playground's spawn is at x=0 y=64 z=0 (from the demo MCP server)"

app = MCPServer("playground-demo", log_level="CRITICAL")


@app.tool(description="Facts about the playground's simulated server.")
def server_facts() -> str:
    return FACT


if __name__ == "__main__":
    app.run()
