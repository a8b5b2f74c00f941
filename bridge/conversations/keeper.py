"""Every player's conversations, kept in the store (`bridge.store.player_state`) so any bridge
of a network serves a player's conversations as the last one did.

Reads are cached per player (the lane of a question is chosen on the event loop, without a
round trip); a change is made on a fresh read and saved under its version, read again and made
again when another bridge changed the player's shelf in between (`ShelfChanged`). The cache is
forgotten whenever this bridge may have missed changes made elsewhere (``forget``: a server
taken over or linked again), so the next question reads the store. When the store cannot be
reached a change still holds in this bridge's memory (the player is not refused for it) and the
log says it was not saved; the next change that reaches the store saves it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TypeVar

from bridge.conversations.shelf import (
    MAX_ID,
    Conversation,
    PlayerConversations,
    Shelf,
    first,
    lane_suffix,
)
from bridge.errors import StoreError
from bridge.executors import Pool, run_in
from bridge.store.player_state import (
    PlayerState,
    ShelfChanged,
    StoredConversation,
    StoredShelf,
)

log = logging.getLogger(__name__)

T = TypeVar("T")

MAX_TRIES = 5
"""Reads and redoes of one change while other bridges keep changing the same shelf."""
MAX_CACHED = 10_000
"""Players whose shelf is cached at most; past it the cache starts over (read again)."""


@dataclass
class _Cached:
    state: PlayerConversations
    version: int
    saved: bool = True
    """False: a change this bridge made is not in the store yet."""


class ConversationKeeper:
    """``private_lane``: a player's plain private lane id (conversation 1's lane)."""

    def __init__(self, store: PlayerState, private_lane: Callable[[str], str]) -> None:
        self._store = store
        self._private_lane = private_lane
        self._cache: dict[str, _Cached] = {}
        self._locks: dict[str, asyncio.Lock] = {}

    # ---- reads

    def shelf(self, player_uuid: str) -> Shelf:
        """The player's conversations as last read (read now when not cached: a small row, as
        the session records are read). Change them with `change`, not through this shelf."""
        return Shelf(self._entry(player_uuid).state)

    def lane_id(self, player_uuid: str) -> str:
        """The lane of the player's active conversation."""
        return self.lane_of(player_uuid, self._entry(player_uuid).state.active)

    def lane_of(self, player_uuid: str, conversation_id: str) -> str:
        return self._private_lane(player_uuid) + lane_suffix(conversation_id)

    def forget(self) -> None:
        """Read every player's shelf from the store again at its next use (changes this bridge
        could not save yet are kept)."""
        self._cache = {uuid: entry for uuid, entry in self._cache.items() if not entry.saved}

    async def refresh(self, player_uuid: str) -> Shelf:
        """The player's shelf read from the store now (the cached one when it cannot be)."""
        try:
            entry = await run_in(Pool.STORE, self._read, player_uuid)
        except StoreError as exc:
            log.error("conversations of %s not read: %s", player_uuid, exc)
            return self.shelf(player_uuid)
        return Shelf(entry.state)

    # ---- changes

    async def change(self, player_uuid: str, make: Callable[[Shelf], T]) -> T:
        """``make``'s result after it changed the player's shelf, read fresh, and the change
        was saved. ``make`` may run more than once (another bridge changed the shelf between
        the read and the save): it must do nothing but change the shelf and say what it did."""
        # One change of a player at a time on this bridge (the version check is what keeps
        # bridges apart; the lock only spares this one needless redoes).
        lock = self._locks.setdefault(player_uuid, asyncio.Lock())
        try:
            async with lock:
                return await self._change(player_uuid, make)
        finally:
            if not lock.locked():
                self._locks.pop(player_uuid, None)

    async def _change(self, player_uuid: str, make: Callable[[Shelf], T]) -> T:
        for _ in range(MAX_TRIES):
            try:
                entry = await run_in(Pool.STORE, self._read, player_uuid)
            except StoreError as exc:
                log.error("conversations of %s not read: %s", player_uuid, exc)
                return self._change_in_memory(player_uuid, make)
            before = {c.id for c in entry.state.conversations}
            result = make(Shelf(entry.state))
            try:
                entry.version = await run_in(Pool.STORE, self._save, player_uuid, entry, before)
                entry.saved = True
            except ShelfChanged:
                continue
            except StoreError as exc:
                entry.saved = False
                log.error("conversations of %s not saved: %s", player_uuid, exc)
            return result
        log.error("conversations of %s not saved: changed by other bridges meanwhile", player_uuid)
        return self._change_in_memory(player_uuid, make)

    def _change_in_memory(self, player_uuid: str, make: Callable[[Shelf], T]) -> T:
        entry = self._entry(player_uuid, read=False)
        result = make(Shelf(entry.state))
        entry.saved = False
        return result

    # ---- the store (blocking parts, in a worker thread)

    def _entry(self, player_uuid: str, *, read: bool = True) -> _Cached:
        entry = self._cache.get(player_uuid)
        if entry is not None:
            return entry
        if read:
            try:
                return self._read(player_uuid)
            except StoreError as exc:
                log.error("conversations of %s not read: %s", player_uuid, exc)
        entry = _Cached(first(datetime.now(UTC)), 0, saved=True)
        return self._keep(player_uuid, entry)

    def _read(self, player_uuid: str) -> _Cached:
        kept = self._cache.get(player_uuid)
        stored = self._store.shelf(player_uuid)
        if (
            kept is not None
            and not kept.saved
            and (stored is None or stored.version == kept.version)
        ):
            return kept  # a change not saved yet, and nobody changed the stored one since
        if stored is None or not stored.conversations:
            entry = _Cached(first(datetime.now(UTC)), 0 if stored is None else stored.version)
        else:
            entry = _Cached(from_stored(stored), stored.version)
        return self._keep(player_uuid, entry)

    def _save(self, player_uuid: str, entry: _Cached, before: set[str]) -> int:
        state = entry.state
        gone = [
            self.lane_of(player_uuid, cid)
            for cid in sorted(before - {c.id for c in state.conversations})
        ]
        return self._store.save_shelf(player_uuid, to_stored(state, entry.version), gone)

    def _keep(self, player_uuid: str, entry: _Cached) -> _Cached:
        if len(self._cache) >= MAX_CACHED and player_uuid not in self._cache:
            self.forget()
        self._cache[player_uuid] = entry
        return entry

    def import_players(self, players: dict[str, PlayerConversations]) -> int:
        """Store the shelves of players who have none stored (a file of the bridges before the
        store kept them); how many were stored. Blocking."""
        stored = 0
        for player_uuid, state in sorted(players.items()):
            if self._store.import_shelf(player_uuid, to_stored(state, 0)):
                stored += 1
        return stored


def to_stored(state: PlayerConversations, version: int) -> StoredShelf:
    return StoredShelf(
        int(state.active),
        state.next_id,
        tuple(
            StoredConversation(int(c.id), c.title, c.started, c.last_active)
            for c in state.conversations
        ),
        version,
    )


def from_stored(stored: StoredShelf) -> PlayerConversations:
    conversations = [
        Conversation(id=str(c.id), title=c.title, started=c.started, last_active=c.last_active)
        for c in stored.conversations
    ]
    ids = {c.id for c in conversations}
    active = str(stored.active) if str(stored.active) in ids else conversations[0].id
    next_id = min(max(2, stored.next_id), MAX_ID)
    return PlayerConversations(active=active, next_id=next_id, conversations=conversations)
