"""A kept question sent again whose turn is in the archive already: answered from there.

A bridge commits a turn (archive row and all) and is then paused, or its link drops, before the
answer reaches the plugin; the plugin keeps the question and sends it again (``resent``) to the
bridge it links to next. Run again, it would be archived twice and its asker might read two
answers. The archive holds each turn's question id in the turn's own commit
(`bridge.store.archive`), so the bridge sent it again looks it up first and sends the archived
answer instead (`bridge.app.lanes.turn_lanes.TurnLanes.answer_archived`).
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from typing import Protocol

from bridge.app.lanes.output import LinkTurnOutput
from bridge.app.lanes.turn_lanes import TurnLanes
from bridge.app.serving.served import NotConfiguredError
from bridge.errors import StoreError
from bridge.executors import Pool, run_in
from bridge.store.archive import TurnArchive
from bridge.turns.ports import PlayerRef, TurnLimits, TurnSnapshot

log = logging.getLogger(__name__)


class AskHost(Protocol):
    archive: TurnArchive
    lanes: TurnLanes

    def snapshot(self, granted: Collection[str] | None) -> TurnSnapshot: ...


async def answered_from_archive(
    host: AskHost,
    ask_id: str | None,
    resent: bool | None,
    player: PlayerRef,
    output: LinkTurnOutput,
) -> bool:
    """Whether the question ``ask_id``, sent again, was answered from the archive now (its
    lines and ``ask.done`` on their way). A first sending is never looked up; an archive that
    cannot be read answers False (the turn that runs then cannot be archived either)."""
    if ask_id is None or not resent:
        return False
    try:
        turn = await run_in(Pool.STORE, host.archive.turn_of_ask, ask_id)
    except StoreError as exc:
        log.warning("question %s not looked up in the archive: %s", ask_id, exc)
        return False
    if turn is None:
        return False
    try:
        limits = host.snapshot(None).limits
    except NotConfiguredError:
        limits = TurnLimits()  # the answer is laid out all the same: the turn was answered
    log.info(
        "question %s sent again was answered by turn %s: its answer again", ask_id, turn.turn_id
    )
    await host.lanes.answer_archived(ask_id, turn, player, output, limits)
    return True
