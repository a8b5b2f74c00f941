"""Capability names a Function declares, and the action each one unlocks.

A capability is an exact string; nothing is matched by prefix or pattern at run time, so a
Function reaches only the handlers it names. `native_tool.call.call_function` is refused
outright: a Function may not call Functions, directly or through another tool.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum


class Action(StrEnum):
    """The `action` values `api.invoke` understands."""

    APPROVAL_REQUEST = "approval.request"
    COMMAND_DISPATCH = "command.dispatch"
    NATIVE_TOOL_CALL = "native_tool.call"


APPROVAL_REQUEST = "approval.request"
COMMAND_DISPATCH_CONSOLE = "command.dispatch.console"
COMMAND_DISPATCH_PLAYER = "command.dispatch.player"
NATIVE_TOOL_PREFIX = "native_tool.call."
FORBIDDEN_TOOL = "call_function"

_FIXED = frozenset({APPROVAL_REQUEST, COMMAND_DISPATCH_CONSOLE, COMMAND_DISPATCH_PLAYER})
# Tool names as the tool registry spells them: lower snake case.
TOOL_NAME = re.compile(r"[a-z][a-z0-9_]{0,63}")


@dataclass(frozen=True)
class Capability:
    """One parsed capability; `tool` is set only for `native_tool.call.<tool>`."""

    name: str
    tool: str | None = None


def parse_capability(name: str) -> Capability:
    """Parse one declared capability; `ValueError` says what is wrong with it."""
    if name in _FIXED:
        return Capability(name)
    if name.startswith(NATIVE_TOOL_PREFIX):
        tool = name.removeprefix(NATIVE_TOOL_PREFIX)
        if tool == FORBIDDEN_TOOL:
            raise ValueError(f"capability {name!r} is refused: a Function may not call Functions")
        if TOOL_NAME.fullmatch(tool) is None:
            raise ValueError(f"capability {name!r} does not name a tool ([a-z][a-z0-9_]*)")
        return Capability(name, tool)
    known = ", ".join(sorted(_FIXED | {NATIVE_TOOL_PREFIX + "<tool>"}))
    raise ValueError(f"unknown capability {name!r} (known: {known})")


def native_tool_capability(tool: str) -> str:
    """The capability a Function needs to call native tool `tool`."""
    return NATIVE_TOOL_PREFIX + tool


def dispatch_capability(executor: str) -> str:
    """The capability a Function needs to dispatch a command as `executor`."""
    return COMMAND_DISPATCH_CONSOLE if executor == "console" else COMMAND_DISPATCH_PLAYER
