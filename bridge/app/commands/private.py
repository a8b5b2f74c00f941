"""``/ai``: a private conversation between one player and the assistant.

The plugin sends ``/ai <question>`` as a ``command`` request with the arguments ``["ai",
question]`` (``/mineclaw ai ...`` is the same command). The question runs in the player's own
lane (`bridge.turns.lanes`): its own session, its own turn at a time, beside the public lane
and the other players' lanes under the cap on running turns. It passes the same gates as a
public wake, with ``mineclaw.command.private`` for permission and the same cooldowns (a
private question starts the player's and the global cooldown like a public one); it is
answered with the same tools, whitelist and approvals, bound to that player; the answer goes
to that player alone (``reply.private_layout``), and the turn is archived (its session id
starts with the lane id) and audited (``turn.start`` names the lane) like a public one.

``/ai clear`` starts the player's private conversation over; ``/ai stop`` stops its running
answer. Neither needs more than ``mineclaw.command.private``: they touch only the sender's own
lane.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Collection, Sequence
from datetime import UTC, datetime
from typing import Any

from bridge.app.commands.ai_line import read_ai_line
from bridge.app.commands.conversations import CONVERSATION_COMMANDS, ConversationPath
from bridge.app.commands.history import HistoryPath
from bridge.app.lanes.archived_asks import answered_from_archive
from bridge.app.lanes.private_output import PrivateLinkOutput
from bridge.app.serving.served import NotConfiguredError
from bridge.app.wiring.runtime import Runtime
from bridge.errors import MineclawError, StoreError
from bridge.link.messages import CommandRequest, PlayerRef, Text
from bridge.turns.activity import BusyError
from bridge.turns.engine import TurnRequest
from bridge.turns.gates import BUSY, PRIVATE_PERMISSION
from bridge.turns.persona import PERSONA_NODE
from bridge.turns.ports import PlayerRef as TurnPlayer
from bridge.turns.session import PublicSession

log = logging.getLogger(__name__)

MAX_QUESTION_CHARS = 4096
"""The longest question kept (what a ``chat`` message may carry)."""


STOP_WAIT_S = 10.0
"""How long a stop waits for the stopped turn to end before it answers anyway."""


async def turn_ended(task: asyncio.Future[Any] | None) -> None:
    """Wait (bounded) for a stopped turn's task: its end, usage included, is recorded then."""
    if task is not None and not task.done():
        await asyncio.wait({task}, timeout=STOP_WAIT_S)


class PrivatePath:
    def __init__(self, runtime: Runtime) -> None:
        self._runtime = runtime
        self._conversations = ConversationPath(runtime)

    async def history_of(self, sender: PlayerRef, conversation_id: str) -> list[Text]:
        """``/ai history <id>``: one of the sender's conversations, active or not."""
        runtime = self._runtime
        state = runtime.conversations
        if state is None or state.shelf(sender.uuid).find(conversation_id) is None:
            values = {"player": sender.name, "id": conversation_id}
            return [runtime.text("private.conversation_unknown", values)]
        lane_id = state.lane_of(sender.uuid, conversation_id)
        return await HistoryPath(runtime).conversation(sender, lane_id)

    async def ask(self, request: CommandRequest, args: Sequence[str]) -> list[Text]:
        runtime = self._runtime
        sender = request.sender.player
        if sender is None:
            return [runtime.text("private.players_only")]
        question = " ".join(arg.strip() for arg in args).strip()[:MAX_QUESTION_CHARS]
        player = {"player": sender.name}
        if not question:
            return [runtime.text("private.usage", player)]
        if request.ask is not None:
            known = runtime.lanes.asks.get(request.ask)
            if known is not None:
                # Sent again after a relink and taken here before: never a second turn.
                if known.state == "ended":
                    runtime.lanes.answer_again(known, PrivateLinkOutput(runtime))
                return []
            if await answered_from_archive(
                runtime,
                request.ask,
                request.resent,
                TurnPlayer(sender.uuid, sender.name),
                PrivateLinkOutput(runtime),
            ):
                return []
        line = read_ai_line(question)
        if line.kind == "ambiguous":  # only `new` with a long unquoted title, for now
            title = " ".join(line.rest)
            return [runtime.text("private.which_meant", {**player, "title": title})]
        if line.kind == "command":
            if line.keyword == "history" and line.rest:
                return await self.history_of(sender, line.rest[0])
            if line.keyword in CONVERSATION_COMMANDS:
                return await self._conversations.run(sender, [line.keyword, *line.rest])
            if line.keyword == "clear":
                return self.clear(sender)
            if line.keyword == "stop":
                return await self.stop(sender)
            if line.keyword == "history":
                return await HistoryPath(self._runtime).private(sender)
            if line.keyword == "persona":
                return await self.persona(sender, request.sender.granted, line.rest)
        conversations = runtime.conversations
        if conversations is None:
            return self._ask(sender, request.sender.granted, question, request.ask)
        before = conversations.shelf(sender.uuid).active.last_active
        lines = self._ask(sender, request.sender.granted, question, request.ask)
        try:
            after = conversations.shelf(sender.uuid).active.last_active
        except MineclawError as exc:  # taken all the same: its asker must not read a failure
            log.warning("last activity of %s's conversation not noted: %s", sender.name, exc)
            return lines
        if after is not None and after != before:  # the question was taken
            self._conversations.asked_soon(sender, after)
        return lines

    def _ask(
        self, sender: PlayerRef, granted: Collection[str], question: str, ask: str | None = None
    ) -> list[Text]:
        runtime = self._runtime
        player = {"player": sender.name}
        refusal = runtime.gates.check(
            player_uuid=sender.uuid,
            granted=granted,
            limits=runtime.plane.config.rate_limits,
            busy=False,  # the lane's line decides (busy only past it)
            permission=PRIVATE_PERMISSION,
        )
        if refusal is not None:
            return [runtime.text(refusal.message_key, {**player, **refusal.values})]
        # The same budgets as a public wake: usage is the player's, whichever lane spends it.
        own = runtime.lanes.lanes.find_private(sender.uuid)
        try:
            spent = runtime.budget_refusal(
                sender.uuid,
                granted,
                question,
                session=own.session if own is not None else PublicSession(),
                player_name=sender.name,
            )
        except MineclawError as exc:  # an unreadable ledger must not stop every turn
            log.error("budget of %s not checked: %s", sender.name, exc)
            spent = None
        if spent is not None:
            return [runtime.text(spent.key(mid_turn=False), {**player, **spent.values()})]
        try:
            snapshot = runtime.snapshot(granted)
        except NotConfiguredError as exc:
            runtime.gates.admit(player_uuid=sender.uuid)
            return [runtime.text("errors.not_configured", {**player, "reason": str(exc)})]
        lanes = runtime.lanes
        who = TurnPlayer(sender.uuid, sender.name)
        lane = lanes.lanes.private(who)
        asked = runtime.text("private.asked", {**player, "question": question})
        turn = TurnRequest(player=who, question=question, ask=ask)
        try:
            admission = lanes.admit(lane, turn, granted, snapshot)
        except BusyError:
            return [runtime.text(BUSY, player)]
        except MineclawError as exc:  # the turn's start could not be audited
            log.error("private turn for %s not started: %s", sender.name, exc)
            return [runtime.text("errors.invalid_request", {**player, "reason": "internal error"})]
        if admission.status == "busy":
            return [runtime.text(BUSY, player)]
        if admission.status == "already_waiting":
            values = {**player, "place": str(admission.place)}
            return [runtime.text("queue.already_waiting", values)]
        runtime.gates.admit(player_uuid=sender.uuid)
        if runtime.conversations is not None:  # the conversation's last activity is now
            try:
                runtime.conversations.shelf(sender.uuid).asked(datetime.now(UTC))
            except MineclawError as exc:  # taken all the same: its asker must not read a failure
                log.warning("last activity of %s's conversation not noted: %s", sender.name, exc)
        return [asked]

    async def persona(
        self, sender: PlayerRef, granted: Collection[str], args: Sequence[str]
    ) -> list[Text]:
        """``/ai persona``: the souls and the one in use; ``/ai persona <name>`` chooses one for
        the sender's later private turns, ``default`` goes back to ``persona.private``. Needs
        ``mineclaw.persona``. A persona is text only: tools, gates and budgets stay the same."""
        runtime = self._runtime
        player = {"player": sender.name}
        if PERSONA_NODE not in granted:
            return [runtime.text("commands.no_permission", {**player, "command": "ai persona"})]
        souls = runtime.plane.souls
        choices = runtime.persona_choices
        who = TurnPlayer(sender.uuid, sender.name)
        if not args:
            current = runtime.persona_soul(who)
            lines = [
                runtime.text(
                    "private.persona_current",
                    {**player, "persona": "none" if current is None else current.name},
                )
            ]
            for soul in souls.values():
                values = {"persona": soul.name, "description": soul.description}
                lines.append(runtime.text("private.persona_entry", {**player, **values}))
            return lines
        name = args[0]
        if name != "default" and name not in souls:
            return [runtime.text("private.persona_unknown", {**player, "persona": name})]
        if choices is not None:
            try:
                await choices.choose(sender.uuid, None if name == "default" else name)
            except StoreError as exc:  # the choice holds in this bridge meanwhile
                log.error("persona choice of %s not saved: %s", sender.name, exc)
        runtime.audit.record("persona.chosen", {"player": sender.name, "persona": name})
        current = runtime.persona_soul(who)
        shown = "none" if current is None else current.name
        return [runtime.text("private.persona_chosen", {**player, "persona": shown})]

    def clear(self, sender: PlayerRef) -> list[Text]:
        """Start the sender's private conversation over (the archive keeps the old one)."""
        runtime = self._runtime
        # The lane is made (or restored) if it is not in memory: a conversation the archive
        # holds would otherwise come back on the next question, uncleared.
        lane = runtime.lanes.lanes.private(TurnPlayer(sender.uuid, sender.name))
        session_id = lane.session.clear()
        runtime.audit.record(
            "session.clear",
            {"session_id": session_id, "lane": lane.lane_id, "player": sender.name},
        )
        return [runtime.text("private.cleared", {"player": sender.name})]

    async def stop(self, sender: PlayerRef) -> list[Text]:
        """Stop the sender's running private answer; nothing of it is published. Answered once
        the turn has ended (what it used is counted by then), or after `STOP_WAIT_S`."""
        runtime = self._runtime
        lane = runtime.lanes.lanes.find_private(sender.uuid)
        task = None if lane is None else lane.task
        if lane is None or not lane.engine.stop():
            return [runtime.text("commands.stop_none", {"player": sender.name})]
        await turn_ended(task)
        return [runtime.text("commands.stop_done", {"player": sender.name})]
