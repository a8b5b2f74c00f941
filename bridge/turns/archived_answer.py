"""The answer of a turn already in the archive, laid out for chat again.

A bridge that committed a turn and was then paused (or lost its link) before the answer
reached the plugin leaves the question kept there; the plugin sends it again to the next
bridge, which finds the turn by the question's id (`bridge.store.archive.TurnArchive.turn_of_ask`)
and sends this answer instead of running the question a second time
(`bridge.app.lanes.turn_lanes.TurnLanes.answer_archived`).
"""

from __future__ import annotations

from bridge.store.archive import ArchivedTurn
from bridge.turns.ports import TurnLimits
from bridge.turns.reply_layout import layout_reply


def archived_reply(turn: ArchivedTurn) -> str:
    """The text the model answered the turn with: its visible text after the last tool result
    (the engine's reply is the text of the request that asked for no tool). Archived items
    are redacted already."""
    items = [item for item in turn.items if isinstance(item, dict)]
    last_result = max(
        (index for index, item in enumerate(items) if item.get("kind") == "tool_result"),
        default=-1,
    )
    texts = (
        str(item.get("text", ""))
        for item in items[last_result + 1 :]
        if item.get("kind") == "assistant_text"
    )
    return "".join(texts).strip()


def archived_lines(turn: ArchivedTurn, limits: TurnLimits) -> tuple[str, ...]:
    """The chat lines of the archived answer, laid out as the engine lays out a reply."""
    return layout_reply(archived_reply(turn), limits.reply_layout)
