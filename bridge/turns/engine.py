"""The turn loop: one active turn for the whole server, from a wake to a published reply.

A turn fixes its `TurnSnapshot` when it starts. The loop builds a request from the session's
projection, ``AGENTS.md`` and the turn's items, streams it (throttled action-bar frames to the
asking player), runs the tool calls the snapshot allows, and repeats until the model answers
without tool calls or the limits are reached. Each model request gets at most
``model_attempts`` attempts; when they are spent the whole turn is dropped: nothing of it
enters the session or the archive, no reply is invented, the player gets the provider-failure
message. Tools that already ran stay in the audit log and are not run again.

The turn's story is here: start, the loop of requests and tool rounds, the end (commit, drop
or stop). Its parts are rooms of their own: one model request through its attempts and
fallback routes (`bridge.turns.model_routes`), one round of tool calls
(`bridge.turns.tool_round`), the turn's record so far (`bridge.turns.turn_progress`), what its
requests cost (`bridge.turns.turn_ledger`).

A completed turn is archived first and then published to the session, so the live session
never holds a turn the archive lacks; then the reply is broadcast. From the moment the final
answer is in, `stop` no longer applies and the commit runs shielded from cancellation.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import random
import secrets
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

from bridge.errors import MineclawError, StoreError
from bridge.executors import Pool, run_in
from bridge.metrics import BridgeMetrics
from bridge.providers.items import AssistantText, PlayerMessage, ProviderRequest, ToolCall
from bridge.store.archive import ArchivedTurn
from bridge.store.audit_sink import AuditSink, JSONValue
from bridge.turns.activity import ServerActivity, TurnCap
from bridge.turns.billing import RequestMeter
from bridge.turns.entry_redaction import redacted_answer, redacted_player
from bridge.turns.failure_lines import ProviderFailureNotice
from bridge.turns.listen import OverheardSource, overheard_items
from bridge.turns.loop_breaker import LoopBreaker
from bridge.turns.model_routes import ModelRoutes
from bridge.turns.model_text import escape_line_breaks
from bridge.turns.output_text import cap_reply
from bridge.turns.ports import (
    PUBLIC_LANE,
    ArchiveWriter,
    OverflowCompaction,
    PlayerRef,
    TurnContext,
    TurnOutput,
    TurnSnapshot,
)
from bridge.turns.recalled import recalled_items
from bridge.turns.reply_layout import layout_reply
from bridge.turns.request import build_request
from bridge.turns.session import (
    CompletedTurn,
    ContextProjection,
    PublicSession,
    holds_personal,
)
from bridge.turns.tool_round import run_round, show_tools
from bridge.turns.turn_ledger import BudgetRefused, TurnLedger
from bridge.turns.turn_progress import TurnDropped, TurnProgress, stop_for_loop

log = logging.getLogger(__name__)

TurnStatus = Literal["completed", "dropped", "stopped"]
TurnListener = Callable[[TurnSnapshot], None]


def _output_cap(snapshot: TurnSnapshot, request: ProviderRequest) -> int:
    """The most a response to ``request`` may write (0 when nothing caps it): the smaller of
    the model's cap and the turn's, as the provider layer sends it."""
    caps = [cap for cap in (snapshot.output_cap, request.max_output_tokens) if cap]
    return min(caps) if caps else 0


def new_turn_id() -> str:
    return "t-" + secrets.token_urlsafe(12)


@dataclass(frozen=True, slots=True)
class TurnRequest:
    player: PlayerRef
    question: str
    implicit: bool = False
    ask: str | None = None
    """The plugin's id of this question (protocol 1.5, ``asks``): its turn's lines carry it."""


@dataclass(frozen=True, slots=True)
class TurnOutcome:
    turn_id: str
    status: TurnStatus
    reply: str | None = None
    reason: str | None = None
    lines: tuple[str, ...] = ()
    """The chat lines the reply was broadcast as (MiniMessage the bridge wrote)."""
    failure_class: str | None = None
    """Why a dropped turn's model requests failed (the provider's failure class); None when
    it was dropped for another reason or not dropped."""


class TurnEngine:
    """Runs the turns of one lane, one at a time. ``lane_id`` names the lane in each turn's
    context and audit record; ``cap``, when given, is the server's count of running turns,
    claimed with the lane and freed with it.

    Keyword-only settings: ``action_bar_interval_s`` (0.075); ``sleep`` and
    ``rng`` (the pauses between attempts follow the snapshot's retry policy),
    ``monotonic``/``wall_clock``/``turn_ids`` for tests."""

    def __init__(
        self,
        *,
        session: PublicSession,
        archive: ArchiveWriter,
        audit: AuditSink,
        output: TurnOutput,
        activity: ServerActivity,
        lane_id: str = PUBLIC_LANE,
        cap: TurnCap | None = None,
        after_turn: Sequence[TurnListener] = (),
        action_bar_interval_s: float = 0.075,
        rng: random.Random | None = None,
        monotonic: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        turn_ids: Callable[[], str] = new_turn_id,
        metrics: BridgeMetrics | None = None,
    ) -> None:
        self._session = session
        self._metrics = metrics
        self._archive = archive
        self._audit = audit
        self._output = output
        self._activity = activity
        self._lane_id = lane_id
        self._cap = cap
        self._asker: PlayerRef | None = None
        self._turn_id: str | None = None
        self._after_turn = list(after_turn)
        self._action_bar_interval_s = action_bar_interval_s
        self._rng = rng
        self._monotonic = monotonic
        self._wall_clock = wall_clock
        self._sleep = sleep
        self._turn_ids = turn_ids
        self._task: asyncio.Task[TurnOutcome] | None = None
        self.provider_failure_listener: Callable[[ProviderFailureNotice], None] | None = None
        """Told when a turn is dropped because its model requests failed (operator lines)."""
        self._stop_requested = False
        self._committing = False
        self.overheard: OverheardSource | None = None
        self.overflow: OverflowCompaction | None = None
        """Compacts the session when a request is refused as too long (once per turn)."""
        """Where the public lane's turns take what listen mode overheard (None: nothing)."""

    def add_after_turn(self, listener: TurnListener) -> None:
        """Called with the turn's snapshot after every turn, once the server is free again."""
        self._after_turn.append(listener)

    @property
    def active(self) -> bool:
        return self._task is not None

    @property
    def lane_id(self) -> str:
        return self._lane_id

    @property
    def asker(self) -> PlayerRef | None:
        """Who asked the running turn (None when idle): that player may stop it."""
        return self._asker

    @property
    def turn_id(self) -> str | None:
        """The running turn's id (None when idle)."""
        return self._turn_id

    def start(self, request: TurnRequest, snapshot: TurnSnapshot) -> asyncio.Task[TurnOutcome]:
        """Start a turn now; raises `BusyError` when a turn or compaction holds the lane or the
        cap on running turns is reached."""
        self._activity.claim("turn")
        if self._cap is not None:
            try:
                self._cap.claim()
            except BaseException:
                self._activity.release("turn")
                raise
        # History and session id are read together, now: a clear between this and the turn's
        # first step must not run the turn on the new session while it is filed under the old.
        projection = self._session.projection(snapshot.limits.max_messages)
        context = TurnContext(
            self._turn_ids(), projection.session_id, request.player, lane_id=self._lane_id
        )
        # Line breaks a player typed (U+2028 and the like) are escaped before the text enters
        # any transcript: one chat message stays one line of that player's.
        # Redacted on the way in (`bridge.turns.entry_redaction`): no sink sees it otherwise.
        redact = snapshot.redactor.redact_text
        question = redact(escape_line_breaks(request.question))
        asked = PlayerMessage(player=request.player.name, text=question)
        # What listen mode overheard since the last turn comes in ahead of the question.
        heard = self.overheard.take() if self.overheard is not None else ()
        progress = TurnProgress(
            items=[*(redacted_player(line, redact) for line in overheard_items(heard)), asked],
            overheard=heard,
            ledger=TurnLedger(context, snapshot, self._metrics),
            began=self._monotonic(),
            question=question,
            ask=request.ask,
        )
        try:
            self._audit.record(
                "turn.start",
                {
                    "turn_id": context.turn_id,
                    "session_id": context.session_id,
                    "lane": self._lane_id,
                    "player": request.player.name,
                    "implicit": request.implicit,
                    "model": snapshot.model_ref,
                    "control_version": snapshot.control_version,
                },
            )
        except BaseException:
            # No turn without its audit record; and a refused start must not hold the server.
            self._hand_on(progress)
            self._activity.release("turn")
            if self._cap is not None:
                self._cap.release()
            raise
        self._stop_requested = False
        task = asyncio.create_task(
            self._run(context, snapshot, projection, progress, self._wall_clock()),
            name=context.turn_id,
        )
        # Cleanup is a done-callback, not a `finally`: a task cancelled before its first step
        # never enters its coroutine, and the server must still be freed.
        task.add_done_callback(lambda done: self._finished(done, context, snapshot, progress))
        self._task = task
        self._asker, self._turn_id = request.player, context.turn_id
        return task

    def stop(self) -> bool:
        """Cancel the active turn (``/mineclaw stop``); False when there is none to stop."""
        if self._task is None or self._committing or self._task.done():
            return False
        self._stop_requested = True
        self._task.cancel()
        return True

    def _finished(
        self,
        task: asyncio.Task[TurnOutcome],
        context: TurnContext,
        snapshot: TurnSnapshot,
        progress: TurnProgress,
    ) -> None:
        self._task = None
        self._asker = self._turn_id = None
        self._committing = False
        self._activity.release("turn")
        if self._cap is not None:
            self._cap.release()
        if not progress.ended:
            self._end(context, progress, "stopped" if self._stop_requested else "cancelled")
        if not task.cancelled() and task.exception() is not None:
            log.error("turn %s failed", context.turn_id, exc_info=task.exception())
        if task.cancelled() or task.exception() is not None or task.result().status != "completed":
            self._hand_on(progress)
        for listener in self._after_turn:
            try:
                listener(snapshot)
            except Exception:
                log.exception("after-turn listener failed")

    def _hand_on(self, progress: TurnProgress) -> None:
        """A turn that did not complete kept nothing it overheard: the next turn hears it."""
        if progress.overheard and self.overheard is not None:
            self.overheard.restore(progress.overheard)

    async def _run(
        self,
        context: TurnContext,
        snapshot: TurnSnapshot,
        projection: ContextProjection,
        progress: TurnProgress,
        started: datetime,
    ) -> TurnOutcome:
        try:
            await self._loop(context, snapshot, projection, progress)
        except TurnDropped as dropped:
            return await self._drop(context, progress, dropped, snapshot)
        except asyncio.CancelledError:
            if not self._stop_requested:
                raise
            self._end(context, progress, "stopped")
            current = asyncio.current_task()
            if current is not None:
                current.uncancel()  # the stop was handled: the task ends normally
            return TurnOutcome(context.turn_id, "stopped")
        except Exception:
            # A fault in a port (tool runner, output) must not wedge the server's one turn.
            log.exception("turn %s failed", context.turn_id)
            return await self._drop(context, progress, TurnDropped("internal error"), snapshot)
        self._committing = True
        commit = asyncio.ensure_future(self._commit(context, snapshot, progress, started))
        try:
            return await asyncio.shield(commit)
        except asyncio.CancelledError:
            # Cancelled from outside (shutdown) while committing: finish the commit first, so
            # the server is freed only after the archive and the session agree.
            await commit
            raise

    async def _loop(
        self,
        context: TurnContext,
        snapshot: TurnSnapshot,
        projection: ContextProjection,
        progress: TurnProgress,
    ) -> None:
        limits = snapshot.limits
        can_use_tools = snapshot.tool_runner is not None and bool(snapshot.tools)
        breaker = LoopBreaker(limits.max_failing_rounds, limits.max_repeated_calls)
        progress.recalled = await recalled_items(snapshot, context, progress.question)
        while True:
            offer_tools = (
                can_use_tools
                and progress.rounds < limits.max_tool_rounds
                and progress.tool_calls < limits.max_tool_calls
            )
            request, estimate = build_request(
                snapshot,
                projection,
                progress.items,
                offer_tools=offer_tools,
                recalled=progress.recalled,
            )
            if limits.max_output_tokens is not None:
                request = request.model_copy(update={"max_output_tokens": limits.max_output_tokens})
            # Before every request (a turn that waited in a lane's line may find the budget
            # spent by then; between tool rounds a turn may have spent it itself) its worst
            # case is reserved: a request that could pass a budget is never sent.
            ledger = progress.ledger
            prompt = self._session.calibration.calibrated(estimate)
            cap = _output_cap(snapshot, request)
            try:
                hold, fitted = await ledger.reserve(prompt, cap)
            except BudgetRefused as refused:
                raise TurnDropped(str(refused), key=refused.key, values=refused.values) from None
            if fitted != cap:  # the budget's last tokens buy a shorter answer
                request = request.model_copy(update={"max_output_tokens": fitted})
            meter = RequestMeter()
            try:
                completed = await self._routes().answer(context, snapshot, progress, request, meter)
            except BaseException as exc:
                # Stopped or failed: what the provider served is billed all the same.
                model_ref = snapshot.routes[progress.route].model_ref
                await asyncio.shield(ledger.unfinished(hold, meter, prompt, model_ref))
                if isinstance(exc, TurnDropped) and await self._compacted_for(
                    exc, progress, snapshot
                ):
                    projection = self._session.projection(limits.max_messages)
                    continue
                raise
            if completed.usage is not None and not completed.usage.estimated:
                self._session.calibration.observe(
                    raw_estimate=estimate, reported_input_tokens=completed.usage.input_tokens
                )
            model_ref = snapshot.routes[progress.route].model_ref
            # Shielded: a stop arriving while the bill is written must not lose it.
            await asyncio.shield(ledger.answered(completed, prompt, hold, meter, model_ref))
            redact = snapshot.redactor.redact_text
            progress.items.extend(redacted_answer(item, redact) for item in completed.items)
            answered = progress.items[len(progress.items) - len(completed.items) :]
            calls = [item for item in answered if isinstance(item, ToolCall)]
            if not calls:
                texts = (item.text for item in answered if isinstance(item, AssistantText))
                progress.reply = "".join(texts).strip()
                if not progress.reply:
                    raise TurnDropped("the model gave an empty answer")
                return
            if not offer_tools:
                raise TurnDropped("the model asked for tools past the turn's limits")
            progress.rounds += 1
            stop_for_loop(breaker.before_round(calls))  # a repeat too many is never run
            await show_tools(self._output, context, snapshot, calls)
            in_round = dataclasses.replace(context, round=progress.rounds)
            results = await run_round(in_round, snapshot, calls, progress, self._audit)
            progress.items.extend(results)
            stop_for_loop(breaker.after_round(results))

    def _routes(self) -> ModelRoutes:
        # Read now, not at construction: what the engine holds is what a request uses.
        return ModelRoutes(
            output=self._output,
            audit=self._audit,
            metrics=self._metrics,
            sleep=self._sleep,
            rng=self._rng,
            monotonic=self._monotonic,
            action_bar_interval_s=self._action_bar_interval_s,
        )

    async def _compacted_for(
        self, dropped: TurnDropped, progress: TurnProgress, snapshot: TurnSnapshot
    ) -> bool:
        """A context too long for the model is answered by compacting the session once per
        turn (the overflow port); the request is then built again from the shorter session."""
        failure = dropped.failure
        if failure is None or failure.failure_class != "too_long" or progress.compacted:
            return False
        if self.overflow is None:
            return False
        progress.compacted = True
        return await self.overflow(snapshot)

    async def _drop(
        self,
        context: TurnContext,
        progress: TurnProgress,
        dropped: TurnDropped,
        snapshot: TurnSnapshot,
    ) -> TurnOutcome:
        failure = dropped.failure
        self._end(
            context,
            progress,
            "dropped",
            dropped.reason,
            failure_class=failure.failure_class if failure is not None else None,
            model_ref=snapshot.routes[progress.route].model_ref,
        )
        values = dropped.values if dropped.values is not None else {"reason": dropped.shown}
        try:
            await self._output.failure(context.player, dropped.key, values)
        except MineclawError as exc:
            log.warning("could not tell %s that the turn failed: %s", context.player.name, exc)
        listener = self.provider_failure_listener
        if failure is not None and listener is not None:
            notice = ProviderFailureNotice(
                turn_id=context.turn_id,
                model_ref=snapshot.routes[progress.route].model_ref,
                failure_class=failure.failure_class,
                error=failure.reason,
            )
            try:
                listener(notice)
            except Exception:  # the operators' line must never cost the player theirs
                log.exception("provider failure listener failed")
        failure_class = failure.failure_class if failure is not None else None
        return TurnOutcome(
            context.turn_id, "dropped", reason=dropped.reason, failure_class=failure_class
        )

    def _end(
        self,
        context: TurnContext,
        progress: TurnProgress,
        outcome: str,
        reason: str = "",
        *,
        failure_class: str | None = None,
        model_ref: str | None = None,
    ) -> None:
        fields: dict[str, JSONValue] = {
            "turn_id": context.turn_id,
            "outcome": outcome,
            "rounds": progress.rounds,
            "tool_calls": progress.tool_calls,
        }
        ledger = progress.ledger
        if ledger.tokens:
            fields["tokens"] = ledger.tokens
            if ledger.estimated_tokens:
                fields["estimated_tokens"] = ledger.estimated_tokens
        if reason:
            fields["reason"] = reason
        if failure_class is not None:
            fields["class"] = failure_class
        if model_ref is not None:
            fields["model"] = model_ref
        progress.ended = True
        if self._metrics is not None:
            self._metrics.turn_ended(
                outcome=outcome,
                lane="public" if self._lane_id == PUBLIC_LANE else "private",
                tier=progress.ledger.tier,
                seconds=self._monotonic() - progress.began,
            )
        # Never raises: by now the turn is archived and published, or dropped, and the player
        # must still get the reply or the failure line when the audit log has failed.
        try:
            self._audit.record("turn.end", fields)
        except MineclawError as exc:
            log.error("turn %s end not audited: %s", context.turn_id, exc)

    async def _commit(
        self,
        context: TurnContext,
        snapshot: TurnSnapshot,
        progress: TurnProgress,
        started: datetime,
    ) -> TurnOutcome:
        items = tuple(progress.items)
        archived = ArchivedTurn(
            turn_id=context.turn_id,
            session_id=context.session_id,
            player=context.player.name,
            started_at=started,
            ended_at=self._wall_clock(),
            # Which model answered: the snapshot's own, or the fallback the turn went on with.
            model_ref=snapshot.routes[progress.route].model_ref,
            control_version=snapshot.control_version,
            items=tuple(item.model_dump(mode="json") for item in items),
            ask=progress.ask,
        )

        def append_redacted() -> None:
            # Every item redacted whole before it is stored; in the worker thread, off the loop.
            redact = snapshot.redactor.redact_json
            redacted = tuple(redact(item) for item in archived.items)
            self._archive.append(archived.model_copy(update={"items": redacted}))

        try:
            await run_in(Pool.STORE, append_redacted)
        except StoreError as exc:
            log.error("turn %s could not be archived: %s", context.turn_id, exc)
            return await self._drop(
                context, progress, TurnDropped("the turn could not be saved"), snapshot
            )
        turn = CompletedTurn(context.turn_id, context.player.name, items)
        # A public turn that took a personal result (the asker's snapshot, memories, commands,
        # a Function's or an MCP server's answer) is the asker's alone: its answer reaches only
        # them and it stays out of the shared session (and, by the same property, out of the
        # public conversation index: `bridge.memory.conversations`).
        askers_own = self._lane_id == PUBLIC_LANE and holds_personal(items)
        published = not askers_own and self._session.publish(turn, session_id=context.session_id)
        if askers_own:
            # Never in the session: the public lines it overheard are the next turn's to hear.
            self._hand_on(progress)
        limits = snapshot.limits
        # Redacted whole, then cut and laid out: a cut can leave a piece of a secret that no
        # rule recognises any more.
        redacted = snapshot.redactor.redact_text(progress.reply)
        reply = cap_reply(redacted, limits.reply_max_chars)
        lines = layout_reply(redacted, limits.reply_layout)
        outcome = "completed" if published else "completed_after_clear"
        self._end(
            context,
            progress,
            "completed_for_asker" if askers_own else outcome,
            model_ref=snapshot.routes[progress.route].model_ref,
        )
        try:
            if askers_own:
                await self._output.reply_to_asker(context.player, lines)
            else:
                await self._output.reply(context.player, lines)
        except MineclawError as exc:
            log.warning("reply of turn %s not delivered: %s", context.turn_id, exc)
        return TurnOutcome(context.turn_id, "completed", reply=reply, lines=lines)
