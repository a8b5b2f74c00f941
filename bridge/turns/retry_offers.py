"""Questions a player may ask again with ``/mineclaw retry``.

A turn dropped because its model requests failed (a provider error, a timeout: the attempts
and fallbacks were spent) leaves its question here for ``RETRY_WINDOW_S``, offered to its asker
alone. Taking an offer removes it, so one failure gives one retry however often the command is
typed; a newer failure of the same player replaces the older offer. Offers live in memory: a
bridge restart forgets them (the player is told the window, not promised it across restarts).
The clock is injectable so tests move time by hand.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from bridge.turns.ports import PlayerRef

RETRY_WINDOW_S = 1800.0
"""How long a failed question stays offered: 30 minutes."""
MAX_OFFERS = 4096
"""Offers kept at most (one per player); past it the oldest goes first."""


@dataclass(frozen=True, slots=True)
class RetryOffer:
    """``question`` as the player asked it, in ``lane_id`` (the public lane or theirs), by the
    dropped turn ``turn_id``; offered until the monotonic time ``expires``."""

    player: PlayerRef
    question: str
    lane_id: str
    turn_id: str
    expires: float


class RetryOffers:
    def __init__(
        self,
        *,
        window_s: float = RETRY_WINDOW_S,
        clock: Callable[[], float] = time.monotonic,
        max_offers: int = MAX_OFFERS,
    ) -> None:
        self._window_s = window_s
        self._clock = clock
        self._max_offers = max_offers
        self._offers: dict[str, RetryOffer] = {}

    @property
    def window_minutes(self) -> int:
        return max(1, round(self._window_s / 60))

    def offer(self, player: PlayerRef, question: str, lane_id: str, turn_id: str) -> RetryOffer:
        """Offer ``question`` to ``player`` (replacing an older offer of theirs)."""
        self._offers.pop(player.uuid, None)
        while len(self._offers) >= self._max_offers:
            del self._offers[next(iter(self._offers))]
        offer = RetryOffer(player, question, lane_id, turn_id, self._clock() + self._window_s)
        self._offers[player.uuid] = offer
        return offer

    def take(self, player_uuid: str) -> RetryOffer | None:
        """The player's offer, removed; None when there is none or it has expired."""
        offer = self._offers.pop(player_uuid, None)
        if offer is None or offer.expires <= self._clock():
            return None
        return offer

    def put_back(self, offer: RetryOffer) -> None:
        """Offer ``offer`` again until its own expiry (a retry that could not start), unless a
        newer failure has replaced it meanwhile."""
        self._offers.setdefault(offer.player.uuid, offer)
