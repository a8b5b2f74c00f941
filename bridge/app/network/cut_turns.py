"""Turns cut because this bridge stopped serving their server, and the line each asker is owed.

When a bridge loses a server (its database or the server's lease lost:
`bridge.app.network.server_leases`) the server's running turns stop at once: their answers could
not be archived (the fence refuses them) and the plugin is moving on. Their askers cannot be
told then (the link was just dropped), so each one's failure line is kept here, in this process,
and shown when the server links to this bridge again. A plugin that relinks to another bridge
is not told by it (that bridge never knew the turn); the cut is in this bridge's log either
way, so nothing is lost silently. ``docs/operations.md`` ("Nobody left in silence") says the
same for owners.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from bridge.app.chat.handler import AppHandler
from bridge.app.wiring.runtime import Runtime
from bridge.errors import MineclawError
from bridge.link.messages import OutputChat

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class _Owed:
    player_uuid: str
    player_name: str
    reason: str


class CutTurns:
    """The askers owed a failure line, by server id (they outlive a retired server's context)."""

    def __init__(self) -> None:
        self._owed: dict[str, list[_Owed]] = {}

    def cut(self, server_id: str, runtime: Runtime, reason: str) -> int:
        """Stop every running turn of the server (``reason``: why, in the asker's words) and
        keep a line for each asker; how many were stopped. A turn already committing is not
        stopped: the archive's fence decides it."""
        stopped = 0
        for lane in runtime.lanes.lanes:
            asker, turn_id = lane.engine.asker, lane.engine.turn_id
            if asker is None or not lane.engine.stop():
                continue
            stopped += 1
            self._owed.setdefault(server_id, []).append(_Owed(asker.uuid, asker.name, reason))
            log.warning(
                "server %s: turn %s of %s stopped (%s); the player is told when the server"
                " links to this bridge again",
                server_id,
                turn_id,
                asker.name,
                reason,
            )
        return stopped

    def owed(self, server_id: str) -> int:
        return len(self._owed.get(server_id, ()))

    def tell(self, server_id: str, app: AppHandler) -> None:
        """The server linked again: send each asker their line (sent without waiting for the
        answers, as the link's connect callback cannot wait for them)."""
        owed = self._owed.pop(server_id, [])
        if not owed:
            return
        chats = [
            OutputChat(
                target="player",
                player=item.player_uuid,
                text=app.runtime.text(
                    "errors.provider_failure", {"player": item.player_name, "reason": item.reason}
                ),
            )
            for item in owed
        ]
        try:
            app.output.send_soon(*chats)
        except MineclawError as exc:  # down again already: kept for the next link
            self._owed.setdefault(server_id, [])[:0] = owed
            log.info("server %s: cut turns' askers not told yet: %s", server_id, exc)
