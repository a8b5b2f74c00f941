"""The MCP server the MCP bench calls, written with the official SDK: ``echo``, ``big`` (an
answer of that many megabytes on one line) and ``flood`` (megabytes of lines nobody asked for,
on the wire or on stderr): the hostile rows'."""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

app = MCPServer("bench-echo", log_level="CRITICAL")


@app.tool(description="Say the text back.")
def echo(text: str) -> str:
    return text


@app.tool(description="Answers with this many megabytes of text.")
def big(megabytes: int) -> str:
    return "x" * (megabytes * 1024 * 1024)


@app.tool(
    description="Writes this many megabytes of lines of line_bytes each on fd (1: stdout, "
    "as notifications; 2: stderr), then answers."
)
async def flood(megabytes: int, line_bytes: int, fd: int = 1) -> str:
    import json
    import os

    head = json.dumps(
        {
            "jsonrpc": "2.0",
            "method": "notifications/message",
            "params": {"level": "info", "data": ""},
        }
    )
    pad = max(0, line_bytes - len(head) - 1)
    line = (head[:-3] + "x" * pad + '"}}\n').encode()
    count = megabytes * 1024 * 1024 // len(line)
    block = line * max(1, 65536 // len(line))
    per = max(1, 65536 // len(line))
    if fd == 1:  # the SDK serves the wire from a private copy of fd 1 and points 1 at stderr
        from mcp.server.stdio import _claims

        fd = _claims[1].private_fd or 1
    os.set_blocking(fd, True)  # whole lines: a short write would tear one
    for _ in range(max(1, count // per)):
        rest = memoryview(block)
        while rest:
            rest = rest[os.write(fd, rest) :]
    return f"flooded {count} lines"


if __name__ == "__main__":
    app.run()
