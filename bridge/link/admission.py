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
from typing import Generic, TypeVar

C = TypeVar("C", bound=Hashable)

IDLE_GRACE_S = 1.0
"""A connection that has not sent its upgrade request after this long is idle, not slow."""


class _Address(Generic[C]):
    """One address's connections, each oldest first: those that have sent nothing yet, and
    those that sent their upgrade (ordered by when they did)."""

    __slots__ = ("idle", "upgraded")

    def __init__(self) -> None:
        self.idle: dict[C, float] = {}
        self.upgraded: dict[C, float] = {}

    def __len__(self) -> int:
        return len(self.idle) + len(self.upgraded)


def _first(held: dict[C, float], spare: C) -> C | None:
    # Insertion order is age; the spare (the newcomer) is the newest, so this stops at once.
    return next((connection for connection in held if connection != spare), None)


class Admission(Generic[C]):
    """The unauthenticated connections held now. Every operation is O(1) in the caps (the
    total cap looks for the busiest address, O(addresses)), since a flood calls it thousands of
    times a second."""

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
        self._where: dict[C, str] = {}
        self._addresses: dict[str, _Address[C]] = {}

    def __len__(self) -> int:
        return len(self._where)

    def __contains__(self, connection: object) -> bool:
        return connection in self._where

    def admit(self, connection: C, address: str) -> list[C]:
        """Hold ``connection``; returns the older connections to close now to stay in the caps."""
        self._where[connection] = address
        held = self._addresses.setdefault(address, _Address())
        held.idle[connection] = self._monotonic()
        victims: list[C] = []
        while len(held) > self.max_per_address:
            victims.append(self._evict(address, spare=connection))
        while len(self._where) > self.max_total:
            busiest = max(self._addresses, key=lambda a: len(self._addresses[a]))
            victims.append(self._evict(busiest, spare=connection))
        return victims

    def upgraded(self, connection: C) -> None:
        """The connection sent its WebSocket upgrade request: it is not idle."""
        address = self._where.get(connection)
        if address is not None:
            held = self._addresses[address]
            accepted_at = held.idle.pop(connection, None)
            if accepted_at is not None:
                held.upgraded[connection] = accepted_at

    def release(self, connection: C) -> None:
        """The connection authenticated or closed: it no longer counts."""
        address = self._where.pop(connection, None)
        if address is None:
            return
        held = self._addresses[address]
        held.idle.pop(connection, None)
        held.upgraded.pop(connection, None)
        if not held:
            del self._addresses[address]

    def _evict(self, address: str, *, spare: C) -> C:
        held = self._addresses[address]
        idle, spoke = _first(held.idle, spare), _first(held.upgraded, spare)
        if idle is not None and held.idle[idle] <= self._monotonic() - IDLE_GRACE_S:
            victim: C | None = idle  # silent past the grace: not a plugin on its way in
        elif idle is None or (spoke is not None and held.upgraded[spoke] <= held.idle[idle]):
            victim = spoke
        else:
            victim = idle
        # The caps are at least 1, so another connection of this address exists whenever
        # its count is over one; only a cap of 1 with no other can leave the newcomer itself.
        chosen = spare if victim is None else victim
        self.release(chosen)
        return chosen


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
