"""Replaying the bridge's own session as Responses ``input`` items.

The server keeps no state (``store: false``), so every request carries the history, and only in
the shapes a request accepts: assistant text becomes a plain input message (role and content),
output-only fields (``id`` of messages and calls, ``status``, ``created_by``) are dropped, and a
reasoning item goes back with its ``encrypted_content`` and only directly before the item it
preceded. Function calls without an output, and outputs without a call, are never replayed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bridge.providers.identity import IdentitySettings, responses_user_message
from bridge.providers.items import (
    ASSISTANT_SIDE,
    AssistantText,
    Item,
    PlayerMessage,
    Reasoning,
    ToolCall,
    ToolResult,
)
from bridge.providers.projection import drop_unpaired_tool_items

PROTOCOL = "openai_responses"


def normalize_reasoning_item(raw: dict[str, Any]) -> dict[str, Any] | None:
    """The input form of a reasoning output item, or None when it cannot be replayed statelessly
    (without ``encrypted_content`` the server would need its stored copy, which it has not)."""
    encrypted = raw.get("encrypted_content")
    item_id = raw.get("id")
    if not isinstance(encrypted, str) or not encrypted or not isinstance(item_id, str):
        return None
    summary = [
        {"type": "summary_text", "text": part["text"]}
        for part in raw.get("summary") or ()
        if isinstance(part, dict) and isinstance(part.get("text"), str)
    ]
    return {"type": "reasoning", "id": item_id, "summary": summary, "encrypted_content": encrypted}


def _wire(item: Item, identity: IdentitySettings) -> dict[str, Any] | None:
    if isinstance(item, PlayerMessage):
        return dict(responses_user_message(item, identity))
    if isinstance(item, AssistantText):
        return {"role": "assistant", "content": item.text}
    if isinstance(item, ToolCall):
        return {
            "type": "function_call",
            "call_id": item.call_id,
            "name": item.name,
            "arguments": item.arguments,
        }
    if isinstance(item, ToolResult):
        return {"type": "function_call_output", "call_id": item.call_id, "output": item.output}
    if item.protocol == PROTOCOL and item.opaque is not None:
        return normalize_reasoning_item(item.opaque)
    return None


def input_items(items: Sequence[Item], identity: IdentitySettings) -> list[dict[str, Any]]:
    """The ``input`` list for a request whose conversation is ``items``."""
    # Reasoning of the other protocol means nothing here; it is invisible, not a gap.
    own = [i for i in items if not (isinstance(i, Reasoning) and i.protocol != PROTOCOL)]
    kept = drop_unpaired_tool_items(own)
    wire: list[dict[str, Any] | None] = [
        _wire(item, identity) if item is not None else None for item in kept
    ]
    # Walk backwards so each reasoning item knows whether what it preceded is still sent.
    next_sent_is_output = False
    for index in range(len(wire) - 1, -1, -1):
        item = kept[index]
        if isinstance(item, Reasoning):
            if not next_sent_is_output:
                wire[index] = None
            next_sent_is_output = wire[index] is not None
        else:
            next_sent_is_output = wire[index] is not None and isinstance(item, ASSISTANT_SIDE)
    return [entry for entry in wire if entry is not None]
