"""OS confinement layers a child process sets on itself before it runs code the bridge does not
trust: Function workers (``bridge.functions.worker_confinement``) and stdio MCP servers
(``bridge.mcp.child``). Standard library only, so a child can import it before anything else.
Each layer reports "on" or "unavailable: why"; the caller states the report."""
