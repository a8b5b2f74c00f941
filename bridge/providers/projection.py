"""Rules both protocols apply before projecting a conversation to the wire.

A tool call is replayed only together with its output, and an output only after its call:
both protocols refuse a dangling one, and a turn dropped half-way must not leave one behind.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from bridge.providers.items import Item, PlayerMessage, ProviderRequest, ToolCall, ToolResult
from bridge.providers.settings import ModelSettings


def drop_unpaired_tool_items(items: Sequence[Item]) -> list[Item | None]:
    """The items with every unpaired call or result replaced by None, positions kept, so a
    protocol can still see what each remaining item preceded."""
    answered: set[str] = set()
    called: set[str] = set()
    for item in items:
        if isinstance(item, ToolCall):
            called.add(item.call_id)
        elif isinstance(item, ToolResult) and item.call_id in called:
            answered.add(item.call_id)
    kept: list[Item | None] = []
    for item in items:
        if isinstance(item, ToolCall | ToolResult) and item.call_id not in answered:
            kept.append(None)
        else:
            kept.append(item)
    return kept


def tool_spec_parameters(parameters: dict[str, object]) -> dict[str, object]:
    """A tool's JSON schema as sent: a copy, so a request body never aliases the catalogue."""
    return dict(parameters)


def wire_tool_choice(
    request: ProviderRequest, model: ModelSettings, named: Callable[[str], dict[str, Any]]
) -> str | dict[str, Any] | None:
    """The ``tool_choice`` sent, None for none at all. The turn's own ``none`` (past its tool
    limits) always wins; otherwise the model's setting: ``omit`` leaves the choice to the
    server, ``required`` asks for a call when the request answers a player's message (after
    tool results the model must still be free to answer in words), and a tool's name forces
    that tool when a player's message is answered and sends ``none`` after its results (a
    server such as llama-cpp-python streams tool calls only when one tool is forced).
    ``named`` writes a forced tool in the protocol's shape."""
    if request.tool_choice != "auto":
        return request.tool_choice
    choice = model.tool_choice
    if choice == "omit":
        return None
    if choice == "auto":
        return "auto"
    last = request.items[-1] if request.items else None
    answers_player = isinstance(last, PlayerMessage)
    if choice == "required":
        return "required" if answers_player else "auto"
    if not any(tool.name == choice for tool in request.tools):
        return "auto"  # the forced tool is not offered to this turn (permissions, a reload)
    return named(choice) if answers_player else "none"
