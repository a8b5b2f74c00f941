"""Recall over the archive: each archived turn is also indexed as a ``conversation`` entry.

An entry is the turn's visible text (what the players asked, what the assistant answered; no
tool calls, no tool results, no reasoning), as the archive holds it (redacted), cut to
`MAX_MEMORY_CHARS`. Its owner is the player of the turn's private lane, or nobody for a public
turn: a search finds the asker's own private conversations and the public ones, never another
player's private lane (the same owner filter as every memory). A public turn that took a
personal tool result was its asker's alone and is not indexed. A player's entries go with
``/mineclaw memory forget all``, one by its id, and a conversation's with ``/ai delete``; a
turn still running when its player forgot what it said is not indexed when it ends
(`bridge.memory.forgotten`).

`IndexedArchive` stands in for the archive in a lane's turn engine: the turn is archived first
(that must succeed), then indexed; an index that fails costs the turn its entry, never the turn.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Protocol

from bridge.errors import StoreError
from bridge.memory.records import MAX_MEMORY_CHARS, SERVER_OWNER, Memory
from bridge.memory.store import MemoryStore
from bridge.store.archive import ArchivedTurn

log = logging.getLogger(__name__)


class Archive(Protocol):
    def append(self, turn: ArchivedTurn) -> None: ...


def conversation_text(turn: ArchivedTurn) -> str:
    """``Steve: question`` and ``assistant: answer`` lines of the turn, cut to the limit."""
    lines = []
    for item in turn.items:
        if not isinstance(item, dict):
            continue
        kind, text = item.get("kind"), item.get("text")
        if not isinstance(text, str) or not text.strip():
            continue
        if kind == "player":
            who = item.get("player")
            lines.append(f"{who if isinstance(who, str) and who else 'someone'}: {text}")
        elif kind == "assistant_text":
            lines.append(f"assistant: {text}")
    joined = " ".join(" ".join(lines).split())
    return joined[:MAX_MEMORY_CHARS]


def conversation_entry(
    turn: ArchivedTurn, owner_uuid: str | None, *, lane_id: str | None = None
) -> Memory | None:
    """The index entry of ``turn`` (None: nothing to index). ``owner_uuid``: the private
    lane's player, None for a public turn; a public turn that took a personal result was its
    asker's alone (answered to them only) and is not indexed for everyone. ``lane_id``: the
    entry's origin (a private conversation's entries are forgotten with it); the session's id
    when not given."""
    if owner_uuid is None and turn.holds_personal_result():
        return None
    text = conversation_text(turn)
    if not text:
        return None
    return Memory(
        memory_id=turn.turn_id,
        scope="conversation",
        owner_uuid=owner_uuid or SERVER_OWNER,
        owner_name=turn.player,
        text=text,
        source="archive",
        created_at=turn.ended_at,
        origin=lane_id or turn.session_id,
    )


class IndexedArchive:
    """The archive of one lane, indexing each turn it stores (called from a worker thread)."""

    def __init__(
        self,
        archive: Archive,
        store: MemoryStore,
        owner_uuid: str | None,
        *,
        lane_id: str | None = None,
        enabled: Callable[[], bool] = lambda: True,
    ) -> None:
        """``enabled``: ``memory.enabled`` in force (off: turns are archived, not indexed);
        ``lane_id``: the lane's id, each entry's origin."""
        self._archive = archive
        self._store = store
        self._owner_uuid = owner_uuid
        self._lane_id = lane_id
        self._enabled = enabled

    def append(self, turn: ArchivedTurn) -> None:
        self._archive.append(turn)
        if not self._enabled():
            return
        entry = conversation_entry(turn, self._owner_uuid, lane_id=self._lane_id)
        if entry is None:
            return
        owner = self._owner_uuid
        if owner is not None and not self._store.recently_forgotten.allows(
            owner, entry.text, turn.started_at
        ):
            # Its player forgot what it said while it ran: recall must not bring it back.
            log.info("turn %s not indexed: its player forgot what it said", turn.turn_id)
            return
        try:
            self._store.add(entry)
        except StoreError as exc:
            log.error("turn %s not indexed for recall: %s", turn.turn_id, exc)
