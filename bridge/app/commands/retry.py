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
"""

from __future__ import annotations

import logging
from collections.abc import Collection

from bridge.app.serving.served import NotConfiguredError
from bridge.app.wiring.runtime import Runtime
from bridge.errors import MineclawError
from bridge.link.messages import CommandRequest, Text
from bridge.turns.activity import BusyError
from bridge.turns.engine import TurnOutcome, TurnRequest
from bridge.turns.gates import BUSY, CHAT_PERMISSION, NO_PERMISSION, PRIVATE_PERMISSION
from bridge.turns.lanes import Lane
from bridge.turns.ports import PUBLIC_LANE, PlayerRef
from bridge.turns.retry_offers import RetryOffer, RetryOffers

log = logging.getLogger(__name__)


class RetryPath:
    def __init__(self, runtime: Runtime, offers: RetryOffers | None = None) -> None:
        self._runtime = runtime
        self.offers = offers or RetryOffers()
        runtime.lanes.on_provider_failure = self.dropped

    def dropped(self, lane_id: str, request: TurnRequest, outcome: TurnOutcome) -> Text | None:
        """A turn of ``lane_id`` was dropped for its model requests: offer its question."""
        offer = self.offers.offer(request.player, request.question, lane_id, outcome.turn_id)
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
        offer = None if sender is None else self.offers.take(sender.uuid)
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
            self.offers.put_back(offer)
            return [runtime.text(spent.key(mid_turn=False), {**player, **spent.values()})]
        try:
            snapshot = runtime.snapshot(granted)
        except NotConfiguredError as exc:
            self.offers.put_back(offer)
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
            self.offers.put_back(offer)
            return [runtime.text("errors.invalid_request", {**player, "reason": "internal error"})]
        if admission is None or admission.status in ("busy", "already_waiting"):
            self.offers.put_back(offer)
            return [runtime.text(BUSY, player)]
        runtime.gates.admit(player_uuid=offer.player.uuid)
        runtime.audit.record(
            "retry.started", {"turn_id": offer.turn_id, "lane": lane.lane_id, **player}
        )
        shown = runtime.plane.redact(offer.question)
        return [runtime.text("commands.retry_started", {**player, "question": shown})]
