"""Sessions that survive a restart: a lane's session rebuilt from the archive and the session
records, through its last compaction.

A lane comes back on the session it started last (``SessionRecords.current_session``), so a
``/mineclaw clear`` before a restart stays cleared. Its live state is what it was: the summary
of its last compaction, then every turn archived after the last turn that summary covered. A
turn enters the archive whole or not at all, and a compaction is recorded in the same step as
it is swapped in, so nothing half-done comes back. Items are restored as the archive holds
them (redacted), which is what every later request would have carried anyway. A public turn
that took a personal tool result was its asker's alone and never entered the session: it stays
out of the restored one too.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Protocol

from pydantic import TypeAdapter, ValidationError

from bridge.providers.items import Item
from bridge.store.archive import ArchivedTurn
from bridge.store.sessions import SessionRecords
from bridge.turns.lanes import PRIVATE_LANE_PREFIX
from bridge.turns.session import CompletedTurn, PublicSession, SessionState, new_session_id
from bridge.turns.tokens import TokenCalibration

log = logging.getLogger(__name__)

_ITEMS: TypeAdapter[tuple[Item, ...]] = TypeAdapter(tuple[Item, ...])


class ArchiveReader(Protocol):
    def turns_of(self, session_id: str) -> list[ArchivedTurn]: ...


def restored_state(
    records: SessionRecords, archive: ArchiveReader, lane_id: str
) -> SessionState | None:
    """The lane's session as it stood when the last run ended; None if it never had one.
    Raises ``StoreError`` when the databases cannot be read."""
    session_id = records.current_session(lane_id)
    if session_id is None:
        return None
    turns: Sequence[ArchivedTurn] = archive.turns_of(session_id)
    summary: str | None = None
    compaction = records.last_compaction(session_id)
    if compaction is not None:
        ids = [turn.turn_id for turn in turns]
        if compaction.through_turn_id in ids:
            turns = turns[ids.index(compaction.through_turn_id) + 1 :]
            summary = compaction.summary
        else:  # another archive beside this sessions database: replay what is there
            log.warning(
                "session %s: the turn its last compaction covered (%s) is not in the archive;"
                " restoring its archived turns without the summary",
                session_id,
                compaction.through_turn_id,
            )
    completed: list[CompletedTurn] = []
    public = not lane_id.startswith(PRIVATE_LANE_PREFIX)
    for turn in turns:
        if public and turn.holds_personal_result():
            # Answered to its asker alone and never published: everyone replays this session.
            continue
        try:
            items = _ITEMS.validate_python(turn.items)
        except ValidationError as exc:
            # Whole turns only: one unreadable item leaves its turn out, never half of it.
            log.warning("session %s: archived turn %s left out: %s", session_id, turn.turn_id, exc)
            continue
        completed.append(CompletedTurn(turn.turn_id, turn.player, items))
    return SessionState(session_id, tuple(completed), summary)


def restored_session(
    records: SessionRecords,
    archive: ArchiveReader,
    lane_id: str,
    *,
    id_factory: Callable[[], str] = new_session_id,
    calibration: TokenCalibration | None = None,
    wall_clock: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> PublicSession:
    """The lane's session, restored, or a new one; every session it starts from now on (the
    first, and each ``clear``) is recorded for the next restart."""

    def started(session_id: str) -> None:
        records.session_started(lane_id, session_id, wall_clock())

    state = restored_state(records, archive, lane_id)
    if state is not None and (state.turns or state.summary):
        log.info(
            "lane %s: session %s restored (%d turns%s)",
            lane_id,
            state.session_id,
            len(state.turns),
            ", with a summary" if state.summary else "",
        )
    return PublicSession(
        id_factory=id_factory, calibration=calibration, state=state, on_new_session=started
    )


class SessionStore:
    """Where a runtime's lanes keep their sessions across restarts. ``scope``: the server's
    key in a network of servers ("" for the default server), so each server's public session
    comes back as its own. A private lane is the player's, not the server's: its key has no
    scope, so the player's conversation is one across the network (``bridge.app.network.network``
    forgets an idle private lane on the server a player left, and the next server restores it
    from here)."""

    def __init__(self, records: SessionRecords, archive: ArchiveReader, scope: str = "") -> None:
        self.records = records
        self.archive = archive
        self.scope = scope

    def key(self, lane_id: str) -> str:
        if lane_id.startswith(PRIVATE_LANE_PREFIX):
            return lane_id
        return f"{lane_id}@{self.scope}" if self.scope else lane_id

    def session(self, lane_id: str, *, id_factory: Callable[[], str]) -> PublicSession:
        """The lane's session, restored or new. Raises ``StoreError``."""
        return restored_session(
            self.records, self.archive, self.key(lane_id), id_factory=id_factory
        )
