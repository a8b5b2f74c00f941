"""``/mineclaw stop [private]``, ``clear [private]`` and ``compact``: what runs in a lane.

``stop`` and ``clear`` check their node themselves: each acts on a lane, and one's own private
lane (``mineclaw.command.private``), or the public turn one asked, needs no owner's node.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

from bridge.app.commands.private import PrivatePath, turn_ended
from bridge.app.commands.replies import Replies
from bridge.app.lanes.output import LinkTurnOutput
from bridge.app.serving.served import NotConfiguredError
from bridge.app.wiring.runtime import Runtime
from bridge.errors import MineclawError
from bridge.link.messages import CommandRequest, Text
from bridge.turns.compaction import CompactionOutcome
from bridge.turns.gates import PRIVATE_PERMISSION
from bridge.turns.ports import PUBLIC_LANE

log = logging.getLogger(__name__)


def own_lane(args: Sequence[str]) -> bool | None:
    """For ``clear``/``stop``: True for ``<name> private`` (the sender's own lane), False for
    the public lane, None for other arguments."""
    words = [arg.lower() for arg in args]
    if words == ["private"]:
        return True
    return False if not words else None


class LaneCommands:
    def __init__(
        self, runtime: Runtime, output: LinkTurnOutput, replies: Replies, private: PrivatePath
    ) -> None:
        self._runtime = runtime
        self._output = output
        self._replies = replies
        self._private = private
        # Each pending compaction's askers (player UUIDs): a shared run reports to all of them.
        self._compaction_askers: dict[asyncio.Future[CompactionOutcome], set[str]] = {}
        self._reports: set[asyncio.Future[None]] = set()

    async def clear(self, request: CommandRequest, args: Sequence[str]) -> list[Text]:
        runtime = self._runtime
        own = own_lane(args)
        if own is None:
            return self._replies.usage("clear")
        sender = request.sender.player
        if own:
            refused = self._replies.refused(request, "clear private", PRIVATE_PERMISSION)
            if refused is not None or sender is None:
                return refused or [runtime.text("private.players_only")]
            return self._private.clear(sender)
        refused = self._replies.refused(request, "clear", "mineclaw.command.clear")
        if refused is not None:
            return refused
        session_id = runtime.session.clear()
        runtime.listen.overheard.clear()  # a new session starts without what was overheard
        runtime.audit.record("session.clear", {"session_id": session_id, "lane": PUBLIC_LANE})
        return [runtime.text("commands.clear_done")]

    async def stop(self, request: CommandRequest, args: Sequence[str]) -> list[Text]:
        runtime = self._runtime
        own = own_lane(args)
        if own is None:
            return self._replies.usage("stop")
        sender = request.sender.player
        if own:
            if sender is None:
                return [runtime.text("private.players_only")]
            return await self._private.stop(sender)
        asker = runtime.engine.asker
        # The player who asked the running public turn may stop it; anyone else needs the node.
        if sender is None or asker is None or sender.uuid != asker.uuid:
            refused = self._replies.refused(request, "stop", "mineclaw.command.stop")
            if refused is not None:
                return refused
        task = runtime.turn
        if not runtime.engine.stop():
            return [runtime.text("commands.stop_none")]
        await turn_ended(task)
        if asker is not None and (sender is None or sender.uuid != asker.uuid):
            notice = runtime.text("chat.turn_stopped", {"player": asker.name})
            self._spawn_tell(asker.uuid, notice)
        return [runtime.text("commands.stop_done")]

    async def compact(self, request: CommandRequest, args: Sequence[str]) -> list[Text]:
        runtime = self._runtime
        try:
            snapshot = runtime.snapshot(None)
        except NotConfiguredError as exc:
            return [runtime.text("commands.model_refused", {"reason": str(exc)})]
        queued = runtime.engine.active
        future = runtime.compactor.request(snapshot)
        asker = request.sender.player
        if asker is not None:
            askers = self._compaction_askers.get(future)
            if askers is None:
                askers = self._compaction_askers[future] = set()
                future.add_done_callback(self._report_compaction)
            askers.add(asker.uuid)
        return [runtime.text("commands.compact_queued" if queued else "commands.compact_started")]

    def _report_compaction(self, done: asyncio.Future[CompactionOutcome]) -> None:
        askers = self._compaction_askers.pop(done, set())
        outcome = "failed" if done.cancelled() else done.result()
        line = self._runtime.text("commands.compact_result", {"outcome": outcome.replace("_", " ")})
        for uuid in sorted(askers):
            self._spawn_tell(uuid, line)

    def _spawn_tell(self, uuid: str, line: Text) -> None:
        async def tell() -> None:
            try:
                await self._output.tell(uuid, line)
            except MineclawError as exc:
                log.info("notice not delivered: %s", exc)

        task = asyncio.ensure_future(tell())
        self._reports.add(task)
        task.add_done_callback(self._reports.discard)
