"""The per-player files of the bridges before the store kept that state, imported into the
store at start (`bridge.store.player_state`), then set aside.

``data/conversations.json``, ``data/persona-choices.json`` and ``data/listen-optouts.json``
are read as they were (a file that does not parse is set aside as ``.bad`` with an error in the
log, as before), stored for every player the store does not know yet (in a network each
bridge imports its own files; the first to store a player's state wins), and renamed
``<name>.imported`` once stored, so a later start does not import them again and the owner can
still read what they held. A file that cannot be stored now stays and is imported at the next
start.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path

from bridge.app.players import conversation_state, listen_optouts, persona_choices
from bridge.app.players.state_files import read_state
from bridge.conversations.keeper import ConversationKeeper
from bridge.errors import StoreError
from bridge.store.player_state import PlayerState
from bridge.turns.lanes import private_lane_id

log = logging.getLogger(__name__)

IMPORTED_SUFFIX = ".imported"


def import_files(data_dir: Path, store: PlayerState) -> list[str]:
    """Import what the data folder's files hold; the names of the files imported. Blocking."""
    imported: list[str] = []
    conversations = data_dir / conversation_state.FILE_NAME
    if conversations.exists():
        shelves = read_state(conversations, conversation_state.parse_file, None, "not imported")
        if shelves is not None and _stored(
            conversations,
            lambda: ConversationKeeper(store, private_lane_id).import_players(shelves),
        ):
            imported.append(conversations.name)
    choices = data_dir / persona_choices.FILE_NAME
    if choices.exists():
        chosen = read_state(choices, persona_choices.parse_file, None, "not imported")
        if chosen is not None and _stored(choices, lambda: store.import_persona_choices(chosen)):
            imported.append(choices.name)
    optouts = data_dir / listen_optouts.FILE_NAME
    if optouts.exists():
        players = read_state(optouts, listen_optouts.parse_file, None, "not imported")
        if players is not None and _stored(optouts, lambda: store.import_listen_optouts(players)):
            imported.append(optouts.name)
    return imported


def _stored(path: Path, store: Callable[[], object]) -> bool:
    try:
        store()
    except StoreError as exc:
        log.error(
            "%s: not imported into the store yet (tried again at the next start): %s", path, exc
        )
        return False
    aside = path.with_name(path.name + IMPORTED_SUFFIX)
    try:
        os.replace(path, aside)
    except OSError as exc:  # imported again next time: every import keeps what is stored
        log.error("%s: imported, but could not be set aside: %s", path, exc.strerror)
        return True
    log.info("%s: imported into the store; set aside as %s", path, aside.name)
    return True
