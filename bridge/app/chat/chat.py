"""The chat path: a public message in, a verdict out at once, and maybe a turn started.

Order: classify the wake (prefix or pattern, else an implicit wake while listen mode is on); an
empty question gets a private hint; an implicit wake from a player who opted out of listen mode
passes untouched; then the gates in order (permission, player cooldown, global cooldown, the token
budgets of the player and the server), each refusal cancelling an explicit wake with its own
private line. An implicit wake that a gate refuses stays ordinary chat (``listen.when_refused:
keep``) and is overheard by the next public turn unless its player lacks the chat permission, or is
cancelled with the gate's line (``cancel``); one refused for budget stays ordinary chat too but is
never carried (the next turn's asker would pay for it). An admitted explicit wake starts its turn
in the public lane, or waits in that lane's line while the lane is busy (or the server runs as many
turns as it may), its player seeing their place in the action bar; past the line it is refused as
busy. An implicit wake never waits: it starts now or stays ordinary chat. A wake that starts now
fixes its snapshot and starts the turn before the verdict is returned: the check, the admission and
the start happen with no await in between, so two messages arriving together cannot both start a
turn. The turn's first output needs a provider round trip, so the verdict is always on the wire
before it.

The plugin waits only so long for a verdict; when it gives up it sends ``chat.expired`` with the
request's id, having already treated the message as unanswered (a wake was cancelled with the
offline line). A turn that message started is then stopped, a wake of it waiting in the line
leaves the line, and a message whose expiry arrives before its request is not started at all,
so the assistant never answers a line nobody saw.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from typing import Any

from bridge.app.lanes.archived_asks import answered_from_archive
from bridge.app.lanes.output import LinkTurnOutput
from bridge.app.serving.served import NotConfiguredError
from bridge.app.wiring.runtime import Runtime
from bridge.errors import MineclawError
from bridge.link.handler import CURRENT_REQUEST_ID
from bridge.link.messages import ChatRequest, ChatVerdict, Text
from bridge.policy.budgets import BudgetRefusal
from bridge.turns.activity import BusyError
from bridge.turns.engine import TurnRequest
from bridge.turns.gates import BUSY, CHAT_PERMISSION, NO_PERMISSION
from bridge.turns.listen import carry_limits
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
        # Lines the decision model decides after their verdict start their turns here.
        runtime.listen_decisions.start_later = self.start_decided

    def expired(self, request_id: str) -> None:
        """``chat.expired``: stop the turn that request started, take it out of the wait line,
        or never start one for it."""
        runtime = self._runtime
        if runtime.lanes.queue.drop_request(request_id):
            log.info("chat %s: the plugin gave up on its verdict; out of the wait line", request_id)
            runtime.audit.record("chat.expired", {"request": request_id})
            return
        task = self._turns.pop(request_id, None)
        if task is None:
            if runtime.lanes.stop_request(request_id):  # started from the wait line meanwhile
                log.info(
                    "chat %s: the plugin gave up on its verdict; queued turn stopped", request_id
                )
                runtime.audit.record("chat.expired", {"request": request_id})
                return
            self._expired.append(request_id)
            return
        if runtime.turn is task and runtime.engine.stop():
            log.info("chat %s: the plugin gave up on its verdict; turn stopped", request_id)
            runtime.audit.record("chat.expired", {"request": request_id})

    async def on_chat(self, request: ChatRequest) -> ChatVerdict:
        request_id = CURRENT_REQUEST_ID.get()
        if request_id is not None and request_id in self._expired:
            # The plugin has already given up on this message: nothing may answer it.
            return PASS
        if request.ask is not None:
            lanes = self._runtime.lanes
            known = lanes.asks.get(request.ask)
            if known is not None:
                # Sent again after a relink and taken here before: never a second turn (an
                # ended one's lines are sent again). Accepted: it was, and it is being answered.
                if known.state == "ended":
                    lanes.answer_again(known, self._output)
                return ChatVerdict(decision="accept", ai_prefix=False, notice=None)
            if await answered_from_archive(
                self._runtime,
                request.ask,
                request.resent,
                PlayerRef(request.player.uuid, request.player.name),
                self._output,
            ):
                return ChatVerdict(decision="accept", ai_prefix=False, notice=None)
        public = self._runtime.lanes.public
        before = public.task
        verdict = self._decide(request, request_id)
        task = public.task
        # Only a turn this message started now is its own; a queued one that starts before
        # its expiry arrives (under load) is found by the lanes (`TurnLanes.stop_request`).
        if request_id is not None and task is not before and task is not None and not task.done():
            self._turns[request_id] = task
            task.add_done_callback(lambda _: self._turns.pop(request_id, None))
        return verdict

    def _decide(self, request: ChatRequest, request_id: str | None) -> ChatVerdict:
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
        implicit = isinstance(wake, ImplicitWake)
        decider = runtime.listen_decisions
        if implicit:
            if runtime.listen.ignores(request.player.uuid):
                return PASS  # opted out: their chat is never sent while listen mode is on
            if CHAT_PERMISSION in request.granted:  # evidence for later decisions
                decider.heard(request.player, wake.question)
        refused = self._gates(request, wake.question, implicit=implicit, late=False)
        if refused is not None:
            return refused
        if implicit:
            # Which implicit lines start a turn (bridge.decisions): decided now by the
            # classifier, or later, off this path, by the decision model.
            decided = decider.decide_now(request, wake.question, request_id)
            if decided is None:
                return PASS  # the model decides after this verdict
            if not decided:
                self._overhear(request, wake.question)
                return PASS
        return self._start(request, wake.question, implicit=implicit, request_id=request_id)

    def start_decided(self, request: ChatRequest, question: str, request_id: str | None) -> bool:
        """Start the turn a decision made after the verdict asked for, if the gates still let
        it (they are checked again: time has passed). A line that cannot start stays overheard;
        it was public all along. True when the turn started."""
        if request_id is not None and request_id in self._expired:
            return False  # the plugin gave up on its verdict: nobody saw the line
        if self._gates(request, question, implicit=True, late=True) is not None:
            return False
        verdict = self._start(request, question, implicit=True, request_id=None)
        return verdict.decision == "accept"

    def _overhear(self, request: ChatRequest, question: str) -> None:
        listen = self._runtime.listen
        listen.overheard.add(
            request.player.name, question, carry_limits(self._runtime.plane.config.listen)
        )

    def _gates(
        self, request: ChatRequest, question: str, *, implicit: bool, late: bool
    ) -> ChatVerdict | None:
        """The gates and the budgets in order; the verdict of the first that refuses, or None.
        ``late``: a decided line whose verdict was sent long ago, which can only stay
        overheard (``when_refused: cancel`` cannot cancel it any more)."""
        runtime = self._runtime
        plane = runtime.plane
        player = {"player": request.player.name}
        lanes = runtime.lanes
        public = lanes.public
        # An explicit wake that finds the lane busy waits in its line (busy only past it); an
        # implicit one never waits: listen mode must not turn chat into a backlog of questions.
        busy = implicit and (
            public.busy or lanes.cap.full or lanes.queue.has_waiting(public.lane_id)
        )
        refusal = runtime.gates.check(
            player_uuid=request.player.uuid,
            granted=request.granted,
            limits=plane.config.rate_limits,
            busy=busy,
        )
        settings = plane.config.listen
        keep = late or settings.when_refused == "keep"
        if refusal is not None:
            if implicit and keep:
                # Listen mode must never cost a player a chat line: an implicit wake a gate
                # refuses stays ordinary public chat, without a notice (or a running turn would
                # answer every line with "busy"). It is overheard by the next public turn,
                # unless its player may not use the assistant at all.
                if refusal.message_key == NO_PERMISSION:
                    return PASS
                if self._budget_refusal(request, question) is not None:
                    # Over budget: not carried either (the busy gate refused first, and the
                    # line went into the next asker's turn, paid by them).
                    runtime.listen_decisions.budget_refused(request.player, question)
                    return PASS
                self._overhear(request, question)
                runtime.listen_decisions.gate_refused(request.player, question, refusal)
                return PASS
            return _refuse(runtime.text(refusal.message_key, {**player, **refusal.values}))
        spent = self._budget_refusal(request, question)
        if spent is not None:
            if implicit and keep:
                # It stays public chat, but is not carried: an overheard line goes into the
                # next turn's request, which another player's budget would then pay for.
                runtime.listen_decisions.budget_refused(request.player, question)
                return PASS
            values = {**player, **spent.values()}
            return _refuse(runtime.text(spent.key(mid_turn=False), values))
        return None

    def _budget_refusal(self, request: ChatRequest, question: str) -> BudgetRefusal | None:
        try:
            return self._runtime.budget_refusal(
                request.player.uuid,
                request.granted,
                question,
                player_name=request.player.name,
            )
        except MineclawError as exc:  # an unreadable ledger must not stop every turn
            log.error("budget of %s not checked: %s", request.player.name, exc)
            return None

    def _start(
        self, request: ChatRequest, question: str, *, implicit: bool, request_id: str | None
    ) -> ChatVerdict:
        """Start (or queue) the turn of a wake that passed every gate."""
        runtime = self._runtime
        lanes = runtime.lanes
        public = lanes.public
        player = {"player": request.player.name}
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
            question=question,
            implicit=implicit,
            ask=None if implicit else request.ask,
        )
        try:
            admission = lanes.admit(public, turn, request.granted, snapshot, request_id=request_id)
        except BusyError:  # cannot happen after the checks; kept as the gate's answer
            return _refuse(runtime.text(BUSY, player))
        except MineclawError as exc:  # the turn's start could not be audited
            log.error("turn for %s not started: %s", request.player.name, exc)
            line = runtime.text("errors.invalid_request", {**player, "reason": "internal error"})
            return _refuse(line)
        if admission.status == "busy":
            return _refuse(runtime.text(BUSY, player))
        if admission.status == "already_waiting":
            values = {**player, "place": str(admission.place)}
            return _refuse(runtime.text("queue.already_waiting", values))
        # Waiting counts as asking: the cooldowns start now, so one player cannot fill the line.
        runtime.gates.admit(player_uuid=request.player.uuid)
        return accepted
