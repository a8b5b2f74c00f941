"""Every MCP server of the configuration in force, for the whole process.

``apply(config, workspace)`` is called with each published configuration: a server whose
settings did not change keeps its session; a changed one is stopped and started again; one no
longer configured (or ``mcp.enabled: false``) is stopped. The sessions start on the event loop
(``start()``, or at once when ``apply`` is called on a running loop). Listeners are told (on the
loop) whenever the offered tools or a server's state change, so the served configuration can
be built again; a turn keeps the tools it started with.

``tools()`` is what the registry binds: each offered tool as an ``ExtraTool`` whose code calls
its server (``bridge.mcp.tools``). A tool whose server is down stays offered with its last
listing and is answered ``unavailable`` with the reason, so the model can tell the player.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from bridge.control.mcp_config import McpConfig, McpServerConfig
from bridge.store.audit_sink import AuditSink
from bridge.tools.registry import ExtraTool

# The SDK (tens of MB and a second of imports) is loaded by the modules below; a bridge with no
# MCP server configured never imports them (tests/app/test_lazy_imports.py).
if TYPE_CHECKING:
    from bridge.mcp.connection import ServerConnection
    from bridge.mcp.discovery import OfferedTool
    from bridge.mcp.tools import ProgressSink

log = logging.getLogger(__name__)

Gate = Literal["offer", "review", "refuse"]


def _gate(connection: ServerConnection, tool: OfferedTool, require_review: bool) -> Gate:
    """What the owner's configuration says of one listed tool."""
    config = connection.config
    policy: Gate = "offer" if config.listed(tool.remote) is not None else config.unlisted_policy
    if policy == "offer" and require_review:
        return "review"
    return policy


class McpClients:
    def __init__(
        self,
        *,
        audit: AuditSink,
        redact: Callable[[str], str],
        reviewed: Callable[[str, str], bool] = lambda name, digest: False,
        progress: ProgressSink | None = None,
    ) -> None:
        """``reviewed(name, digest)``: whether the owner approved a tool's description and
        schema as shown (the review state Functions use); ``progress``: shows a call's progress
        to its asker."""
        self._progress = progress
        self._audit = audit
        self._redact = redact
        self._reviewed = reviewed
        self.connections: dict[str, ServerConnection] = {}
        self._wanted: tuple[McpConfig, Path] | None = None
        self._applied: tuple[McpConfig, Path] | None = None
        self._listeners: list[Callable[[], None]] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closing: set[asyncio.Task[None]] = set()
        self._closed = False

    # ---- listeners

    def add_listener(self, listener: Callable[[], None]) -> None:
        self._listeners.append(listener)

    def remove_listener(self, listener: Callable[[], None]) -> None:
        with contextlib.suppress(ValueError):
            self._listeners.remove(listener)

    def _changed(self) -> None:
        for listener in list(self._listeners):
            try:
                listener()
            except Exception:  # one listener's failure must not keep the others stale
                log.exception("an MCP tools listener failed")

    # ---- configuration

    def apply(self, config: McpConfig, workspace: Path) -> None:
        """Take ``config`` as the one in force; reconciled now on a running loop, else at
        ``start()``."""
        self._wanted = (config, workspace)
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        if self._loop is None or self._loop is loop:
            self._loop = loop
            self._reconcile()

    async def start(self) -> None:
        """Start the sessions of the configuration in force on this loop."""
        self._loop = asyncio.get_running_loop()
        self._reconcile()

    def _reconcile(self) -> None:
        if self._closed or self._wanted is None or self._wanted == self._applied:
            return
        config, workspace = self._wanted
        self._applied = self._wanted
        wanted: dict[str, McpServerConfig] = {}
        if config.enabled:
            wanted = {name: s for name, s in config.servers.items() if s.enabled}
        for name, connection in list(self.connections.items()):
            if wanted.get(name) != connection.config or connection.workspace != workspace:
                del self.connections[name]
                self._close_later(connection)
        if wanted:
            from bridge.mcp.connection import ServerConnection
        for name, server in wanted.items():
            if name not in self.connections:
                connection = ServerConnection(
                    name, server, workspace=workspace, changed=self._changed, redact=self._redact
                )
                self.connections[name] = connection
                connection.start()
        self._changed()

    def _close_later(self, connection: ServerConnection) -> None:
        task = asyncio.get_running_loop().create_task(connection.aclose())
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    async def aclose(self) -> None:
        self._closed = True
        connections, self.connections = list(self.connections.values()), {}
        await asyncio.gather(*(c.aclose() for c in connections), return_exceptions=True)
        if self._closing:
            await asyncio.gather(*self._closing, return_exceptions=True)

    # ---- what the registry and the status show

    def tools(self, *, require_review: bool = False) -> tuple[ExtraTool, ...]:
        """The offered tools of every running server, in configuration order: not those the
        owner's ``unlisted: refuse`` leaves out, and of those that need a review (all with
        ``require_review``; the unlisted ones under ``unlisted: review``) only the reviewed."""
        found: list[ExtraTool] = []
        if not self.connections:
            return ()
        from bridge.mcp.tools import McpToolCalls

        for connection in self.connections.values():
            calls = McpToolCalls(
                connection, audit=self._audit, redact=self._redact, progress=self._progress
            )
            offered = tuple(
                tool
                for tool in connection.listing.offered
                if _gate(connection, tool, require_review) == "offer"
                or (
                    _gate(connection, tool, require_review) == "review"
                    and self._reviewed(tool.name, tool.digest)
                )
            )
            found.extend(calls.bound(offered))
        return tuple(found)

    def status(self, *, require_review: bool = False) -> list[str]:
        """One line per configured server: its state, tools and, when not ready, why."""
        lines: list[str] = []
        if not self.connections:
            return lines
        from bridge.mcp.connection import State

        for name, connection in self.connections.items():
            listing = connection.listing
            count = len(listing.offered)
            line = f"{name}: {connection.state.value}, {count} tool{'' if count == 1 else 's'}"
            if listing.refused:
                line += f" ({len(listing.refused)} refused)"
            gates = [_gate(connection, tool, require_review) for tool in listing.offered]
            waiting = [
                tool
                for tool, gate in zip(listing.offered, gates, strict=True)
                if gate == "review" and not self._reviewed(tool.name, tool.digest)
            ]
            if waiting:
                line += f" ({len(waiting)} awaiting review)"
            if "refuse" in gates:
                line += f" ({gates.count('refuse')} unlisted, not offered)"
            if connection.state is not State.READY:
                line += f"; {connection.reason}"
                if connection.stderr_note:
                    line += f"; {connection.stderr_note}"
            if connection.confinement_note:
                line += f"; {connection.confinement_note}"
            lines.append(line)
        return lines
