"""The players who opted out of listen mode (``/mineclaw listen ignore-me``), remembered across
restarts in one small file of the bridge's data folder, ``data/listen-optouts.json``.

The file holds ``{"version": 1, "players": ["<uuid>", ...]}``. It is replaced whole, through a
temporary file renamed over it after an fsync, so a crash leaves the old list or the new one,
never half of either. A file that cannot be read is reported with its path and set aside
(renamed ``.bad``), never silently overwritten: the owner can still read what it held.
"""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path

from bridge.app.players.state_files import read_state, versioned_players, write_state

FILE_NAME = "listen-optouts.json"
MAX_PLAYERS = 100_000
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


class ListenOptOuts:
    """The opt-out set of one bridge: read from the file when built, written whole again by
    ``save`` after every change. ``players`` is the live set every server's listen mode shares
    (``ListenMode.share_ignored``); saves from several servers at once are serialised."""

    def __init__(self, data_dir: Path) -> None:
        self.path = data_dir / FILE_NAME
        self._lock = threading.Lock()
        self.players: set[str] = set(self.load())

    def load(self) -> frozenset[str]:
        """The remembered players; an unreadable file is set aside with an error in the log."""
        return read_state(self.path, _parse, frozenset(), "nobody is opted out")

    def save(self) -> None:
        """Replace the file with ``players`` as they are now; raises ``StoreError`` when it
        cannot be written. Blocking: run it in a worker thread."""
        with self._lock:
            body = json.dumps({"version": 1, "players": sorted(self.players)}, indent=0)
            write_state(self.path, body.encode())


def _parse(raw: bytes) -> frozenset[str]:
    players = versioned_players(raw, "[...]")
    if not isinstance(players, list) or len(players) > MAX_PLAYERS:
        raise ValueError(f"players must be a list of at most {MAX_PLAYERS} UUIDs")
    for index, player in enumerate(players):
        if not isinstance(player, str) or not _UUID.fullmatch(player):
            raise ValueError(f"players[{index}] is not a lower-case UUID")
    return frozenset(players)
