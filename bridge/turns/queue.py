"""The wait line: wakes that arrive while their lane is busy, or while the server already runs
as many turns as it may, wait here instead of being told "busy".

One first-in-first-out line per lane, at most ``length()`` long (``concurrency.queue_length``,
read at each wake); past it the wake is refused as busy. A player waits at most once per lane.
Every entry holds the closure that starts its turn; `release` (called whenever a lane or a turn
slot frees) starts the oldest entries whose lane is free, in arrival order over all lanes, while
slots remain. Starting is synchronous, like the start of a turn from a chat message, so nothing
can claim the lane between the check and the start.

Each waiting player is told their place (1 is next) when they join and whenever it changes.
A player who leaves, or whose chat request the plugin gave up on, is taken out of the line, and
the places behind move up; nobody else's entry is lost.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Literal

from bridge.turns.activity import TurnCap
from bridge.turns.ports import PlayerRef

log = logging.getLogger(__name__)

AdmissionStatus = Literal["started", "queued", "busy", "already_waiting"]


@dataclass(frozen=True, slots=True)
class Admission:
    status: AdmissionStatus
    place: int = 0
    """For ``queued`` and ``already_waiting``: the place in the lane's line, 1 being next."""


@dataclass(eq=False, slots=True)
class Waiting:
    lane_id: str
    player: PlayerRef
    start: Callable[[], object]
    """Starts the turn now; reports its own failures to the player (the line goes on)."""
    request_id: str | None = None
    place: int = 0
    """The place the player was last told."""
    kept: bool = False
    """The plugin keeps the question (it carries an id, protocol 1.5): were the line taken
    from this bridge, the plugin sends it again to the next one."""


PlaceListener = Callable[[Waiting], None]
"""Told each entry whose place is new (joined, or moved up); ``entry.place`` is the place."""


class TurnQueue:
    def __init__(
        self,
        *,
        cap: TurnCap,
        lane_busy: Callable[[str], bool],
        length: Callable[[], int],
        on_place: PlaceListener = lambda entry: None,
    ) -> None:
        self._cap = cap
        self._lane_busy = lane_busy
        self._length = length
        self._on_place = on_place
        self._waiting: list[Waiting] = []  # arrival order, every lane

    def admit(
        self,
        lane_id: str,
        player: PlayerRef,
        start: Callable[[], object],
        *,
        request_id: str | None = None,
        kept: bool = False,
    ) -> Admission:
        """Start now when the lane is free, nobody waits in it and a slot is left; else join
        its line when there is room. ``start``'s exceptions reach the caller when it runs now."""
        if self._waiting:
            self.release()  # a reload may have raised the cap since the last release
        ahead = [entry for entry in self._waiting if entry.lane_id == lane_id]
        if not ahead and not self._lane_busy(lane_id) and not self._cap.full:
            start()
            return Admission("started")
        for place, entry in enumerate(ahead, 1):
            if entry.player.uuid == player.uuid:
                return Admission("already_waiting", place)
        if len(ahead) >= self._length():
            return Admission("busy")
        entry = Waiting(lane_id, player, start, request_id, place=len(ahead) + 1, kept=kept)
        self._waiting.append(entry)
        self._tell(entry)
        return Admission("queued", entry.place)

    def waiting(self, lane_id: str | None = None) -> list[Waiting]:
        """The entries of one lane (or of all), oldest first."""
        return [e for e in self._waiting if lane_id is None or e.lane_id == lane_id]

    def has_waiting(self, lane_id: str) -> bool:
        return any(entry.lane_id == lane_id for entry in self._waiting)

    def release(self) -> None:
        """Start the oldest entries whose lane is free, while turn slots are left."""
        started: set[str] = set()
        index = 0
        while index < len(self._waiting) and not self._cap.full:
            entry = self._waiting[index]
            if self._lane_busy(entry.lane_id):
                index += 1
                continue
            del self._waiting[index]
            started.add(entry.lane_id)
            try:
                entry.start()
            except Exception:  # the start reports to its player; the line must go on
                log.exception("a queued turn of %s could not start", entry.player.name)
        self._renumber(started)

    def drop_player(self, player_uuid: str) -> int:
        """Take a player who left out of every line; returns how many entries went."""
        return self._drop(lambda entry: entry.player.uuid == player_uuid)

    def drop_request(self, request_id: str) -> bool:
        """Take out the entry a chat request made (the plugin gave up on its verdict)."""
        return self._drop(lambda entry: entry.request_id == request_id) > 0

    def clear(self) -> int:
        """Empty every line (shutdown): nothing may start any more."""
        gone, self._waiting = len(self._waiting), []
        return gone

    def take_all(self) -> list[Waiting]:
        """Empty every line and return what waited there, oldest first (the bridge gives the
        server up: nothing may start any more, and each asker is owed an answer)."""
        taken, self._waiting = self._waiting, []
        return taken

    def drop_lane(self, lane_id: str) -> int:
        return self._drop(lambda entry: entry.lane_id == lane_id)

    def _drop(self, matches: Callable[[Waiting], bool]) -> int:
        gone = [entry for entry in self._waiting if matches(entry)]
        if gone:
            self._waiting = [entry for entry in self._waiting if not matches(entry)]
            self._renumber({entry.lane_id for entry in gone})
        return len(gone)

    def _renumber(self, lanes: Iterable[str]) -> None:
        for lane_id in lanes:
            for place, entry in enumerate(self.waiting(lane_id), 1):
                if entry.place != place:
                    entry.place = place
                    self._tell(entry)

    def _tell(self, entry: Waiting) -> None:
        try:
            self._on_place(entry)
        except Exception:  # a notice must never cost anyone their place
            log.exception("place notice for %s failed", entry.player.name)
