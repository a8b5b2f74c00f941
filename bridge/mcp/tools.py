"""An MCP server's tools as registry tools: the entry the gates read and the code that calls.

Each offered tool becomes a ``tools.yml``-shaped entry (handler ``mcp``, the server's checked
description and schema, the owner's ``permission``, ``cost`` and ``enabled`` for it) so the
registry, the guest rules, the cooldowns and the invoker treat it like any native tool. Its code
calls the server and turns every way that can end into the one result shape: the server's
text (cut, marked third-party), ``tool_error`` with the tool's own message (cut and marked the
same way), ``unavailable`` with why the server cannot take calls, ``timeout``,
``result_too_large`` for an answer cut at the pipe. Each call is one ``mcp.call`` audit record with
the arguments (redacted, cut) beside the invoker's ``tool.invoke``.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from mcp.shared.dispatcher import ProgressFnT

from bridge.control.mcp_config import McpToolConfig
from bridge.control.tools_file import MCP_HANDLER
from bridge.control.tools_file import ToolSpec as ToolEntry
from bridge.mcp.connection import (
    CallFailed,
    CallTimedOut,
    ResultTooLarge,
    ServerConnection,
    Unavailable,
)
from bridge.mcp.discovery import OfferedTool
from bridge.mcp.results import error_text, marked_error, shaped_result
from bridge.store.audit_sink import AuditSink
from bridge.tools.registry import CallContext, ExtraTool, HandlerFn
from bridge.tools.results import ErrorCode, ToolFailure

log = logging.getLogger(__name__)

MAX_AUDIT_ARGUMENT_CHARS = 2_000
PROGRESS_INTERVAL_S = 0.5
"""At most one progress frame per call this often: a server's flood of notifications is not
the player's action bar's."""

ProgressSink = Callable[[CallContext, str], Awaitable[None]]
"""Shows ``<tool> <percent>%`` in the asker's action bar (the text is the bridge's: the tool's
offered name and a number, never the server's progress message)."""


class McpToolCalls:
    """The registry tools of one server's listing."""

    def __init__(
        self,
        connection: ServerConnection,
        *,
        audit: AuditSink,
        redact: Callable[[str], str],
        progress: ProgressSink | None = None,
    ) -> None:
        self._connection = connection
        self._audit = audit
        self._redact = redact
        self._progress = progress

    def bound(self, offered: tuple[OfferedTool, ...]) -> list[ExtraTool]:
        found = []
        connection = self._connection
        for tool in offered:
            settings = connection.config.for_tool(tool.remote, late=connection.late(tool.remote))
            found.append(
                ExtraTool(
                    tool.name,
                    _entry(tool, settings),
                    self._code(tool, settings),
                    personal=not connection.config.shared,
                )
            )
        return found

    def _code(self, tool: OfferedTool, settings: McpToolConfig) -> HandlerFn:
        connection = self._connection
        max_chars = settings.max_result_chars or connection.config.max_result_chars

        async def call(arguments: dict[str, Any], context: CallContext) -> Any:
            started = time.monotonic()
            status = "ok"
            try:
                result = await connection.call(
                    tool.remote, arguments, progress=self._progress_of(tool, context)
                )
                if result.is_error:
                    status = "tool_error"
                    message = marked_error(
                        connection.name, "the tool reported an error", error_text(result)
                    )
                    raise ToolFailure(ErrorCode.TOOL_ERROR, message)
                return shaped_result(connection.name, result, max_chars)
            except Unavailable as exc:
                status = "unavailable"
                message = f"the MCP server {connection.name} is unavailable: {exc}"
                raise ToolFailure(ErrorCode.UNAVAILABLE, message) from None
            except CallTimedOut as exc:
                status = "timeout"
                message = f"the MCP server {connection.name} gave {exc}"
                raise ToolFailure(ErrorCode.TIMEOUT, message) from None
            except ResultTooLarge as exc:
                status = "result_too_large"
                message = f"the MCP server {connection.name}'s answer was cut at the pipe: {exc}"
                raise ToolFailure(ErrorCode.RESULT_TOO_LARGE, message) from None
            except CallFailed as exc:
                status = "failed"
                message = marked_error(connection.name, "the server refused the call", str(exc))
                raise ToolFailure(ErrorCode.TOOL_ERROR, message) from None
            except BaseException:
                if status == "ok":
                    status = "cancelled"
                raise
            finally:
                self._record(context, tool, arguments, status, started)

        return call

    def _progress_of(self, tool: OfferedTool, context: CallContext) -> ProgressFnT | None:
        sink = self._progress
        if sink is None:
            return None
        last = [float("-inf")]

        async def progressed(progress: float, total: float | None, message: str | None) -> None:
            now = time.monotonic()
            if total is None or total <= 0 or now - last[0] < PROGRESS_INTERVAL_S:
                return
            last[0] = now
            percent = max(0, min(100, round(progress / total * 100)))
            try:
                await sink(context, f"{tool.name} {percent}%")
            except Exception:  # a frame that cannot be shown never fails the call
                log.debug("MCP progress frame skipped", exc_info=True)

        return progressed

    def _record(
        self,
        context: CallContext,
        tool: OfferedTool,
        arguments: dict[str, Any],
        status: str,
        started: float,
    ) -> None:
        shown = json.dumps(arguments, ensure_ascii=False, default=str)
        if len(shown) > MAX_AUDIT_ARGUMENT_CHARS:
            shown = shown[:MAX_AUDIT_ARGUMENT_CHARS] + "…"
        self._audit.record(
            "mcp.call",
            {
                "turn_id": context.turn_id,
                "call_id": context.call_id,
                "player": context.player_name,
                "server": tool.server,
                "tool": tool.remote,
                "arguments": self._redact(shown),
                "status": status,
                "ms": round((time.monotonic() - started) * 1000),
            },
        )


def _entry(tool: OfferedTool, settings: McpToolConfig) -> ToolEntry:
    return ToolEntry.model_validate(
        {
            "handler": MCP_HANDLER,
            "enabled": settings.enabled,
            "description": tool.description,
            "permission": settings.permission,
            "cost": settings.cost or "free",
            "parameters": tool.parameters,
        },
        context={"mcp": True},
    )
