"""Every player's private conversations (`bridge.conversations.shelf`), kept in the store
(`bridge.conversations.keeper` over `bridge.store.player_state`: SQLite beside the archive, or
the network's PostgreSQL), so any bridge that takes a server serves its players' conversations
as the last one did, and a conversation's number is never given twice.

Before the store kept them they lived in ``data/conversations.json``: ``{"version": 1,
"players": {"<uuid>": {"active": "2", "next_id": 3, "conversations": [{"id": "1", "title": ...,
"started": ..., "last_active": ...}, ...]}}}``. `parse_file` reads that file for the import at
first start (`bridge.app.players.state_import`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from pydantic import TypeAdapter, ValidationError

from bridge.app.players.state_files import PLAYER_UUID, versioned_players
from bridge.conversations.keeper import ConversationKeeper
from bridge.conversations.shelf import PlayerConversations, Shelf
from bridge.store.player_state import PlayerState
from bridge.turns.lanes import private_lane_id

FILE_NAME = "conversations.json"
MAX_PLAYERS = 100_000
_PLAYERS: TypeAdapter[dict[str, PlayerConversations]] = TypeAdapter(dict[str, PlayerConversations])

T = TypeVar("T")


class ConversationState:
    """The players' conversations, shared by the servers of a bridge and by its network."""

    def __init__(self, store: PlayerState) -> None:
        self.keeper = ConversationKeeper(store, private_lane_id)

    def shelf(self, player_uuid: str) -> Shelf:
        """The player's conversations as last read. Change them with `change`."""
        return self.keeper.shelf(player_uuid)

    def lane_id(self, player_uuid: str) -> str:
        """The lane of the player's active conversation."""
        return self.keeper.lane_id(player_uuid)

    def lane_of(self, player_uuid: str, conversation_id: str) -> str:
        return self.keeper.lane_of(player_uuid, conversation_id)

    async def refresh(self, player_uuid: str) -> Shelf:
        return await self.keeper.refresh(player_uuid)

    async def change(self, player_uuid: str, make: Callable[[Shelf], T]) -> T:
        """``make`` on the player's shelf read fresh, saved (`ConversationKeeper.change`)."""
        return await self.keeper.change(player_uuid, make)

    def forget(self) -> None:
        """Read every player's conversations from the store again (a server taken over or
        linked again: another bridge may have changed them meanwhile)."""
        self.keeper.forget()


def parse_file(raw: bytes) -> dict[str, PlayerConversations]:
    """The shelves of a ``conversations.json``; ``ValueError`` naming what is wrong."""
    players = versioned_players(raw, "{...}")
    if not isinstance(players, dict) or len(players) > MAX_PLAYERS:
        raise ValueError(f"players must map at most {MAX_PLAYERS} UUIDs to conversations")
    for player in players:
        if not PLAYER_UUID.fullmatch(player):
            raise ValueError(f"players: {player!r} is not a lower-case UUID")
    try:
        parsed = _PLAYERS.validate_python(players)
    except ValidationError as exc:
        problem = exc.errors()[0]
        where = ".".join(str(part) for part in problem["loc"])
        raise ValueError(f"players.{where}: {problem['msg']}") from None
    for uuid, state in parsed.items():
        ids = [c.id for c in state.conversations]
        if len(set(ids)) != len(ids) or state.active not in ids:
            raise ValueError(f"players.{uuid}: ids repeat or the active one is not listed")
    return parsed
