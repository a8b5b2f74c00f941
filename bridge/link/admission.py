"""Which unauthenticated connections the link keeps, and one log line per interval about the rest.

Until a connection has proven the token (its ``hello``) it is only a socket and a file
descriptor. A peer that opens them by the thousand and never speaks would, unchecked, exhaust
the bridge's descriptors and keep the real plugin out until they time out. So at most
``max_total`` of them are held, and at most ``max_per_address`` from one address.

Past a cap the bridge does not refuse the newcomer: the newcomer may be the plugin reconnecting,
from the very loopback address the flood comes from, and nothing before the ``hello`` tells the
two apart. It closes an older one instead (with a TCP reset, no log line): first one that has
been idle (not even sent its HTTP upgrade) for longer than ``IDLE_GRACE_S``, otherwise the
oldest. A connection therefore keeps its slot while ``max_per_address - 1`` later ones arrive
from its address, and a plugin needs only a few milliseconds to answer the challenge; the flood
only ever displaces itself. When the caps are over the whole total, the address holding the
most connections gives one up, so a flood from one address cannot push out another address.

This module is sans-I/O: the server tells it about connections and closes what it returns.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Generic, TypeVar

C = TypeVar("C", bound=Hashable)

IDLE_GRACE_S = 1.0
"""A connection that has not sent its upgrade request after this long is idle, not slow."""


@dataclass(slots=True)
class _Entry:
    address: str
    accepted_at: float
    upgraded: bool = False


class Admission(Generic[C]):
    """The unauthenticated connections held now, oldest first."""

    def __init__(
        self,
        *,
        max_total: int,
        max_per_address: int,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.max_total = max(1, max_total)
        self.max_per_address = max(1, min(max_per_address, self.max_total))
        self._monotonic = monotonic
        self._held: dict[C, _Entry] = {}  # insertion order is age
        self._per_address: Counter[str] = Counter()

    def __len__(self) -> int:
        return len(self._held)

    def __contains__(self, connection: object) -> bool:
        return connection in self._held

    def admit(self, connection: C, address: str) -> list[C]:
        """Hold ``connection``; returns the older connections to close now to stay in the caps."""
        self._held[connection] = _Entry(address, self._monotonic())
        self._per_address[address] += 1
        victims: list[C] = []
        while self._per_address[address] > self.max_per_address:
            victims.append(self._evict(address, spare=connection))
        while len(self._held) > self.max_total:
            busiest = max(self._per_address, key=lambda a: self._per_address[a])
            victims.append(self._evict(busiest, spare=connection))
        return victims

    def upgraded(self, connection: C) -> None:
        """The connection sent its WebSocket upgrade request: it is not idle."""
        entry = self._held.get(connection)
        if entry is not None:
            entry.upgraded = True

    def release(self, connection: C) -> None:
        """The connection authenticated or closed: it no longer counts."""
        entry = self._held.pop(connection, None)
        if entry is None:
            return
        self._per_address[entry.address] -= 1
        if not self._per_address[entry.address]:
            del self._per_address[entry.address]

    def _evict(self, address: str, *, spare: C) -> C:
        stale_before = self._monotonic() - IDLE_GRACE_S
        oldest: C | None = None
        for connection, entry in self._held.items():
            if entry.address != address or connection == spare:
                continue
            if not entry.upgraded and entry.accepted_at <= stale_before:
                oldest = connection
                break
            if oldest is None:
                oldest = connection
        # The caps are at least 1, so another connection of this address exists whenever
        # its count is over one; only a cap of 1 with no other can leave the newcomer itself.
        victim = spare if oldest is None else oldest
        self.release(victim)
        return victim


class RefusalLog:
    """Counts refusals by reason and logs one summary line per interval.

    The first refusal of each reason in an interval is logged in full (an owner with a wrong
    token must see why the plugin is refused); the others are only counted, so a flood costs a
    few lines per interval however fast it comes.
    """

    def __init__(
        self,
        logger: logging.Logger,
        *,
        interval: float,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._logger = logger
        self.interval = interval
        self._monotonic = monotonic
        self._counts: Counter[str] = Counter()
        self._since = monotonic()

    def note(self, reason: str, message: str | None = None, *args: object) -> None:
        """Count one refusal; ``message`` is logged if it is the first of its reason."""
        first = reason not in self._counts
        self._counts[reason] += 1
        if first and message is not None:
            self._logger.warning(message, *args)

    def summarise(self) -> str | None:
        """Log (and return) the summary of the interval now ending, if anything was counted."""
        now = self._monotonic()
        counts, self._counts = self._counts, Counter()
        since, self._since = self._since, now
        if not counts:
            return None
        parts = ", ".join(f"{count} {reason}" for reason, count in sorted(counts.items()))
        line = f"link: unauthenticated connections in the last {now - since:.0f} s: {parts}"
        self._logger.warning(line)
        return line
