"""The memories recalled before a turn, as the item its requests carry.

The snapshot's recall port (`bridge.turns.ports.MemoryRecallPort`) answers with a block the
bridge wrote (a heading and the memories); it goes to the model as a message from nobody in
particular, like the summary of compacted turns, and only in this turn's requests: the turn's
items, which the session and the archive keep, never hold it.
"""

from __future__ import annotations

import logging

from bridge.providers.items import Item, PlayerMessage
from bridge.turns.ports import TurnContext, TurnSnapshot

log = logging.getLogger(__name__)


async def recalled_items(
    snapshot: TurnSnapshot, context: TurnContext, question: str
) -> tuple[Item, ...]:
    """The recalled block as one item, or nothing (no port, nothing found, a failure)."""
    port = snapshot.recall
    if port is None or not question:
        return ()
    try:
        block = await port.recall(context, question)
    except Exception:  # memory must never cost a player their answer
        log.exception("recall for turn %s failed", context.turn_id)
        return ()
    return (PlayerMessage(player=None, text=block),) if block else ()
