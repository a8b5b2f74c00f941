"""The owner's MCP servers as tools (``config.yml``'s ``mcp``), through the one tool registry.

One session per server with the official ``mcp`` SDK: a stdio server is a confined child
process (``child``), restarted with backoff after a crash and given up after repeated crashes
(``connection``); an http server is reached over streamable HTTP. Tools are discovered at start
and on ``notifications/tools/list_changed``, checked and bounded (``discovery``), and offered
as ``mcp__<server>__<tool>`` with the same gates, cooldowns, budgets, audit and redaction as a
native tool (``tools``). What a server returns is third-party text: cut and marked as such
(``results``). ``clients.McpClients`` holds them all for the process.
"""
