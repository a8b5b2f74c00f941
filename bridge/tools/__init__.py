"""Native tools: the registry, the one call path, the workspace file tools, skills.

The redactor lives in `bridge.redaction` (a shared leaf) and is re-exported here.

Public API::

    registry = assembly.registry_for(plane, extra_handlers={...})   # ToolRegistry
    registry.catalogue                       # every tools.yml entry with its status
    turn_tools = registry.for_player(granted)  # TurnTools: .specs for the model, .tools
    invoker = ToolInvoker(turn_tools, cooldowns=..., redactor=..., audit=...)
    await invoker.run(call, turn_context)    # the turn engine's ToolRunner -> ToolResult
    await invoker.invoke(name, arguments, call_context)  # -> ToolOutcome (CLI, Functions)

A handler is ``async (arguments: dict, context: CallContext) -> JSON-able``; it refuses by
raising ``ToolFailure(ErrorCode.X, message)``.
"""

from bridge.redaction import DEFAULT_RULES, RedactionRule, Redactor
from bridge.tools.invoke import Cooldowns, ToolInvoker
from bridge.tools.registry import CallContext, HandlerFn, ToolRegistry, TurnTools
from bridge.tools.results import ErrorCode, ToolFailure, ToolOutcome
from bridge.tools.workspace import Workspace, WorkspaceLimits

__all__ = [
    "DEFAULT_RULES",
    "CallContext",
    "Cooldowns",
    "ErrorCode",
    "HandlerFn",
    "RedactionRule",
    "Redactor",
    "ToolFailure",
    "ToolInvoker",
    "ToolOutcome",
    "ToolRegistry",
    "TurnTools",
    "Workspace",
    "WorkspaceLimits",
]
