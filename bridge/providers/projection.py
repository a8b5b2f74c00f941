"""Rules both protocols apply before projecting a conversation to the wire.

A tool call is replayed only together with its output, and an output only after its call:
both protocols refuse a dangling one, and a turn dropped half-way must not leave one behind.
"""

from __future__ import annotations

from collections.abc import Sequence

from bridge.providers.items import Item, ToolCall, ToolResult


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
