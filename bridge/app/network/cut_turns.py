"""Turns cut because this bridge stopped serving their server, and the line each asker is owed.

When a bridge loses a server (its database or the server's lease lost:
`bridge.app.network.server_leases`) the server's running turns stop at once: their answers could
not be archived (the fence refuses them) and the plugin is moving on. Their askers cannot be
told then (the link was just dropped), so each one's failure line is written to the store
(`bridge.store.player_state`'s owed lines), and whichever bridge the server links to next takes
it from there and sends it, once. When the store itself is what was lost the lines wait in this
process and are written first thing when it answers again (the next time any server links
here, or this bridge takes a lease); meanwhile a relink to this bridge still tells them. The cut
is in this bridge's log either way, so nothing is lost silently. ``docs/operations.md``
("Nobody left in silence") says the same for owners.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from datetime import UTC, datetime

from bridge.app.chat.handler import AppHandler
from bridge.app.requests.background import BackgroundTasks
from bridge.app.wiring.runtime import Runtime
from bridge.errors import MineclawError, StoreError
from bridge.executors import Pool, run_in
from bridge.link.messages import OutputChat
from bridge.store.player_state import PlayerState

log = logging.getLogger(__name__)

MAX_KEPT = 10_000
"""Lines kept in this process at most while the store cannot take them (the oldest go)."""

Owed = tuple[str, str, dict[str, object]]
"""A line owed: the server id, the asker's UUID, and what the line says (JSON)."""


class CutTurns:
    """``store``: the per-player store (None: lines are kept in this process only)."""

    def __init__(self, store: Callable[[], PlayerState | None] = lambda: None) -> None:
        self._store = store
        self._kept: list[Owed] = []
        """Lines not in the store yet (it could not be reached)."""
        self._tasks = BackgroundTasks("cut turns' lines")
        self._writing = asyncio.Lock()

    def cut(self, server_id: str, runtime: Runtime, reason: str, *, resend: bool = True) -> int:
        """Stop every running turn of the server (``reason``: why, in the asker's words), and
        empty its wait line, and owe a line to each asker; how many turns were stopped.
        ``resend``: a question the plugin kept is left for it to send again instead (not for
        a revoked server's). A turn already committing is not stopped: the archive's fence
        decides it.

        The wait line goes first: a stopped turn frees its lane, and the line would start the
        next question on a server this bridge no longer serves, whose answer nobody would see
        and whose asker (a question without an id) nobody would tell (seen in the soak)."""
        stopped = 0
        waiting = runtime.lanes.queue.take_all()
        runtime.lanes.forget_waiting_asks()
        owed: list[Owed] = []
        for entry in waiting:
            if resend and entry.kept:
                continue  # the plugin sends it again to the bridge it links to next
            line: dict[str, object] = {"player_name": entry.player.name, "reason": reason}
            owed.append((server_id, entry.player.uuid, line))
        if owed:
            self._keep(owed)
            log.warning(
                "server %s: %d questions waiting in line dropped (%s); their askers are told"
                " when the server links to a bridge again",
                server_id,
                len(owed),
                reason,
            )
        for lane in runtime.lanes.lanes:
            asker, turn_id = lane.engine.asker, lane.engine.turn_id
            if asker is None or not lane.engine.stop():
                continue
            stopped += 1
            if resend and runtime.lanes.give_up_ask(lane.lane_id):
                # The plugin kept the question (protocol 1.5, asks): it sends it again to the
                # bridge it links to next, which answers it; a line here would say it failed.
                log.warning(
                    "server %s: turn %s of %s stopped (%s); the plugin sends the question again",
                    server_id,
                    turn_id,
                    asker.name,
                    reason,
                )
                continue
            line = {
                "player_name": asker.name,
                "reason": reason,
                "turn_id": turn_id or "",
            }
            self._keep([(server_id, asker.uuid, line)])
            log.warning(
                "server %s: turn %s of %s stopped (%s); the player is told when the server"
                " links to a bridge again",
                server_id,
                turn_id,
                asker.name,
                reason,
            )
        if stopped or owed:
            self._tasks.start(self.write_kept())
        return stopped

    def owed(self, server_id: str) -> int:
        """Lines of ``server_id`` still waiting in this process (not in the store yet)."""
        return sum(1 for owed in self._kept if owed[0] == server_id)

    def _keep(self, lines: list[Owed]) -> None:
        self._kept.extend(lines)
        del self._kept[:-MAX_KEPT]

    async def write_kept(self) -> bool:
        """Write the lines kept here to the store; whether none is left here."""
        store = self._store()
        if store is None:
            return not self._kept
        async with self._writing:
            lines, self._kept = self._kept, []
            if not lines:
                return True
            try:
                await run_in(Pool.STORE, store.owe, lines, datetime.now(UTC))
            except StoreError as exc:
                self._kept[:0] = lines
                log.info("cut turns' lines kept here until the store answers: %s", exc)
                return False
            log.warning(
                "%d cut turns' askers owed a line in the store (whichever bridge serves their"
                " server next tells them)",
                len(lines),
            )
            return True

    def tell(self, server_id: str, app: AppHandler) -> None:
        """The server linked to this bridge: send each asker owed a line there (whichever
        bridge cut the turn) their line, once. Runs in the background (the link's connect
        callback cannot wait for the store, nor for the answers)."""
        self._tasks.start(self._tell(server_id, app))

    async def _tell(self, server_id: str, app: AppHandler) -> None:
        store = self._store()
        owed: list[Owed] = []
        if await self.write_kept() and store is not None:
            try:
                taken = await run_in(Pool.STORE, store.take_owed, server_id)
            except StoreError as exc:
                log.info("server %s: owed lines not read: %s", server_id, exc)
                taken = []
            owed = [(server_id, item.player_uuid, item.line) for item in taken]
        else:  # the store is away: the lines this bridge keeps for that server
            owed = [item for item in self._kept if item[0] == server_id]
            self._kept = [item for item in self._kept if item[0] != server_id]
        if not owed:
            return
        chats = [
            OutputChat(
                target="player",
                player=player_uuid,
                text=app.runtime.text(
                    "errors.provider_failure",
                    {
                        "player": str(line.get("player_name", "")),
                        "reason": str(line.get("reason", "")),
                    },
                ),
            )
            for _, player_uuid, line in owed
        ]
        try:
            app.output.send_soon(*chats)
        except MineclawError as exc:  # down again already: owed again, to the next link
            self._keep(owed)
            self._tasks.start(self.write_kept())
            log.info("server %s: cut turns' askers not told yet: %s", server_id, exc)

    async def settled(self) -> None:
        """Wait for the writes and sends started so far (tests)."""
        await self._tasks.settled()

    async def aclose(self) -> None:
        """Write what is kept one last time (the next bridge delivers it), then stop."""
        try:
            await asyncio.wait_for(self.write_kept(), timeout=None)
        finally:
            await self._tasks.aclose()
