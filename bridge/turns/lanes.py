"""Lanes: the public session and one private lane per player (``/ai``): the lane of the
conversation the player has active (`bridge.conversations`).

Each lane has its own session, its own "one thing at a time" (`ServerActivity`), its own turn
engine and compactor: a private turn never waits for the public one, and the public session
never sees a private question. What the lanes share is built once by the caller and handed to
every lane: the archive, the audit log, the cap on running turns (`TurnCap`) and, outside this
module, the cooldowns.

A private lane's id is ``ai-`` and a keyed digest of its player's UUID: stable for that player
(an archived conversation can be found again after a restart) and never the UUID itself, since
the lane id is part of the session id, which reaches the provider's session header.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from bridge.turns.activity import ServerActivity
from bridge.turns.compaction import Compactor
from bridge.turns.engine import TurnEngine, TurnOutcome
from bridge.turns.ports import PUBLIC_LANE, PlayerRef
from bridge.turns.session import PublicSession, new_session_id

MAX_PRIVATE_LANES = 512
"""Private lanes kept in memory; past it the least recently used idle one is forgotten (its
turns stay in the archive)."""


PRIVATE_LANE_PREFIX = "ai-"


def private_lane_id(player_uuid: str) -> str:
    digest = hashlib.blake2b(
        player_uuid.lower().encode(), digest_size=9, person=b"mineclaw-lane"
    ).digest()
    return PRIVATE_LANE_PREFIX + base64.urlsafe_b64encode(digest).decode()


def lane_session_ids(lane_id: str) -> Callable[[], str]:
    """Session ids of a lane: the public lane keeps the plain ``s-...`` form; a private one
    puts its lane id first, so the archive tells whose conversation a session was."""
    if lane_id == PUBLIC_LANE:
        return new_session_id
    return lambda: f"{lane_id}.{new_session_id()}"


@dataclass(eq=False, slots=True)
class Lane:
    lane_id: str
    owner: PlayerRef | None
    """The player of a private lane; None for the public one."""
    session: PublicSession
    activity: ServerActivity
    engine: TurnEngine
    compactor: Compactor
    task: asyncio.Task[TurnOutcome] | None = None
    """The latest turn's task (shutdown waits for it)."""

    @property
    def private(self) -> bool:
        return self.owner is not None

    @property
    def busy(self) -> bool:
        return self.activity.busy


LaneFactory = Callable[[str, PlayerRef], Lane]
"""Builds a private lane: (lane id, its player)."""


class Lanes:
    """The public lane and the private lanes made so far. ``pinned(lane_id)``: a lane that must
    not be forgotten even when idle (someone waits in its queue)."""

    def __init__(
        self,
        public: Lane,
        factory: LaneFactory,
        *,
        pinned: Callable[[str], bool] = lambda lane_id: False,
        max_private: int = MAX_PRIVATE_LANES,
        lane_id_of: Callable[[str], str] = private_lane_id,
    ) -> None:
        """``lane_id_of(player_uuid)``: the lane of the player's active private conversation
        (`bridge.conversations`); one lane per player by default."""
        self.public = public
        self._lane_id_of = lane_id_of
        self._factory = factory
        self._pinned = pinned
        self._max_private = max_private
        self._private: OrderedDict[str, Lane] = OrderedDict()  # by player UUID, oldest use first
        self._by_id: dict[str, Lane] = {public.lane_id: public}

    def private(self, player: PlayerRef, lane_id: str | None = None) -> Lane:
        """The player's private lane (of their active conversation, or of the conversation
        ``lane_id`` names: a retry answers in the conversation that failed), made on first use.
        A lane kept for another conversation is let go while idle (the player switched, maybe
        on another server of the network); a busy one is kept until its turn ends."""
        lane_id = lane_id or self._lane_id_of(player.uuid)
        lane = self._private.get(player.uuid)
        if lane is not None and (lane.lane_id == lane_id or not self.forget_private(player.uuid)):
            self._private.move_to_end(player.uuid)
            return lane
        self._forget_idle()
        lane = self._factory(lane_id, player)
        self._private[player.uuid] = self._by_id[lane.lane_id] = lane
        return lane

    def forget_private(self, player_uuid: str) -> bool:
        """Let go of the player's private lane if it is idle (its turns stay in the archive,
        and its next use restores it from there); whether it was let go."""
        lane = self._private.get(player_uuid)
        if lane is None or lane.busy or self._pinned(lane.lane_id):
            return False
        del self._private[player_uuid]
        del self._by_id[lane.lane_id]
        return True

    def find_private(self, player_uuid: str) -> Lane | None:
        return self._private.get(player_uuid)

    def get(self, lane_id: str) -> Lane | None:
        return self._by_id.get(lane_id)

    def __iter__(self) -> Iterator[Lane]:
        yield self.public
        yield from list(self._private.values())

    @property
    def private_count(self) -> int:
        return len(self._private)

    def _forget_idle(self) -> None:
        if len(self._private) < self._max_private:
            return
        for uuid, lane in list(self._private.items()):
            if not lane.busy and not self._pinned(lane.lane_id):
                del self._private[uuid]
                del self._by_id[lane.lane_id]
                if len(self._private) < self._max_private:
                    return
