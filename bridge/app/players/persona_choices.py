"""Which persona each player chose for their private conversations (``/ai persona``), kept in
the store (`bridge.store.player_state`) so every bridge of a network speaks to them with it.

A choice naming a soul the folder no longer has is kept (the soul may come back with the next
reload) but not used: that player's conversations speak as the ``persona.private`` default
meanwhile. Before the store kept them they lived in ``data/persona-choices.json``
(``{"version": 1, "players": {"<uuid>": "<soul name>", ...}}``); `parse_file` reads it for the
import at first start (`bridge.app.players.state_import`).
"""

from __future__ import annotations

import logging
import re

from bridge.app.players.state_files import PLAYER_UUID, versioned_players
from bridge.control import ControlPlane
from bridge.control.souls_files import SOUL_NAME, Soul
from bridge.errors import StoreError
from bridge.executors import Pool, run_in
from bridge.store.player_state import PlayerState
from bridge.turns.ports import PlayerRef

FILE_NAME = "persona-choices.json"
MAX_PLAYERS = 100_000
_NAME = re.compile(SOUL_NAME)
log = logging.getLogger(__name__)


class PersonaChoices:
    """The choices, read from the store when built and again by ``reload``."""

    def __init__(self, store: PlayerState) -> None:
        self._store = store
        self.players: dict[str, str] = {}
        try:
            self.players.update(store.persona_choices())
        except StoreError as exc:
            log.error("persona choices not read (the default persona meanwhile): %s", exc)

    def chosen(self, player_uuid: str) -> str | None:
        return self.players.get(player_uuid)

    async def choose(self, player_uuid: str, soul: str | None) -> None:
        """``soul`` for the player from now on (None: back to the default), stored;
        ``StoreError`` when the store cannot (the choice holds in this bridge meanwhile)."""
        if soul is None:
            self.players.pop(player_uuid, None)
        else:
            self.players[player_uuid] = soul
        await run_in(Pool.STORE, self._store.choose_persona, player_uuid, soul)

    async def reload(self) -> None:
        try:
            stored = await run_in(Pool.STORE, self._store.persona_choices)
        except StoreError as exc:
            log.info("persona choices not read again: %s", exc)
            return
        self.players.clear()
        self.players.update(stored)


def parse_file(raw: bytes) -> dict[str, str]:
    """The choices of a ``persona-choices.json``; ``ValueError`` naming what is wrong."""
    players = versioned_players(raw, "{...}")
    if not isinstance(players, dict) or len(players) > MAX_PLAYERS:
        raise ValueError(f"players must map at most {MAX_PLAYERS} UUIDs to soul names")
    for player, soul in players.items():
        if not PLAYER_UUID.fullmatch(player):
            raise ValueError(f"players: {player!r} is not a lower-case UUID")
        if not isinstance(soul, str) or not _NAME.fullmatch(soul):
            raise ValueError(f"players[{player!r}] is not a soul name")
    return dict(players)


def soul_for(
    plane: ControlPlane, choices: PersonaChoices | None, owner: PlayerRef | None
) -> Soul | None:
    """The soul of the public lane (``owner`` None) or of ``owner``'s private lane: the
    player's own choice (``/ai persona``) while its soul exists, else ``config.yml``'s
    default of the lane type."""
    if owner is not None and choices is not None:
        chosen = choices.chosen(owner.uuid)
        if chosen is not None and chosen in plane.souls:
            return plane.souls[chosen]
    name = plane.config.persona.public if owner is None else plane.config.persona.private
    return None if name is None else plane.souls.get(name)
