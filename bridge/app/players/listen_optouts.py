"""The players who opted out of listen mode (``/mineclaw listen ignore-me``), kept in the store
(`bridge.store.player_state`) so every bridge of a network leaves them out.

Before the store kept them they lived in ``data/listen-optouts.json`` (``{"version": 1,
"players": ["<uuid>", ...]}``); `parse_file` reads it for the import at first start
(`bridge.app.players.state_import`).
"""

from __future__ import annotations

import logging

from bridge.app.players.state_files import PLAYER_UUID, versioned_players
from bridge.errors import StoreError
from bridge.executors import Pool, run_in
from bridge.store.player_state import PlayerState

FILE_NAME = "listen-optouts.json"
MAX_PLAYERS = 100_000
log = logging.getLogger(__name__)


class ListenOptOuts:
    """``players`` is the live set every server's listen mode shares
    (``ListenMode.share_ignored``), read from the store when built and again by ``reload``."""

    def __init__(self, store: PlayerState) -> None:
        self._store = store
        self.players: set[str] = set()
        try:
            self.players.update(store.listen_optouts())
        except StoreError as exc:
            log.error("listen opt-outs not read (nobody is opted out meanwhile): %s", exc)

    async def remember(self, player_uuid: str, opted_out: bool) -> None:
        """Store the player's choice (``players`` already holds it); ``StoreError`` when the
        store cannot (the choice holds in this bridge meanwhile)."""
        await run_in(Pool.STORE, self._store.set_listen_optout, player_uuid, opted_out)

    async def reload(self) -> None:
        """Read the set again (another bridge may have changed it); kept as it is when the
        store cannot be read."""
        try:
            stored = await run_in(Pool.STORE, self._store.listen_optouts)
        except StoreError as exc:
            log.info("listen opt-outs not read again: %s", exc)
            return
        self.players.intersection_update(stored)
        self.players.update(stored)


def parse_file(raw: bytes) -> frozenset[str]:
    """The players of a ``listen-optouts.json``; ``ValueError`` naming what is wrong."""
    players = versioned_players(raw, "[...]")
    if not isinstance(players, list) or len(players) > MAX_PLAYERS:
        raise ValueError(f"players must be a list of at most {MAX_PLAYERS} UUIDs")
    for index, player in enumerate(players):
        if not isinstance(player, str) or not PLAYER_UUID.fullmatch(player):
            raise ValueError(f"players[{index}] is not a lower-case UUID")
    return frozenset(players)
