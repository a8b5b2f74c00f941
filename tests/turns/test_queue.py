"""The wait line: order, places, bound, drops, and the cap on running turns."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from bridge.errors import TurnError
from bridge.turns.activity import BusyError, TurnCap
from bridge.turns.ports import PlayerRef
from bridge.turns.queue import TurnQueue, Waiting


def player(n: int) -> PlayerRef:
    return PlayerRef(uuid=f"00000000-0000-0000-0000-{n:012d}", name=f"P{n}")


@dataclass
class World:
    """Lanes that are busy while a turn runs in them; turns end by hand."""

    limit: int = 5
    length: int = 3
    busy: set[str] = field(default_factory=set)
    started: list[tuple[str, str]] = field(default_factory=list)
    told: list[tuple[str, int]] = field(default_factory=list)
    fail_for: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.cap = TurnCap(lambda: self.limit)
        self.queue = TurnQueue(
            cap=self.cap,
            lane_busy=lambda lane: lane in self.busy,
            length=lambda: self.length,
            on_place=self._told,
        )

    def _told(self, entry: Waiting) -> None:
        self.told.append((entry.player.name, entry.place))

    def wake(self, lane: str, who: PlayerRef, request_id: str | None = None) -> str:
        def start() -> None:
            if who.name in self.fail_for:
                raise TurnError("no model")
            self.cap.claim()
            self.busy.add(lane)
            self.started.append((lane, who.name))

        admission = self.queue.admit(lane, who, start, request_id=request_id)
        return f"{admission.status}:{admission.place}" if admission.place else admission.status

    def finish(self, lane: str) -> None:
        self.busy.discard(lane)
        self.cap.release()
        self.queue.release()


def test_a_free_lane_starts_at_once_and_a_busy_one_queues_in_order() -> None:
    w = World()
    assert w.wake("public", player(1)) == "started"
    assert [w.wake("public", player(n)) for n in (2, 3, 4)] == ["queued:1", "queued:2", "queued:3"]
    assert w.told == [("P2", 1), ("P3", 2), ("P4", 3)]
    # Past the line: busy, as before the queue existed, and nobody's place changes.
    assert w.wake("public", player(5)) == "busy"
    assert len(w.told) == 3

    w.told.clear()
    w.finish("public")
    assert w.started[-1] == ("public", "P2")
    assert w.told == [("P3", 1), ("P4", 2)]  # each waiting player hears the new place
    w.finish("public")
    w.finish("public")
    assert [name for _, name in w.started] == ["P1", "P2", "P3", "P4"]
    assert w.queue.waiting() == []


def test_a_player_waits_once_per_lane() -> None:
    w = World()
    w.wake("public", player(1))
    assert w.wake("public", player(2)) == "queued:1"
    assert w.wake("public", player(2)) == "already_waiting:1"
    assert len(w.queue.waiting("public")) == 1


def test_queue_length_zero_is_busy_at_once_and_is_read_at_each_wake() -> None:
    w = World(length=0)
    w.wake("public", player(1))
    assert w.wake("public", player(2)) == "busy"
    w.length = 1  # a reload
    assert w.wake("public", player(2)) == "queued:1"


def test_a_player_who_leaves_or_whose_request_expired_is_dropped_and_the_rest_move_up() -> None:
    w = World()
    w.wake("public", player(1))
    for n in (2, 3, 4):
        w.wake("public", player(n), request_id=f"r{n}")
    w.told.clear()
    assert w.queue.drop_player(player(2).uuid) == 1
    assert w.told == [("P3", 1), ("P4", 2)]
    assert w.queue.drop_request("r4") is True
    assert w.queue.drop_request("r4") is False
    assert w.queue.drop_player(player(9).uuid) == 0
    w.finish("public")
    assert [name for _, name in w.started] == ["P1", "P3"]
    w.finish("public")
    assert w.queue.waiting() == []


def test_lanes_run_side_by_side_under_the_cap_and_wait_for_a_slot_in_arrival_order() -> None:
    w = World(limit=2)
    assert w.wake("public", player(1)) == "started"
    assert w.wake("ai-a", player(2)) == "started"
    # The cap is reached: a free lane's wake waits too, in its own line.
    assert w.wake("ai-b", player(3)) == "queued:1"
    assert w.wake("ai-c", player(4)) == "queued:1"
    assert w.wake("public", player(5)) == "queued:1"
    w.finish("ai-a")  # one slot: the oldest waiting wake whose lane is free
    assert w.started[-1] == ("ai-b", "P3")
    w.finish("public")
    assert w.started[-1] == ("ai-c", "P4")
    w.finish("ai-b")
    assert w.started[-1] == ("public", "P5")
    assert w.cap.running == 2


def test_a_busy_lane_does_not_block_the_entries_of_other_lanes_behind_it() -> None:
    w = World(limit=3)
    w.wake("public", player(1))
    w.wake("ai-a", player(2))
    w.wake("public", player(3))  # waits for the public lane
    w.busy.add("ai-b")  # ai-b is compacting
    w.wake("ai-b", player(4))
    w.busy.discard("ai-b")
    w.queue.release()
    assert w.started[-1] == ("ai-b", "P4")
    assert [e.player.name for e in w.queue.waiting()] == ["P3"]


def test_a_start_that_fails_does_not_stop_the_line() -> None:
    w = World()
    w.wake("public", player(1))
    w.wake("public", player(2))
    w.wake("public", player(3))
    w.fail_for.add("P2")
    w.finish("public")
    assert w.started[-1] == ("public", "P3")


def test_a_raised_cap_is_seen_by_the_next_wake() -> None:
    w = World(limit=1)
    w.wake("public", player(1))
    assert w.wake("ai-a", player(2)) == "queued:1"
    w.limit = 2  # a reload raised it; no turn ended
    # The wake that waited longer takes the new slot; the newcomer waits for the next.
    assert w.wake("ai-b", player(3)) == "queued:1"
    assert w.started[-1] == ("ai-a", "P2")


def test_a_failing_place_notice_costs_nobody_their_place() -> None:
    cap = TurnCap(lambda: 1)
    cap.claim()

    def broken(entry: Waiting) -> None:
        raise RuntimeError("link glue bug")

    queue = TurnQueue(cap=cap, lane_busy=lambda lane: True, length=lambda: 3, on_place=broken)
    assert queue.admit("public", player(1), lambda: None).status == "queued"
    assert len(queue.waiting()) == 1


def test_turn_cap_counts_claims_and_refuses_past_its_limit() -> None:
    cap = TurnCap(lambda: 2)
    cap.claim()
    cap.claim()
    assert cap.full and cap.running == 2
    with pytest.raises(BusyError):
        cap.claim()
    cap.release()
    cap.release()
    with pytest.raises(TurnError):
        cap.release()
