"""``/mineclaw retry``: ask a question again whose turn the model provider failed.

A turn dropped because its model requests failed (every attempt and fallback spent: an error
status, a broken stream, a timeout) offers its question to its asker for 30 minutes
(`bridge.turns.retry_offers`): the failure line is followed by ``errors.retry_offer``. The
asker's ``/mineclaw retry`` starts the same question again in the same lane (public, or their
private one), once. It passes the permission of that lane, the budgets (the new request is paid
like any other) and the lane's wait line, but not the cooldowns: the failed attempt already
started them, and the player must not wait out a cooldown for a request that gave them
nothing. The failed attempt's own usage was counted once, when it ended (``turn.failed``), and
is not counted again. Nobody else can retry a player's question.

An offer is kept in the store too (`bridge.store.player_state`, by server and player), so
whichever bridge serves the server next takes it, once; while the store cannot be reached the
offer held in this bridge serves.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Collection
from datetime import UTC, datetime, timedelta

from bridge.app.requests.background import BackgroundTasks
from bridge.app.serving.served import NotConfiguredError
from bridge.app.wiring.runtime import Runtime
from bridge.errors import MineclawError, StoreError
from bridge.link.messages import CommandRequest, Text
from bridge.turns.activity import BusyError
from bridge.turns.engine import TurnOutcome, TurnRequest
from bridge.turns.gates import BUSY, CHAT_PERMISSION, NO_PERMISSION, PRIVATE_PERMISSION
from bridge.turns.lanes import Lane
from bridge.turns.ports import PUBLIC_LANE, PlayerRef
from bridge.turns.retry_offers import MAX_OFFERS, RetryOffer, RetryOffers

log = logging.getLogger(__name__)


class RetryPath:
    def __init__(self, runtime: Runtime, offers: RetryOffers | None = None) -> None:
        self._runtime = runtime
        self.offers = offers or RetryOffers()
        self._storing = BackgroundTasks("retry offer")
        self._in_store: set[str] = set()
        """The turns whose offer reached the store (from then on the store's row is the offer)."""
        runtime.lanes.on_provider_failure = self.dropped

    @property
    def _server(self) -> str:
        return self._runtime.session_scope

    def dropped(self, lane_id: str, request: TurnRequest, outcome: TurnOutcome) -> Text | None:
        """A turn of ``lane_id`` was dropped for its model requests: offer its question."""
        offer = self.offers.offer(request.player, request.question, lane_id, outcome.turn_id)
        self._storing.start(self._store(offer, put_back=False))
        self._runtime.audit.record(
            "retry.offered",
            {"turn_id": offer.turn_id, "lane": lane_id, "player": request.player.name},
        )
        minutes = str(self.offers.window_minutes)
        return self._runtime.text(
            "errors.retry_offer", {"player": request.player.name, "minutes": minutes}
        )

    async def retry(self, request: CommandRequest) -> list[Text]:
        runtime = self._runtime
        sender = request.sender.player
        name = sender.name if sender is not None else "console"
        offer = None if sender is None else await self._take(sender.uuid)
        if offer is None:
            return [runtime.text("commands.retry_none", {"player": name})]
        return self._start(offer, request.sender.granted)

    def _still_there(self, offer: RetryOffer) -> bool:
        """Whether the private conversation the question failed in is still the player's."""
        state = self._runtime.conversations
        if state is None:
            return True
        uuid = offer.player.uuid
        return any(
            state.lane_of(uuid, conversation.id) == offer.lane_id
            for conversation in state.shelf(uuid).newest_first()
        )

    async def settled(self) -> None:
        """Wait until the offers made so far are in the store (tests)."""
        await self._storing.settled()

    async def _store(self, offer: RetryOffer, *, put_back: bool) -> None:
        expires = datetime.now(UTC) + timedelta(seconds=offer.expires - time.monotonic())
        document: dict[str, object] = {
            "player_uuid": offer.player.uuid,
            "player_name": offer.player.name,
            "question": offer.question,
            "lane_id": offer.lane_id,
            "turn_id": offer.turn_id,
        }
        try:
            store = self._runtime.players
            write = store.put_back_retry if put_back else store.offer_retry
            await asyncio.to_thread(write, self._server, offer.player.uuid, document, expires)
        except StoreError as exc:  # this bridge's own offer still serves
            log.info("retry offer of %s not stored: %s", offer.player.name, exc)
            return
        if len(self._in_store) >= MAX_OFFERS:
            self._in_store.clear()  # the store's rows serve; only an unstored offer is missed
        self._in_store.add(offer.turn_id)

    async def _take(self, player_uuid: str) -> RetryOffer | None:
        """The player's offer on this server: the store's (whichever bridge made it), or when
        the store cannot be read, the one this bridge holds. Taken once either way."""
        await self._storing.settled()  # an offer being stored is taken from there
        held = self.offers.take(player_uuid)
        now = datetime.now(UTC)
        try:
            stored = await asyncio.to_thread(
                self._runtime.players.take_retry, self._server, player_uuid, now
            )
        except StoreError as exc:
            log.info("retry offer of %s not read from the store: %s", player_uuid, exc)
            return held
        stored_here = held is not None and held.turn_id in self._in_store
        if held is not None:
            self._in_store.discard(held.turn_id)
        if stored is None:  # taken elsewhere or expired, unless it never reached the store
            return None if stored_here else held
        document, expires = stored
        try:
            return RetryOffer(
                player=PlayerRef(str(document["player_uuid"]), str(document["player_name"])),
                question=str(document["question"]),
                lane_id=str(document["lane_id"]),
                turn_id=str(document["turn_id"]),
                expires=time.monotonic() + (expires - now).total_seconds(),
            )
        except KeyError:
            log.error("retry offer of %s in the store is not whole; dropped", player_uuid)
            return None

    def _put_back(self, offer: RetryOffer) -> None:
        self.offers.put_back(offer)
        self._storing.start(self._store(offer, put_back=True))

    def _start(self, offer: RetryOffer, granted: Collection[str]) -> list[Text]:
        runtime = self._runtime
        player = {"player": offer.player.name}
        public = offer.lane_id == PUBLIC_LANE
        if (PRIVATE_PERMISSION if not public else CHAT_PERMISSION) not in granted:
            return [runtime.text(NO_PERMISSION, player)]
        if not public and not self._still_there(offer):
            # Its conversation was deleted meanwhile: nothing to answer in.
            return [runtime.text("commands.retry_none", player)]
        lanes = runtime.lanes
        # In the conversation that failed, which may no longer be the active one.
        lane: Lane = lanes.public if public else lanes.lanes.private(offer.player, offer.lane_id)
        try:
            spent = runtime.budget_refusal(
                offer.player.uuid,
                granted,
                offer.question,
                session=lane.session if not public else None,
                player_name=offer.player.name,
            )
        except MineclawError as exc:  # an unreadable ledger must not stop every turn
            log.error("budget of %s not checked: %s", offer.player.name, exc)
            spent = None
        if spent is not None:
            self._put_back(offer)
            return [runtime.text(spent.key(mid_turn=False), {**player, **spent.values()})]
        try:
            snapshot = runtime.snapshot(granted)
        except NotConfiguredError as exc:
            self._put_back(offer)
            return [runtime.text("errors.not_configured", {**player, "reason": str(exc)})]
        turn = TurnRequest(
            player=PlayerRef(offer.player.uuid, offer.player.name), question=offer.question
        )
        try:
            admission = lanes.admit(lane, turn, granted, snapshot)
        except BusyError:
            admission = None
        except MineclawError as exc:  # the turn's start could not be audited
            log.error("retry of %s not started: %s", offer.player.name, exc)
            self._put_back(offer)
            return [runtime.text("errors.invalid_request", {**player, "reason": "internal error"})]
        if admission is None or admission.status in ("busy", "already_waiting"):
            self._put_back(offer)
            return [runtime.text(BUSY, player)]
        runtime.gates.admit(player_uuid=offer.player.uuid)
        runtime.audit.record(
            "retry.started", {"turn_id": offer.turn_id, "lane": lane.lane_id, **player}
        )
        shown = runtime.plane.redact(offer.question)
        return [runtime.text("commands.retry_started", {**player, "question": shown})]
