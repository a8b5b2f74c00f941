"""One thing at a time per lane, and a cap on the turns running at once over every lane.

A lane (the public session, or one player's private conversation) runs a turn or a compaction,
never both: `ServerActivity` is that lane's state (the name is from when the server had a single
lane). The lane's engine holds it for a turn, its compactor for a compaction. `TurnCap` counts
the turns of all lanes together against ``concurrency.max_concurrent_turns``; compactions are
not counted (they are rare and short, and a cap that a compaction could fill would hold a
finished turn's lane).

Both are claimed synchronously (no await between check and claim), so two chat messages
handled back to back on the event loop cannot both start a turn past the limits.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from bridge.errors import TurnError

ActivityKind = Literal["turn", "compaction"]


class BusyError(TurnError):
    """A turn or compaction was started while another one held the lane, or past the cap."""


class ServerActivity:
    """What one lane is doing now."""

    def __init__(self) -> None:
        self._current: ActivityKind | None = None

    @property
    def current(self) -> ActivityKind | None:
        return self._current

    @property
    def busy(self) -> bool:
        return self._current is not None

    def claim(self, kind: ActivityKind) -> None:
        if self._current is not None:
            raise BusyError(f"cannot start a {kind}: a {self._current} is running")
        self._current = kind

    def release(self, kind: ActivityKind) -> None:
        if self._current != kind:
            raise TurnError(f"release of a {kind} that is not running (current: {self._current})")
        self._current = None


LaneActivity = ServerActivity


class TurnCap:
    """Turns running at once over every lane. ``limit`` is read at every claim, so a reload
    that lowers it lets running turns finish and holds new ones until they fit."""

    def __init__(self, limit: Callable[[], int]) -> None:
        self._limit = limit
        self._running = 0

    @property
    def running(self) -> int:
        return self._running

    @property
    def full(self) -> bool:
        return self._running >= self._limit()

    def claim(self) -> None:
        if self.full:
            raise BusyError(f"{self._running} turns are running, the most allowed at once")
        self._running += 1

    def release(self) -> None:
        if self._running <= 0:
            raise TurnError("release of a turn slot that was not claimed")
        self._running -= 1
