"""Lanes: one engine, session and compactor each, side by side under one cap."""

from __future__ import annotations

import asyncio

import pytest

from bridge.providers.items import ToolCall, ToolResult
from bridge.store.audit_sink import MemoryAudit
from bridge.turns.activity import BusyError, ServerActivity, TurnCap
from bridge.turns.compaction import Compactor
from bridge.turns.engine import TurnEngine, TurnRequest
from bridge.turns.lanes import Lane, Lanes, lane_session_ids, private_lane_id
from bridge.turns.ports import PUBLIC_LANE, PlayerRef, TurnContext
from bridge.turns.session import PublicSession

from .conftest import make_snapshot
from .fakes import (
    ALEX,
    STEVE,
    MemoryArchive,
    Pause,
    RecordingOutput,
    ScriptedModel,
    answer,
    tool_calls,
)


class Shared:
    def __init__(self, limit: int = 5) -> None:
        self.archive = MemoryArchive()
        self.audit = MemoryAudit()
        self.output = RecordingOutput()
        self.cap = TurnCap(lambda: limit)
        self.built: list[str] = []

    def lane(self, lane_id: str, owner: PlayerRef | None) -> Lane:
        self.built.append(lane_id)
        session = PublicSession(id_factory=lane_session_ids(lane_id))
        activity = ServerActivity()
        engine = TurnEngine(
            session=session,
            archive=self.archive,
            audit=self.audit,
            output=self.output,
            activity=activity,
            lane_id=lane_id,
            cap=self.cap,
        )
        compactor = Compactor(session=session, activity=activity, audit=self.audit)
        return Lane(lane_id, owner, session, activity, engine, compactor)

    def lanes(self, **kwargs: object) -> Lanes:
        return Lanes(
            self.lane(PUBLIC_LANE, None),
            lambda lane_id, owner: self.lane(lane_id, owner),
            **kwargs,  # type: ignore[arg-type]
        )


def test_a_private_lane_id_is_stable_per_player_and_never_holds_the_uuid() -> None:
    lane = private_lane_id(STEVE.uuid)
    assert lane == private_lane_id(STEVE.uuid.upper())
    assert lane != private_lane_id(ALEX.uuid)
    assert lane.startswith("ai-") and STEVE.uuid not in lane
    assert STEVE.uuid.replace("-", "") not in lane
    assert lane_session_ids(lane)().startswith(lane + ".s-")
    assert lane_session_ids(PUBLIC_LANE)().startswith("s-")


async def test_a_private_and_the_public_lane_run_at_once_each_in_its_own_session() -> None:
    shared = Shared()
    lanes = shared.lanes()
    private = lanes.private(STEVE)
    assert lanes.private(STEVE) is private and lanes.find_private(STEVE.uuid) is private
    assert lanes.get(private.lane_id) is private and lanes.get(PUBLIC_LANE) is lanes.public
    hold = Pause()
    public_model = ScriptedModel([[hold, *answer("public answer")]])
    public_task = lanes.public.engine.start(
        TurnRequest(ALEX, "public question"), make_snapshot(public_model)
    )
    await asyncio.wait_for(hold.reached.wait(), 10)
    assert lanes.public.engine.asker == ALEX and lanes.public.busy
    private_model = ScriptedModel([answer("private answer")])
    private_task = private.engine.start(
        TurnRequest(STEVE, "private question"), make_snapshot(private_model)
    )
    assert shared.cap.running == 2
    assert (await asyncio.wait_for(private_task, 10)).reply == "private answer"
    hold.release.set()
    assert (await asyncio.wait_for(public_task, 10)).reply == "public answer"
    assert shared.cap.running == 0 and lanes.public.engine.asker is None

    # Neither conversation saw the other's question.
    assert [i.text for i in private_model.requests[0].items] == ["private question"]  # type: ignore[union-attr]
    assert len(lanes.public.session.state.turns) == 1
    assert len(private.session.state.turns) == 1
    archived = {turn.player: turn.session_id for turn in shared.archive.turns}
    assert archived["Steve"].startswith(private.lane_id + ".")
    assert archived["Alex"] == lanes.public.session.session_id
    starts = {f["player"]: f["lane"] for kind, f in shared.audit.events if kind == "turn.start"}
    assert starts == {"Alex": PUBLIC_LANE, "Steve": private.lane_id}


async def test_the_cap_refuses_a_turn_and_frees_the_lane_it_had_claimed() -> None:
    shared = Shared(limit=1)
    lanes = shared.lanes()
    hold = Pause()
    task = lanes.public.engine.start(
        TurnRequest(ALEX, "a"), make_snapshot(ScriptedModel([[hold, *answer("ok")]]))
    )
    private = lanes.private(STEVE)
    with pytest.raises(BusyError):
        private.engine.start(TurnRequest(STEVE, "b"), make_snapshot(ScriptedModel([])))
    assert not private.busy  # refused by the cap: the lane is not held
    hold.release.set()
    await asyncio.wait_for(task, 10)
    done = private.engine.start(
        TurnRequest(STEVE, "b"), make_snapshot(ScriptedModel([answer("now")]))
    )
    assert (await asyncio.wait_for(done, 10)).reply == "now"


async def test_the_turn_context_names_the_lane_and_the_player() -> None:
    seen: list[TurnContext] = []

    class Tools:
        async def run(self, call: ToolCall, context: TurnContext) -> ToolResult:
            seen.append(context)
            return ToolResult(call_id=call.call_id, output="ok")

        def side_effect_free(self, name: str) -> bool:
            return False

    shared = Shared()
    private = shared.lanes().private(STEVE)
    model = ScriptedModel([tool_calls(("c1", "look", "{}")), answer("done")])
    snapshot = make_snapshot(model, runner=Tools())
    await asyncio.wait_for(private.engine.start(TurnRequest(STEVE, "x"), snapshot), 10)
    assert [(c.lane_id, c.player.uuid) for c in seen] == [(private.lane_id, STEVE.uuid)]


def test_idle_private_lanes_past_the_bound_are_forgotten_oldest_first_unless_pinned() -> None:
    shared = Shared()
    players = [
        PlayerRef(uuid=f"{n:08d}-0000-0000-0000-000000000000", name=f"P{n}") for n in range(4)
    ]
    pinned = {private_lane_id(players[0].uuid)}
    lanes = shared.lanes(pinned=lambda lane_id: lane_id in pinned, max_private=2)
    lanes.private(players[0])
    lanes.private(players[1])
    lanes.private(players[2])  # P0 is pinned (someone waits in it): P1 goes
    assert lanes.find_private(players[0].uuid) is not None
    assert lanes.find_private(players[1].uuid) is None
    assert lanes.private_count == 2
    assert [lane.lane_id for lane in lanes][0] == PUBLIC_LANE


def test_a_named_conversation_gets_its_own_lane_and_the_active_one_comes_back() -> None:
    # A retry answers in the conversation that failed, not the one active now.
    shared = Shared()
    active = {STEVE.uuid: "ai-steve.2"}
    lanes = shared.lanes(lane_id_of=lambda uuid: active[uuid])
    assert lanes.private(STEVE).lane_id == "ai-steve.2"
    failed = lanes.private(STEVE, "ai-steve.1")
    assert failed.lane_id == "ai-steve.1" and lanes.get("ai-steve.1") is failed
    assert lanes.private(STEVE).lane_id == "ai-steve.2"
