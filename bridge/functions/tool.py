"""`call_function` as a tool-registry handler: the registry validates `{name, arguments}`
against tools.yml and redacts the result; this binds the call to the turn's runtime and player.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from bridge.functions.runtime import FunctionRuntime
from bridge.tools.registry import CallContext


def call_function_handler(
    runtime: FunctionRuntime, *, cancel: asyncio.Event | None = None
) -> Callable[[dict[str, Any], CallContext], Awaitable[dict[str, Any]]]:
    """A `HandlerFn` for the turn's runtime; setting `cancel` cancels the running call."""

    async def call_function(arguments: dict[str, Any], context: CallContext) -> dict[str, Any]:
        return await runtime.call_function(
            str(arguments.get("name", "")),
            arguments.get("arguments", {}),
            player=context.player_name,
            player_uuid=context.player_uuid,
            cancel=cancel,
        )

    return call_function
