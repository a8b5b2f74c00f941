"""Every player's private conversations (`bridge.conversations.shelf`), remembered across
restarts in ``data/conversations.json`` (`bridge.app.players.state_files`), so the active one is
still the active one after a restart.

The file holds ``{"version": 1, "players": {"<uuid>": {"active": "2", "next_id": 3,
"conversations": [{"id": "1", "title": ..., "started": ..., "last_active": ...}, ...]}}}``.
A player it does not name has conversation ``1`` only. Like the persona choices it is the
bridge's, shared by its servers: a player's conversations are theirs across a network.
"""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime
from pathlib import Path

from pydantic import TypeAdapter, ValidationError

from bridge.app.players.state_files import PLAYER_UUID, read_state, versioned_players, write_state
from bridge.conversations.shelf import PlayerConversations, Shelf, first, lane_suffix
from bridge.turns.lanes import private_lane_id

FILE_NAME = "conversations.json"
MAX_PLAYERS = 100_000
_PLAYERS: TypeAdapter[dict[str, PlayerConversations]] = TypeAdapter(dict[str, PlayerConversations])


class ConversationState:
    """The shelves of one bridge; ``save`` after every change."""

    def __init__(self, data_dir: Path) -> None:
        self.path = data_dir / FILE_NAME
        self._lock = threading.Lock()
        self.players: dict[str, PlayerConversations] = read_state(
            self.path, _parse, {}, "every player has one private conversation"
        )

    def shelf(self, player_uuid: str, now: datetime | None = None) -> Shelf:
        """The player's conversations (conversation 1 alone when they never had more)."""
        state = self.players.get(player_uuid)
        if state is None:
            state = self.players[player_uuid] = first(now or datetime.now(UTC))
        return Shelf(state)

    def lane_id(self, player_uuid: str) -> str:
        """The lane of the player's active conversation."""
        state = self.players.get(player_uuid)
        active = "1" if state is None else state.active
        return self.lane_of(player_uuid, active)

    @staticmethod
    def lane_of(player_uuid: str, conversation_id: str) -> str:
        return private_lane_id(player_uuid) + lane_suffix(conversation_id)

    def save(self) -> None:
        """Replace the file with the shelves as they are now (``StoreError`` when it cannot be
        written). Blocking: run it in a worker thread."""
        with self._lock:
            players = {
                uuid: state.model_dump(mode="json") for uuid, state in sorted(self.players.items())
            }
            write_state(self.path, json.dumps({"version": 1, "players": players}).encode())


def _parse(raw: bytes) -> dict[str, PlayerConversations]:
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
