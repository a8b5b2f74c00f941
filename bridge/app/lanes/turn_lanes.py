"""The lanes one ``serve`` process runs: the public session and a private conversation per
player, the cap on turns running at once over all of them, and the wait line in front of them.

Everything a lane needs that does not depend on the lane is shared: the archive, the audit
log, the cap, the wait line and the after-turn listeners (`add_after_turn`). A lane's own
compactor runs first after each of its turns (a compaction due, or one queued behind the turn,
takes the lane before anyone waiting); then the shared listeners; then the wait line starts
whatever may start now. A compaction's end starts the line again.

`admit` is the one way a wake becomes a turn. A wake that starts at once runs on the snapshot
its caller took (so the caller could answer "not configured" before admitting); a queued one
takes the snapshot in force when its turn starts, with the permission facts of its wake, and
when that fails its player is told privately (nobody else's place is lost).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Collection, Coroutine, Mapping
from typing import Any, Protocol

from bridge.app.lanes.asks import TURN_ASK, Ask, AskBook
from bridge.app.lanes.output import LinkTurnOutput
from bridge.app.lanes.private_output import PrivateLinkOutput
from bridge.app.serving.served import NotConfiguredError
from bridge.control import ControlPlane
from bridge.errors import LinkError, MineclawError
from bridge.link.handler import Link
from bridge.link.messages import AskDone, OutputActionbar, Text
from bridge.metrics import BridgeMetrics
from bridge.policy.approvals import CONFIRMATION_TIMEOUT_S
from bridge.store.archive import ArchivedTurn
from bridge.store.audit_sink import AuditSink
from bridge.turns.activity import ServerActivity, TurnCap
from bridge.turns.archived_answer import archived_lines
from bridge.turns.compaction import Compactor
from bridge.turns.confirm_window import ConfirmationWindow
from bridge.turns.engine import TurnEngine, TurnListener, TurnOutcome, TurnRequest
from bridge.turns.lanes import Lane, Lanes, lane_session_ids, private_lane_id
from bridge.turns.persona import with_persona
from bridge.turns.ports import (
    PUBLIC_LANE,
    ArchiveWriter,
    PlayerRef,
    TurnLimits,
    TurnOutput,
    TurnSnapshot,
)
from bridge.turns.queue import Admission, TurnQueue, Waiting
from bridge.turns.restore import SessionStore
from bridge.turns.session import PublicSession

log = logging.getLogger(__name__)

PLACE_REFRESH_S = 2.0
"""How often waiting players' places are shown again: an action-bar line fades after a few
seconds, and a player who waits must keep seeing that they do."""


ProviderFailureListener = Callable[[str, TurnRequest, TurnOutcome], Text | None]
"""(lane id, the turn's request, its outcome): the private line to tell its asker, if any."""


class LaneHost(Protocol):
    """What the lanes need of the runtime."""

    link: Link | None
    turn: asyncio.Task[TurnOutcome] | None
    turn_player: PlayerRef | None

    @property
    def plane(self) -> ControlPlane: ...

    def text(self, key: str, values: Mapping[str, str] | None = None, **model: str) -> Text: ...

    def snapshot(self, granted: Collection[str] | None) -> TurnSnapshot: ...

    def persona(self, lane: Lane) -> str | None:
        """The persona text ``lane`` speaks as now (None: none)."""
        ...


class TurnLanes:
    """``output``: the public lane's (private lanes answer through `PrivateLinkOutput`)."""

    def __init__(
        self,
        host: LaneHost,
        *,
        archive: ArchiveWriter,
        audit: AuditSink,
        output: TurnOutput | None = None,
        action_bar_interval_s: float = 0.075,
        sessions: SessionStore | None = None,
        metrics: BridgeMetrics | None = None,
        archive_for: Callable[[ArchiveWriter, str, PlayerRef | None], ArchiveWriter] | None = None,
    ) -> None:
        """``sessions``: where each lane's session is restored from and recorded (None: in
        memory only). ``archive_for``: the archive a lane's engine writes to, given the
        shared one, the lane's id and its owner (None for the public lane): memory indexes
        each turn for recall over the archive."""
        self._archive_for = archive_for
        self._host = host
        self._sessions = sessions
        self._metrics = metrics
        self._archive = archive
        self._audit = audit
        self._action_bar_interval_s = action_bar_interval_s
        self._private_output = PrivateLinkOutput(host)
        self._after_turn: list[TurnListener] = []
        self._tasks: set[asyncio.Task[None]] = set()
        self._refresher: asyncio.Task[None] | None = None
        self.asks = AskBook()
        """The plugin's questions taken here (`bridge.app.lanes.asks`)."""
        self._running_asks: dict[str, Ask] = {}
        """The question of each lane's running turn, by lane id."""
        self._by_request: dict[str, tuple[Lane, asyncio.Task[TurnOutcome]]] = {}
        """The running turns chat requests started, by the request's id."""
        self.cap = TurnCap(lambda: host.plane.config.concurrency.max_concurrent_turns)
        self.queue = TurnQueue(
            cap=self.cap,
            lane_busy=self._lane_busy,
            length=lambda: host.plane.config.concurrency.queue_length,
            on_place=self._show_place,
        )
        public = self._build(PUBLIC_LANE, None, output or LinkTurnOutput(host))
        self.confirmations = ConfirmationWindow(
            window_s=CONFIRMATION_TIMEOUT_S,
            lane_of=self._lane_of_turn,
            has_waiting=self.queue.has_waiting,
        )
        """Bounds the prompts of a turn others wait behind (the approval broker asks it)."""
        self.on_private_turn: Callable[[Lane, TurnRequest, TurnOutcome], None] | None = None
        """Told of each private turn's end (conversation titles)."""
        self.on_provider_failure: ProviderFailureListener | None = None
        """Told of each turn dropped for its model requests (``/mineclaw retry`` offers)."""
        self.private_lane_id: Callable[[str], str] = private_lane_id
        """A player's private lane id: the lane of their active conversation (set by the app
        handler, `bridge.app.players.conversation_state`)."""
        self.lanes = Lanes(
            public,
            lambda lane_id, owner: self._build(lane_id, owner, self._private_output),
            pinned=self.queue.has_waiting,
            lane_id_of=lambda player_uuid: self.private_lane_id(player_uuid),
        )

    @property
    def public(self) -> Lane:
        return self.lanes.public

    def current_session_id(self, lane_id: str) -> str | None:
        """The session ``lane_id`` is on: its lane's in memory, else the one recorded for it
        (None: it never had one). Blocking (may read the session records)."""
        lane = self.lanes.get(lane_id)
        if lane is not None:
            return lane.session.session_id
        if self._sessions is None:
            return None
        return self._sessions.records.current_session(self._sessions.key(lane_id))

    def add_after_turn(self, listener: TurnListener) -> None:
        """Called after every turn of every lane, before the wait line moves."""
        self._after_turn.append(listener)

    @property
    def busy(self) -> bool:
        """Whether any lane runs a turn or a compaction."""
        return any(lane.busy for lane in self.lanes)

    def _build(self, lane_id: str, owner: PlayerRef | None, output: TurnOutput) -> Lane:
        ids = lane_session_ids(lane_id)
        sessions = self._sessions
        session = (
            PublicSession(id_factory=ids)
            if sessions is None
            else sessions.session(lane_id, id_factory=ids)
        )
        activity = ServerActivity()
        archive = self._archive
        if self._archive_for is not None:
            archive = self._archive_for(archive, lane_id, owner)
        engine = TurnEngine(
            session=session,
            archive=archive,
            audit=self._audit,
            output=output,
            activity=activity,
            lane_id=lane_id,
            cap=self.cap,
            action_bar_interval_s=self._action_bar_interval_s,
            metrics=self._metrics,
        )
        compactor = Compactor(
            session=session,
            activity=activity,
            audit=self._audit,
            records=None if sessions is None else sessions.records,
            metrics=self._metrics,
        )
        engine.add_after_turn(compactor.after_turn)
        engine.overflow = compactor.compact_for_overflow
        engine.add_after_turn(self._after_any_turn)
        compactor.add_freed_listener(self.queue.release)
        return Lane(lane_id, owner, session, activity, engine, compactor)

    def _after_any_turn(self, snapshot: TurnSnapshot) -> None:
        for listener in self._after_turn:
            try:
                listener(snapshot)
            except Exception:
                log.exception("after-turn listener failed")
        self.queue.release()

    def _lane_of_turn(self, turn_id: str) -> str | None:
        return next((lane.lane_id for lane in self.lanes if lane.engine.turn_id == turn_id), None)

    def _lane_busy(self, lane_id: str) -> bool:
        lane = self.lanes.get(lane_id)
        return lane is not None and lane.busy

    # ---- admission

    def admit(
        self,
        lane: Lane,
        request: TurnRequest,
        granted: Collection[str],
        snapshot: TurnSnapshot,
        *,
        request_id: str | None = None,
    ) -> Admission:
        """Start the turn now, or queue it, or say busy. A start now raises what the engine's
        start raises (``BusyError``, an audit failure) to the caller."""
        deferred = False
        taken = [snapshot]
        ask = None if request.ask is None else self.asks.take(request.ask)

        def start() -> None:
            # The turn's task (and the output it calls) sees its question's id.
            token = TURN_ASK.set(ask)
            try:
                # A queued turn fixes the configuration in force when it starts, like any turn.
                fixed = taken.pop() if taken else self._host.snapshot(granted)
                fixed = with_persona(fixed, self._host.persona(lane))
                task = lane.engine.start(request, fixed)
            except MineclawError as exc:
                if not deferred:
                    raise
                self._tell_not_started(request.player, exc, ask)
                return
            finally:
                TURN_ASK.reset(token)
            task.add_done_callback(lambda done: self._turn_done(lane, request, done, ask))
            if ask is not None:
                self._running_asks[lane.lane_id] = ask
            if request_id is not None:  # a chat's: its chat.expired may still come
                self._by_request[request_id] = (lane, task)
                task.add_done_callback(lambda _: self._by_request.pop(request_id, None))
            lane.task = task
            if lane is self.lanes.public:
                self._host.turn, self._host.turn_player = task, request.player

        try:
            admission = self.queue.admit(
                lane.lane_id,
                request.player,
                start,
                request_id=request_id,
                kept=request.ask is not None,
            )
        except BaseException:
            if request.ask is not None:
                self.asks.drop(request.ask)
            raise
        if request.ask is not None and admission.status in ("busy", "already_waiting"):
            self.asks.drop(request.ask)
        deferred = True
        taken.clear()
        return admission

    def _turn_done(
        self, lane: Lane, request: TurnRequest, task: asyncio.Task[TurnOutcome], ask: Ask | None
    ) -> None:
        """A turn dropped because its model requests failed: ``on_provider_failure`` may offer
        its question again; the line it answers reaches the asker after the failure line. A
        question with an id is ended (``ask.done`` after its lines)."""
        if ask is not None and self._running_asks.get(lane.lane_id) is ask:
            del self._running_asks[lane.lane_id]
        if ask is not None and not ask.cut:
            self.asks.ended(ask)
            self._spawn(self._ask_done(ask))
        if task.cancelled() or task.exception() is not None:
            return
        outcome = task.result()
        if lane.private and self.on_private_turn is not None:
            try:
                self.on_private_turn(lane, request, outcome)
            except Exception:
                log.exception("private turn listener failed")
        listener = self.on_provider_failure
        if listener is None:
            return
        if outcome.status != "dropped" or outcome.failure_class is None:
            return
        try:
            line = listener(lane.lane_id, request, outcome)
        except MineclawError as exc:
            log.warning("no retry offered to %s: %s", request.player.name, exc)
            return
        if line is not None:
            self._spawn(self._tell(request.player, line))

    def forget_waiting_asks(self) -> None:
        """The wait line was emptied (a revoked link): its questions were never started, so
        one the plugin sends again is started then, not taken for one still waiting here."""
        running = {id(ask) for ask in self._running_asks.values()}
        for ask_id in self.asks.taken_ids():
            found = self.asks.get(ask_id)
            if found is not None and id(found) not in running:
                self.asks.drop(ask_id)

    def stop_request(self, request_id: str) -> bool:
        """Stop the running turn the chat request ``request_id`` started (at once, or from the
        wait line later: under load a queued wake can start before its ``chat.expired``
        arrives); whether one was stopped."""
        found = self._by_request.get(request_id)
        if found is None:
            return False
        lane, task = found
        return lane.task is task and not task.done() and lane.engine.stop()

    def give_up_ask(self, lane_id: str) -> bool:
        """The running turn of ``lane_id`` is being cut (this bridge gives its server up):
        whether its question has an id. Then the plugin sends it again to the next bridge (or
        tells its asker), and this bridge forgets it: no ``ask.done``, no line owed."""
        ask = self._running_asks.get(lane_id)
        if ask is None:
            return False
        ask.cut = True
        self.asks.drop(ask.id)
        return True

    def answer_again(self, ask: Ask, output: LinkTurnOutput) -> None:
        """A question that ended here, sent again by the plugin: its lines again if the plugin
        did not take them (the link dropped first), then ``ask.done``. Never a second turn."""
        self._spawn(self._answer_again(ask, output))

    async def _answer_again(self, ask: Ask, output: LinkTurnOutput) -> None:
        if ask.sending:  # the answer may be on its way now, crossing the plugin's resend
            await asyncio.gather(*ask.sending, return_exceptions=True)
        again = Ask(ask.id, state="ended")
        if ask.lost:
            # Only then: the plugin took every line otherwise, and a resend that crossed them on
            # the way must not show the answer twice.
            token = TURN_ASK.set(again)
            try:
                if ask.frames:
                    output.send_soon(*ask.frames)
            except LinkError as exc:
                log.info("lines of question %s not sent again: %s", ask.id, exc)
            finally:
                TURN_ASK.reset(token)
        await self._ask_done(again)

    async def answer_archived(
        self,
        ask_id: str,
        turn: ArchivedTurn,
        player: PlayerRef,
        output: LinkTurnOutput,
        limits: TurnLimits,
    ) -> None:
        """A question sent again whose turn another bridge (or this one, before a restart)
        committed before its answer reached the plugin: the archived answer, once, then
        ``ask.done``. Never a second turn, so never a second archive row. Taken into the book
        first: a later resend here gets these same lines."""
        ask = self.asks.take(ask_id)
        token = TURN_ASK.set(ask)
        try:
            lines = archived_lines(turn, limits)
            if turn.holds_personal_result():  # a public turn answered to its asker alone
                await output.reply_to_asker(player, lines)
            else:
                await output.reply(player, lines)
        except LinkError as exc:
            log.info("archived answer of question %s not sent: %s", ask_id, exc)
        finally:
            TURN_ASK.reset(token)
        self.asks.ended(ask)
        self._spawn(self._ask_done(ask))

    async def end_not_taken(self, ask_id: str, link: Link | None) -> bool:
        """A question with an id that started no turn (a refusal, a subcommand, a failure):
        ``ask.done`` now, before the request's answer, on the link the request came on (the
        runtime may have let go of it meanwhile: its database lost), so the plugin never keeps
        it (were the two parted, it would send again a question its asker was told about).

        False when the question is not this bridge's and its end did not reach the plugin
        (the server's lease was lost under the request, the link closed): the plugin keeps
        it and sends it again to the bridge it links to next, so the request's answer must
        then tell its asker nothing, or they would be told twice."""
        if self.asks.get(ask_id) is not None:
            return True  # taken here: its turn ends it
        return await self._end(Ask(ask_id, state="ended"), link)

    async def _ask_done(self, ask: Ask) -> None:
        await self._end(ask)

    async def _end(self, ask: Ask, link: Link | None = None) -> bool:
        """Tell the plugin the question ended, once the plugin took the lines its turn sent;
        whether the end reached it.

        A line it did not take (the link dropped under it) ends nothing: the link the end
        would go on may already be the next one, and an ``ask.done`` there would make the
        plugin forget a question whose answer it never showed. Kept, the question is sent
        again after the relink and its lines go again from the book (``answer_again``)."""
        if ask.sending:
            await asyncio.gather(*ask.sending, return_exceptions=True)
        if ask.lost:
            log.info("question %s not ended: its lines did not all reach the plugin", ask.id)
            return False
        link = link or self._host.link
        if link is None or not link.connected:
            return False  # a resend after the relink is answered from the book
        try:
            await link.send_event("ask.done", AskDone(ask=ask.id))
        except LinkError as exc:
            log.info("ask.done not sent: %s", exc)
            return False
        return True

    def _tell_not_started(self, player: PlayerRef, exc: MineclawError, ask: Ask | None) -> None:
        log.warning("queued turn of %s not started: %s", player.name, exc)
        if isinstance(exc, NotConfiguredError):
            line = self._host.text(
                "errors.not_configured", {"player": player.name, "reason": str(exc)}
            )
        else:
            line = self._host.text(
                "errors.invalid_request", {"player": player.name, "reason": "internal error"}
            )
        told = self._spawn(self._tell(player, line))
        if ask is not None:
            ask.sending.append(told)
            self.asks.ended(ask)
            self._spawn(self._ask_done(ask))

    async def _tell(self, player: PlayerRef, line: Text) -> None:
        try:
            await LinkTurnOutput(self._host).tell(player.uuid, line)
        except MineclawError as exc:
            log.info("notice to %s not delivered: %s", player.name, exc)

    # ---- places in the line

    def _show_place(self, entry: Waiting) -> None:
        link = self._host.link
        if link is None or not link.connected:
            return
        text = self._host.text(
            "queue.place", {"player": entry.player.name, "place": str(entry.place)}
        )
        self._spawn(self._send_place(link, entry.player, text))
        if self._refresher is None:
            self._refresher = asyncio.get_running_loop().create_task(self._refresh())

    async def _send_place(self, link: Link, player: PlayerRef, text: Text) -> None:
        try:
            await link.send_event(
                "output.actionbar", OutputActionbar(player=player.uuid, text=text)
            )
        except LinkError as exc:
            log.info("place of %s not shown: %s", player.name, exc)

    async def _refresh(self) -> None:
        try:
            while True:
                await asyncio.sleep(PLACE_REFRESH_S)
                waiting = self.queue.waiting()
                if not waiting:
                    return
                link = self._host.link
                if link is None or not link.connected:
                    continue
                for entry in waiting:
                    values = {"player": entry.player.name, "place": str(entry.place)}
                    await self._send_place(
                        link, entry.player, self._host.text("queue.place", values)
                    )
        finally:
            self._refresher = None

    def _spawn(self, work: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    # ---- leaving, stopping, closing

    def player_quit(self, player_uuid: str) -> int:
        """A player left: out of every line (their running turns go on to their end)."""
        return self.queue.drop_player(player_uuid)

    def status(self) -> str:
        """One line for ``/mineclaw status``."""
        public = self.lanes.public.activity.current or "idle"
        private = sum(1 for lane in self.lanes if lane.private and lane.busy)
        waiting = len(self.queue.waiting())
        return (
            f"public {public}, {private} private running, {waiting} waiting,"
            f" {self.cap.running} turns of at most"
            f" {self._host.plane.config.concurrency.max_concurrent_turns}"
        )

    async def aclose(self) -> None:
        """Stop every lane's turn (each commit finishes first) and the place refresher."""
        self.queue.clear()  # first: a stopped turn frees its lane, and nothing may start now
        for lane in self.lanes:
            lane.engine.stop()
        running = [
            lane.task for lane in self.lanes if lane.task is not None and not lane.task.done()
        ]
        if running:
            await asyncio.wait(running, timeout=10)
        if self._refresher is not None:
            self._refresher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._refresher
        for task in list(self._tasks):
            task.cancel()
