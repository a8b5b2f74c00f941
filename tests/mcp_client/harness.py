"""The MCP client against real MCP servers (tests/mcp/servers, written with the same SDK) run as
child processes over stdio and over streamable HTTP on loopback.

``Harness`` holds an ``McpClients`` and the invoker a turn would use, so every call goes the one
path of native tools (registry, gates, cooldown, redaction, audit). Waits are for the clients'
change events, each under one generous bound.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

from bridge.control.config_file import ConfigFile
from bridge.control.mcp_config import McpConfig
from bridge.control.tools_file import ToolsFile
from bridge.mcp import connection as connection_module
from bridge.mcp.clients import McpClients
from bridge.mcp.connection import ServerConnection, State
from bridge.mcp.tools import ProgressSink
from bridge.redaction import Redactor
from bridge.store.audit_sink import MemoryAudit
from bridge.tools.invoke import Cooldowns, ToolInvoker
from bridge.tools.registry import CallContext, ToolRegistry
from bridge.tools.results import ToolOutcome

SERVERS = Path(__file__).resolve().parent / "servers"
TOOLBOX = str(SERVERS / "toolbox.py")
WAIT = 60.0


def stdio_server(*args: str, **fields: Any) -> dict[str, Any]:
    return {
        "transport": "stdio",
        "command": sys.executable,
        "args": [TOOLBOX, *args],
        "read": [str(SERVERS)],  # the toolbox's own folder, beyond Python and the system
        "restart_backoff_ms": 0,
        **fields,
    }


def mcp_config(
    servers: dict[str, dict[str, Any]], environ: dict[str, str] | None = None
) -> McpConfig:
    config = ConfigFile.model_validate(
        {"schema": 1, "mcp": {"enabled": True, "servers": servers}},
        context={"environ": environ or {}},
    )
    return config.mcp


class Harness:
    def __init__(self, clients: McpClients, audit: MemoryAudit, redactor: Redactor) -> None:
        self.clients = clients
        self.audit = audit
        self.redactor = redactor
        self._changed = asyncio.Event()
        clients.add_listener(self._changed.set)

    def connection(self, name: str) -> ServerConnection:
        return self.clients.connections[name]

    async def until(self, check: Callable[[], bool]) -> None:
        """Wait for the clients' change events until ``check`` holds (one generous bound)."""
        async with asyncio.timeout(WAIT):
            while not check():
                self._changed.clear()
                if check():
                    return
                await self._changed.wait()

    async def ready(self, name: str) -> ServerConnection:
        await self.until(
            lambda: name in self.clients.connections and self.connection(name).state is State.READY
        )
        return self.connection(name)

    def invoker(self, granted: frozenset[str] = frozenset()) -> ToolInvoker:
        registry = ToolRegistry.from_tools_file(
            ToolsFile.model_validate({"schema": 1}), {}, extra=self.clients.tools()
        )
        return ToolInvoker(
            registry.for_player(granted),
            cooldowns=Cooldowns(cooldown_ms=0),
            redactor=self.redactor,
            audit=self.audit,
        )

    async def call(
        self, name: str, arguments: dict[str, Any] | None = None, **invoker: Any
    ) -> ToolOutcome:
        context = CallContext("turn-1", "call-1", "uuid-steve", "Steve")
        return await self.invoker(**invoker).invoke(name, json.dumps(arguments or {}), context)


def watch_messages(monkeypatch: Any) -> tuple[list[str], list[str]]:
    """The kinds of message that reach the connections' handler from the session, and the
    listings made (each a server's name), from now on."""
    seen: list[str] = []
    listings: list[str] = []
    original, listed = ServerConnection._message, connection_module._listed

    async def counted(self: ServerConnection, message: Any) -> None:
        seen.append(type(message).__name__)
        await original(self, message)

    async def listing(server: str, client: Any) -> Any:
        listings.append(server)
        return await listed(server, client)

    monkeypatch.setattr(ServerConnection, "_message", counted)
    monkeypatch.setattr(connection_module, "_listed", listing)
    return seen, listings


@contextlib.asynccontextmanager
async def harness(
    tmp_path: Path,
    config: McpConfig,
    *,
    secrets: frozenset[str] = frozenset(),
    progress: ProgressSink | None = None,
) -> AsyncIterator[Harness]:
    audit = MemoryAudit()
    redactor = Redactor([], secret_values=secrets)
    clients = McpClients(audit=audit, redact=redactor.redact_text, progress=progress)
    workspace = tmp_path / "workspace"
    workspace.mkdir(exist_ok=True)
    found = Harness(clients, audit, redactor)
    clients.apply(config, workspace)
    try:
        yield found
    finally:
        await clients.aclose()


@contextlib.contextmanager
def http_toolbox(port: int, *args: str) -> Iterator[subprocess.Popen[str]]:
    """The toolbox over streamable HTTP on 127.0.0.1:``port``, once it listens."""
    process = subprocess.Popen(
        [sys.executable, TOOLBOX, "--http", str(port), *args],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert process.stderr is not None
        for line in process.stderr:  # bounded by the server's start; it exits on failure
            if line.strip() == "ready":
                break
        else:
            raise AssertionError(f"the HTTP toolbox did not start (exit {process.wait()})")
        yield process
    finally:
        process.kill()
        process.wait()
        if process.stderr is not None:
            process.stderr.close()
