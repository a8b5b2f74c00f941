"""Titles of private conversations, made after their first answered turn.

When a private turn completes in a conversation that has no title yet (the player gave none
with ``/ai new``), one short request asks ``conversations.title_model`` (a cheap model of
``providers.yml``; the model in force when none is named) for a few words from the question and
the answer (`bridge.conversations.titles`), off the turn's path: the player's answer never
waits for it. Its tokens are the server's alone, like a compaction's: the request reserves its
worst case from the server's budget first (none is sent when the budget cannot hold it) and is
settled under the purpose ``conversation.title``, and counted in ``mineclaw_tokens_total``.
What goes out and what comes back is redacted; a title the player gave meanwhile is never
replaced. A failure leaves the conversation untitled (logged); the next answered turn tries
again, at most `MAX_TRIES` times per conversation in one run.
"""

from __future__ import annotations

import logging

from bridge.app.requests.background import BackgroundTasks
from bridge.app.requests.listen_decisions import ask_model
from bridge.app.requests.port import RequestPort
from bridge.app.requests.server_budget import reserve_for_server, settle_for_server
from bridge.app.serving.served import NotConfiguredError
from bridge.conversations.titles import (
    INSTRUCTIONS,
    MAX_OUTPUT_TOKENS,
    title_document,
    title_from_reply,
)
from bridge.decisions.contract import DecisionUnavailable, ModelReply
from bridge.errors import MineclawError
from bridge.executors import Pool, run_in
from bridge.metrics import NO_TIER
from bridge.policy.budgets import Reservation
from bridge.turns.billing import TITLE
from bridge.turns.engine import TurnOutcome, TurnRequest
from bridge.turns.lanes import Lane

log = logging.getLogger(__name__)

TITLE_SESSION = "conversation-title"
MAX_TRIES = 3


class ConversationTitler:
    def __init__(self, runtime: RequestPort) -> None:
        self._runtime = runtime
        self._tasks = BackgroundTasks("conversation title")
        self._tries: dict[str, int] = {}  # by lane id

    def after_turn(self, lane: Lane, request: TurnRequest, outcome: TurnOutcome) -> None:
        """A private turn ended: title its conversation if it completed and has no title."""
        runtime = self._runtime
        state = runtime.conversations
        settings = runtime.plane.config.conversations
        if (
            state is None
            or lane.owner is None
            or outcome.status != "completed"
            or not outcome.reply
            or not settings.titles
        ):
            return
        shelf = state.shelf(lane.owner.uuid)
        conversation = next(
            (
                c
                for c in shelf.state.conversations
                if state.lane_of(lane.owner.uuid, c.id) == lane.lane_id
            ),
            None,
        )
        if conversation is None or conversation.title is not None:
            return
        tries = self._tries.get(lane.lane_id, 0)
        if tries >= MAX_TRIES:
            return
        self._tries[lane.lane_id] = tries + 1
        self._tasks.start(
            self._title(lane.owner.uuid, conversation.id, request.question, outcome.reply)
        )

    async def _title(
        self, player_uuid: str, conversation_id: str, question: str, answer: str
    ) -> None:
        runtime = self._runtime
        plane = runtime.plane
        model_ref = plane.config.conversations.title_model or runtime.model_ref()
        try:
            stream = runtime.model_stream(model_ref)
        except NotConfiguredError as exc:
            log.warning("no title made with %s: %s", model_ref, exc)
            return
        document = plane.redact(title_document(question, answer))
        held = reserve_for_server(runtime, INSTRUCTIONS, document, MAX_OUTPUT_TOKENS, "title")
        if held is None:
            log.info("no title made: the server's budget cannot hold the request")
            return
        reply: ModelReply | None = None
        answered = False
        try:
            reply = await ask_model(
                stream,
                document,
                instructions=INSTRUCTIONS,
                session_id=TITLE_SESSION,
                max_output_tokens=MAX_OUTPUT_TOKENS,
            )
            answered = True
        except DecisionUnavailable as exc:
            reply = exc.reply  # what streamed before the failure was served
            log.warning("no title made with %s: %s", model_ref, exc)
        except MineclawError as exc:
            log.warning("no title made with %s: %s", model_ref, exc)
        finally:
            await self._count(model_ref, reply, held)
        if reply is None or not answered:  # a broken stream's start is billed, not used
            return
        title = title_from_reply(plane.redact(reply.text))
        state = runtime.conversations
        if title is None or state is None:
            return
        if await state.change(player_uuid, lambda shelf: shelf.titled(conversation_id, title)):
            runtime.audit.record(
                "conversation.titled", {"conversation": conversation_id, "model": model_ref}
            )

    async def _count(self, model_ref: str, reply: ModelReply | None, held: Reservation) -> None:
        """The server's budget under `TITLE` and ``mineclaw_tokens_total``; no reply: nothing
        was served, the reservation is let go."""
        runtime = self._runtime
        budgets = runtime.budgets
        if reply is None:
            if budgets is not None:
                budgets.release(held)
            return
        runtime.metrics.tokens_used(
            tier=NO_TIER,
            model=model_ref,
            input_tokens=reply.input_tokens,
            output_tokens=reply.output_tokens,
            estimated=reply.estimated,
            purpose=TITLE,
        )
        if budgets is None:
            return
        await run_in(
            Pool.BUDGET,
            settle_for_server,
            runtime,
            held,
            model_ref=model_ref,
            reply=reply,
            purpose=TITLE,
            what="title",
        )

    async def settled(self) -> None:
        """Wait until every title asked for so far is made or given up (tests)."""
        await self._tasks.settled()

    async def aclose(self) -> None:
        await self._tasks.aclose()
