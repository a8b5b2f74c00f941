"""Which persona each player chose for their private conversations (``/ai persona``),
remembered across restarts in ``data/persona-choices.json`` (`bridge.app.players.state_files`).

The file holds ``{"version": 1, "players": {"<uuid>": "<soul name>", ...}}``. A choice naming a
soul the folder no longer has is kept (the soul may come back with the next reload) but not
used: that player's conversations speak as the ``persona.private`` default meanwhile.
"""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path

from bridge.app.players.state_files import read_state, versioned_players, write_state
from bridge.control.souls_files import SOUL_NAME

FILE_NAME = "persona-choices.json"
MAX_PLAYERS = 100_000
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_NAME = re.compile(SOUL_NAME)


class PersonaChoices:
    """The choices of one bridge, shared by its servers; ``save`` after every change."""

    def __init__(self, data_dir: Path) -> None:
        self.path = data_dir / FILE_NAME
        self._lock = threading.Lock()
        self.players: dict[str, str] = read_state(
            self.path, _parse, {}, "every player speaks with the default persona"
        )

    def chosen(self, player_uuid: str) -> str | None:
        return self.players.get(player_uuid)

    def choose(self, player_uuid: str, soul: str | None) -> None:
        """``soul`` for the player from now on; None: back to the default."""
        if soul is None:
            self.players.pop(player_uuid, None)
        else:
            self.players[player_uuid] = soul

    def save(self) -> None:
        """Replace the file with the choices as they are now (``StoreError`` when it cannot be
        written). Blocking: run it in a worker thread."""
        with self._lock:
            body = json.dumps({"version": 1, "players": dict(sorted(self.players.items()))})
            write_state(self.path, body.encode())


def _parse(raw: bytes) -> dict[str, str]:
    players = versioned_players(raw, "{...}")
    if not isinstance(players, dict) or len(players) > MAX_PLAYERS:
        raise ValueError(f"players must map at most {MAX_PLAYERS} UUIDs to soul names")
    for player, soul in players.items():
        if not _UUID.fullmatch(player):
            raise ValueError(f"players: {player!r} is not a lower-case UUID")
        if not isinstance(soul, str) or not _NAME.fullmatch(soul):
            raise ValueError(f"players[{player!r}] is not a soul name")
    return dict(players)
