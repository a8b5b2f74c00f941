"""Listen mode's decisions in the application: which implicit lines start a turn.

The chat path asks `ListenDecider.decide_now` about an implicit line that passed every gate:

- ``listen.answer_every_line``: yes, every line (the behaviour before decisions existed);
- no ``listen.decision_model``: the embedded classifier (`bridge.decisions.classifier`)
  answers at once; it is a few string checks, so the verdict still carries the AI prefix of a
  line that started a turn;
- a decision model: if the contract has a free slot and its circuit is closed, the line gets
  its verdict now (it stays public, without the prefix) and the model is asked after it, off
  the chat path: on a loop of its own in another thread (`bridge.app.requests.decision_loop`), its
  usage recorded in batches (`BatchedSettle`); otherwise the classifier decides now, as the
  fallback.

A model decision that comes back ``answer: true`` at or above ``listen.decision_threshold``
starts the turn through the chat path (`ChatPath.start_decided`, which checks the gates again);
any other answer leaves the line overheard. A failure (error, timeout, malformed answer) hands
the line to the classifier; a cancellation (listen mode off, shutdown) or the provider refusing
the key does not. The decision's tokens are the server's alone: each request reserves its worst
case (prompt and output cap) from the server's budget before it is sent and is settled under
the purpose ``listen.decision`` after (`bridge.policy.budgets`), never from a player's budget;
they are also counted in ``mineclaw_listen_decision_tokens``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from bridge.app.requests.background import BackgroundTasks
from bridge.app.requests.decision_loop import DecisionLoop
from bridge.app.requests.port import RequestPort
from bridge.app.requests.server_budget import BatchedSettle, reserve_for_server
from bridge.app.serving.served import ModelStream, NotConfiguredError
from bridge.decisions.classifier import (
    Classification,
    Classifier,
    ClassifierSettings,
    players_named,
)
from bridge.decisions.contract import (
    Decided,
    DecisionContract,
    DecisionPermissionError,
    DecisionUnavailable,
    ModelReply,
    Outcome,
    Refused,
    Unavailable,
)
from bridge.decisions.memory import ReplyMemory
from bridge.decisions.prompt import (
    INSTRUCTIONS,
    MAX_OUTPUT_TOKENS,
    HeardLine,
    decision_document,
)
from bridge.decisions.record import DecidedBy, DecisionLog
from bridge.link.messages import ChatRequest, PlayerRef
from bridge.policy.budgets import NOTHING_HELD, Reservation
from bridge.providers.events import Completed, Failed, TextDelta
from bridge.providers.items import AssistantText, PlayerMessage, ProviderRequest
from bridge.turns.gates import GateRefusal
from bridge.turns.listen import carry_limits
from bridge.turns.tokens import raw_tokens_of_text

log = logging.getLogger(__name__)

DECISION_PURPOSE = "listen.decision"
"""The usage ledger's purpose of decision tokens, counted for the server alone (a player is
never charged for a decision about their line)."""
DECISION_SESSION = "listen-decision"
RECENT_KEPT = 32
PERMISSION_STATUSES = (401, 403)

StartLater = Callable[[ChatRequest, str, str | None], bool]


@dataclass(frozen=True, slots=True)
class _Heard:
    player: str
    player_uuid: str
    text: str
    at: float


class ListenDecider:
    """One server's decisions. ``clock``: monotonic seconds, for the reply window and the
    circuit (the bench replays a recorded half hour with its own)."""

    def __init__(
        self, runtime: RequestPort, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._runtime = runtime
        self.clock = clock
        self.contract = DecisionContract(clock=lambda: self.clock())
        self.log = DecisionLog()
        self.start_later: StartLater | None = None
        """Starts a decided line's turn (`ChatPath.start_decided`); set by the chat path."""
        self.replies = ReplyMemory()
        """Per player: when the assistant answered them, when another player named them."""
        self._recent: deque[_Heard] = deque(maxlen=RECENT_KEPT)
        self._online: dict[str, str] = {}
        self._tasks = BackgroundTasks("listen decision")
        self._loop = DecisionLoop()
        self._usage = BatchedSettle(runtime, purpose=DECISION_PURPOSE, what="listen decision")
        self._classifier: Classifier | None = None

    # ---- what the decisions read: players online, recent lines, the answers per player

    def seen(self, player: str) -> None:
        self._online[player.lower()] = player

    def left(self, player: str) -> None:
        self._online.pop(player.lower(), None)

    @property
    def online(self) -> tuple[str, ...]:
        return tuple(self._online.values())

    def heard(self, player: PlayerRef, text: str) -> None:
        """A listen-mode line of a player who may use the assistant (evidence for the model)."""
        self.seen(player.name)
        now = self.clock()
        self._recent.append(_Heard(player.name, player.uuid, text, now))
        # A player this line names is being spoken to: their "you" next answers this player.
        self.replies.addressed(players_named(text, player.name, self._online.values()), now)

    def answered(self, player: str) -> None:
        """The assistant answered ``player`` in public now (a completed public turn)."""
        self.replies.answered(player, self.clock())

    def forget(self, player_uuid: str) -> None:
        """A player opted out: their lines leave the evidence and the record."""
        self._recent = deque(
            (h for h in self._recent if h.player_uuid != player_uuid), maxlen=RECENT_KEPT
        )
        self.log.forget(player_uuid)

    def listen_off(self) -> None:
        """Listen mode went off (or a new server instance): pending decisions are cancelled
        and what was heard is forgotten."""
        self._tasks.cancel()
        self._recent.clear()
        self.replies.clear()

    # ---- the record of lines a gate held before anyone decided

    def gate_refused(self, player: PlayerRef, text: str, refusal: GateRefusal) -> None:
        why = refusal.message_key.removeprefix("gates.").replace("_", " ")
        self._record(player, text, "gate", False, why)

    def budget_refused(self, player: PlayerRef, text: str) -> None:
        self._record(player, text, "gate", False, "a token budget is spent")

    # ---- deciding

    def decide_now(
        self, request: ChatRequest, question: str, request_id: str | None
    ) -> bool | None:
        """True: start the turn now; False: the line stays overheard; None: the model decides
        after the verdict (the caller passes the line now)."""
        settings = self._runtime.plane.config.listen
        player = request.player
        if settings.answer_every_line:
            self._record(player, question, "every_line", True, "listen.answer_every_line")
            return True
        if not settings.decision_model:
            return self._classified(player, question, "classifier")
        why_not = self.contract.unavailable_now()
        route = None
        if why_not is None:
            try:
                route = self._runtime.one_off_route(settings.decision_model)
            except NotConfiguredError as exc:
                why_not = f"decision model not usable: {exc}"
        claim = None if route is None else self.contract.claim()
        if route is None or claim is None:
            return self._classified(player, question, "fallback", why_not or "no free slot")
        document = self._document(player.name, question)
        held = self._reserve(document)
        if held is None:
            self.contract.release(claim)
            why = "the server's budget cannot hold a decision"
            return self._classified(player, question, "fallback", why)
        serial = self._record(player, question, "model", None, "asked")
        model_ref = settings.decision_model

        client, model = route
        loop = self._loop

        async def ask() -> ModelReply:
            # On the decision loop: none of the request's steps run between two verdicts.
            return await loop.run(lambda: ask_model(loop.stream(client, model), document))

        async def decide() -> None:
            try:
                outcome = await self.contract.run(claim, ask)
            except asyncio.CancelledError:
                self.log.settle(serial, decided_by="nobody", started=False, why="cancelled")
                raise
            reply = outcome.reply if isinstance(outcome, Decided | Unavailable) else None
            self._count(model_ref, reply, held)
            self._settle(request, question, request_id, serial, outcome)

        task = self._tasks.start(decide())

        def cleanup(_: asyncio.Task[None]) -> None:
            # A task cancelled before it ever ran never reached `run`: its slot and its
            # reservation are given back here (both only once).
            self.contract.release(claim)
            budgets = self._runtime.budgets
            if budgets is not None and held is not NOTHING_HELD:
                budgets.release(held)

        task.add_done_callback(cleanup)
        return None

    def _reserve(self, document: str) -> Reservation | None:
        """Hold the decision's worst case (its prompt and output cap) from the server's budget;
        None when the budget cannot hold it."""
        return reserve_for_server(
            self._runtime, INSTRUCTIONS, document, MAX_OUTPUT_TOKENS, "listen decision"
        )

    def _settle(
        self,
        request: ChatRequest,
        question: str,
        request_id: str | None,
        serial: int,
        outcome: Outcome,
    ) -> None:
        runtime = self._runtime
        player = request.player
        if not runtime.listen.on or runtime.listen.ignores(player.uuid):
            # Switched off or opted out meanwhile: nothing more is done with the line.
            self.log.settle(serial, decided_by="nobody", started=False, why="listen mode changed")
            return
        settings = runtime.plane.config.listen
        decided_by: DecidedBy
        if isinstance(outcome, Decided):
            answer = outcome.answer
            start = answer.answer and answer.confidence >= settings.decision_threshold
            said = "yes" if answer.answer else "no"
            why = f"{said} at {answer.confidence:.2f}: {answer.reason or 'no reason given'}"
            decided_by = "model"
        elif isinstance(outcome, Refused):
            log.warning("listen decision refused by the provider: %s", outcome.reason)
            self.log.settle(serial, decided_by="nobody", started=False, why=outcome.reason)
            self._overhear(request, question)
            return
        else:
            classified = self._classify(player.name, question)
            start, decided_by = classified.start, "fallback"
            why = f"{outcome.reason}; {classified.text}"
        runtime.metrics.listen_decision(decided_by=decided_by, started=start)
        started = False
        if start and self.start_later is not None:
            started = self.start_later(request, question, request_id)
            if not started:
                why += "; the gates held it when the answer came"
        elif not start:
            self._overhear(request, question)
        self.log.settle(serial, decided_by=decided_by, started=started, why=why)

    def _overhear(self, request: ChatRequest, question: str) -> None:
        runtime = self._runtime
        limits = runtime.plane.config.listen
        runtime.listen.overheard.add(request.player.name, question, carry_limits(limits))

    def _classified(
        self, player: PlayerRef, question: str, decided_by: DecidedBy, because: str = ""
    ) -> bool:
        classified = self._classify(player.name, question)
        why = f"{because}; {classified.text}" if because else classified.text
        self._runtime.metrics.listen_decision(decided_by=decided_by, started=classified.start)
        self._record(player, question, decided_by, classified.start, why)
        return classified.start

    def _classify(self, speaker: str, question: str) -> Classification:
        plane = self._runtime.plane
        settings = ClassifierSettings(
            names=(plane.config.identity.name, *plane.config.listen.aliases),
            reply_window_s=plane.config.listen.reply_window_ms / 1000,
        )
        classifier = self._classifier
        if classifier is None or classifier.settings != settings:
            classifier = self._classifier = Classifier(settings)
        return classifier.classify(
            question,
            speaker=speaker,
            online=self._online.values(),
            recent=self.replies.recent(speaker),
            now=self.clock(),
        )

    def _document(self, speaker: str, question: str) -> str:
        plane = self._runtime.plane
        now = self.clock()
        listen = self._runtime.listen
        recent = [
            HeardLine(h.player, h.text, now - h.at)
            for h in self._recent
            if not listen.ignores(h.player_uuid)
        ]
        # The line itself is the newest heard line: evidence is what came before it.
        if recent and recent[-1].player == speaker and recent[-1].text == question:
            recent.pop()
        last = self.replies.last_answered()
        window = plane.config.listen.reply_window_ms / 1000
        answered = last[0] if last is not None and now - last[1] <= window else None
        return decision_document(
            assistant=(plane.config.identity.name, *plane.config.listen.aliases),
            line=HeardLine(speaker, question, 0.0),
            recent=recent,
            last_answered=answered,
            online=self.online,
        )

    def _record(
        self, player: PlayerRef, text: str, decided_by: DecidedBy, started: bool | None, why: str
    ) -> int:
        return self.log.add(
            player=player.name,
            player_uuid=player.uuid,
            text=text,
            decided_by=decided_by,
            started=started,
            why=why,
        )

    def _count(self, model_ref: str, reply: ModelReply | None, held: Reservation) -> None:
        """Settle the decision's reservation with what it used: the server's budget under
        `DECISION_PURPOSE` and its own metric, never a player's. No reply: nothing was served,
        the reservation is let go."""
        runtime = self._runtime
        budgets = runtime.budgets
        if reply is None:
            if budgets is not None:
                budgets.release(held)
            return
        runtime.metrics.listen_decision_tokens(
            model=model_ref,
            input_tokens=reply.input_tokens,
            output_tokens=reply.output_tokens,
            estimated=reply.estimated,
        )
        if budgets is not None:
            self._usage.add(held, model_ref, reply)  # written in a batch, off the chat path

    async def settled(self) -> None:
        """Wait until every decision asked so far has been acted on and its usage recorded
        (tests, the bench)."""
        await self._tasks.settled()
        await self._usage.flush()

    async def aclose(self) -> None:
        """Cancel what is being decided and record the usage of what was decided."""
        await self._tasks.aclose()
        await self._loop.aclose()
        await self._usage.flush()


async def ask_model(
    stream: ModelStream,
    document: str,
    *,
    instructions: str = INSTRUCTIONS,
    session_id: str = DECISION_SESSION,
    max_output_tokens: int = MAX_OUTPUT_TOKENS,
) -> ModelReply:
    """One request to the decision model; its text and usage. Raises `DecisionUnavailable`
    (the fallback decides) or `DecisionPermissionError` (the provider refused the key).
    ``instructions``, ``session_id``, ``max_output_tokens``: another one-off request of the
    same shape (conversation titles)."""
    request = ProviderRequest(
        session_id=session_id,
        instructions=instructions,
        items=(PlayerMessage(player=None, text=document),),
        max_output_tokens=max_output_tokens,
    )
    prompt_tokens = raw_tokens_of_text(instructions) + raw_tokens_of_text(document)
    streamed: list[str] = []
    async with contextlib.aclosing(stream(request)) as events:
        async for event in events:
            if isinstance(event, TextDelta):
                streamed.append(event.text)
            elif isinstance(event, Completed):
                text = "".join(
                    item.text for item in event.items if isinstance(item, AssistantText)
                ) or "".join(streamed)
                usage = event.usage
                if usage is not None and usage.total_tokens > 0:
                    return ModelReply(text, usage.input_tokens, usage.output_tokens, False)
                return ModelReply(text, prompt_tokens, raw_tokens_of_text(text), True)
            elif isinstance(event, Failed):
                status = getattr(event.error, "status", None)
                if status in PERMISSION_STATUSES:
                    raise DecisionPermissionError(f"the provider refused the request ({status})")
                failed = DecisionUnavailable(f"{event.failure_class}: {event.reason}")
                if streamed:  # a provider bills what it streamed before the failure
                    text = "".join(streamed)
                    failed.reply = ModelReply(text, prompt_tokens, raw_tokens_of_text(text), True)
                raise failed
    raise DecisionUnavailable("the stream ended without an answer")
