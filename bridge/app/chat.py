"""The chat path: a public message in, a verdict out at once, and maybe a turn started.

Order: classify the wake (prefix or pattern, else an implicit wake while listen mode is on);
an empty question gets a private hint; then the gates in order (permission, player cooldown,
global cooldown, busy), each refusal cancelling an explicit wake with its own private line,
while an implicit wake that a gate refuses simply stays ordinary chat. An
admitted wake fixes its snapshot and starts the turn before the verdict is returned: the
check, the admission and the start happen with no await in between, so two messages arriving
together cannot both start a turn. The turn's first output needs a provider round trip, so the
verdict is always on the wire before it.

The plugin waits only so long for a verdict; when it gives up it sends ``chat.expired`` with the
request's id, having already treated the message as unanswered (a wake was cancelled with the
offline line). A turn that message started is then stopped, and a message whose expiry arrives
before its request is not started at all, so the assistant never answers a line nobody saw.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from typing import Any

from bridge.app.output import LinkTurnOutput
from bridge.app.runtime import Runtime
from bridge.app.served import NotConfiguredError
from bridge.errors import MineclawError
from bridge.link.handler import CURRENT_REQUEST_ID
from bridge.link.messages import ChatRequest, ChatVerdict, Text
from bridge.turns.activity import BusyError
from bridge.turns.engine import TurnRequest
from bridge.turns.gates import BUSY
from bridge.turns.ports import PlayerRef
from bridge.turns.wake import EmptyWake, ImplicitWake

log = logging.getLogger(__name__)

PASS = ChatVerdict(decision="pass", ai_prefix=False, notice=None)
# Expiries kept for requests not (yet) seen: far more than the plugin can have in flight.
EXPIRED_KEPT = 256


def _refuse(notice: Text) -> ChatVerdict:
    return ChatVerdict(decision="refuse", ai_prefix=False, notice=notice)


class ChatPath:
    def __init__(self, runtime: Runtime, output: LinkTurnOutput) -> None:
        self._runtime = runtime
        self._output = output
        self._turns: dict[str, asyncio.Task[Any]] = {}
        self._expired: deque[str] = deque(maxlen=EXPIRED_KEPT)

    def expired(self, request_id: str) -> None:
        """``chat.expired``: stop the turn that request started, or never start one for it."""
        task = self._turns.pop(request_id, None)
        if task is None:
            self._expired.append(request_id)
            return
        runtime = self._runtime
        if runtime.turn is task and runtime.engine.stop():
            log.info("chat %s: the plugin gave up on its verdict; turn stopped", request_id)
            runtime.audit.record("chat.expired", {"request": request_id})

    async def on_chat(self, request: ChatRequest) -> ChatVerdict:
        request_id = CURRENT_REQUEST_ID.get()
        if request_id is not None and request_id in self._expired:
            # The plugin has already given up on this message: nothing may answer it.
            return PASS
        verdict = self._decide(request)
        task = self._runtime.turn
        if request_id is not None and verdict.decision == "accept" and task is not None:
            if not task.done() and task not in self._turns.values():
                self._turns[request_id] = task
                task.add_done_callback(lambda _: self._turns.pop(request_id, None))
        return verdict

    def _decide(self, request: ChatRequest) -> ChatVerdict:
        runtime = self._runtime
        # A version whose pattern is bad is never served: a reload refuses it whole.
        rules = runtime.wake_rules()
        wake = rules.classify(request.text, listen=runtime.listen.on)
        if wake is None:
            return PASS
        player = {"player": request.player.name}
        if isinstance(wake, EmptyWake):
            return _refuse(
                runtime.text("chat.empty_question", {**player, "prefix": rules.public_prefix})
            )
        plane = runtime.plane
        refusal = runtime.gates.check(
            player_uuid=request.player.uuid,
            granted=request.granted,
            limits=plane.config.rate_limits,
            busy=runtime.activity.busy,
        )
        implicit = isinstance(wake, ImplicitWake)
        if refusal is not None:
            if implicit:
                # Listen mode must never cost a player a chat line: an implicit wake a gate
                # refuses stays ordinary public chat and is not sent to the model. No notice,
                # or a running turn would answer every line in chat with "busy".
                return PASS
            return _refuse(runtime.text(refusal.message_key, {**player, **refusal.values}))
        accepted = ChatVerdict(decision="accept", ai_prefix=implicit, notice=None)
        try:
            snapshot = runtime.snapshot(request.granted)
        except NotConfiguredError as exc:
            if implicit:  # ordinary chat in listen mode: no public "not configured" per line
                return PASS
            # Only the asker learns there is no assistant yet; the question stays ordinary chat.
            # The cooldowns start as for a turn, so a run of wakes cannot become a run of notices.
            runtime.gates.admit(player_uuid=request.player.uuid)
            line = runtime.text("errors.not_configured", {**player, "reason": str(exc)})
            return ChatVerdict(decision="pass", ai_prefix=False, notice=line)
        except MineclawError as exc:
            log.error("no turn for %s: %s", request.player.name, exc)
            line = runtime.text("errors.invalid_request", {**player, "reason": "internal error"})
            return _refuse(line)
        turn = TurnRequest(
            player=PlayerRef(request.player.uuid, request.player.name),
            question=wake.question,
            implicit=implicit,
        )
        try:
            runtime.turn = runtime.engine.start(turn, snapshot)
        except BusyError:  # cannot happen after the busy gate; kept as the gate's answer
            return _refuse(runtime.text(BUSY, player))
        except MineclawError as exc:  # the turn's start could not be audited
            log.error("turn for %s not started: %s", request.player.name, exc)
            line = runtime.text("errors.invalid_request", {**player, "reason": "internal error"})
            return _refuse(line)
        runtime.turn_player = turn.player
        runtime.gates.admit(player_uuid=request.player.uuid)
        return accepted
