"""A lane's session rebuilt after a restart, through its last compaction, from a real archive
and sessions database: the same state the live session had, never a half-done one."""

from __future__ import annotations

import pytest

from bridge.errors import StoreError
from bridge.providers.items import AssistantText, ToolCall, ToolResult
from bridge.store.audit_sink import MemoryAudit
from bridge.store.sessions import CompactionRecord, SessionRecords
from bridge.store.target import StorageTarget
from bridge.turns.activity import ServerActivity
from bridge.turns.compaction import Compactor
from bridge.turns.engine import TurnEngine, TurnRequest
from bridge.turns.ports import PUBLIC_LANE
from bridge.turns.restore import restored_session

from .conftest import make_snapshot
from .fakes import ALEX, STEVE, RecordingOutput, ScriptedModel, answer, no_sleep, tool_calls


class Bridge:
    """One run of a bridge's turn machinery on the folder's databases."""

    def __init__(self, target: StorageTarget, lane: str = PUBLIC_LANE) -> None:
        self.archive = target.open_archive()
        self.records = SessionRecords(self.archive.database)
        self.session = restored_session(self.records, self.archive, lane)
        audit, activity = MemoryAudit(), ServerActivity()
        self.compactor = Compactor(
            session=self.session,
            activity=activity,
            audit=audit,
            sleep=no_sleep,
            records=self.records,
        )
        self.engine = TurnEngine(
            session=self.session,
            archive=self.archive,
            audit=audit,
            output=RecordingOutput(),
            activity=activity,
            sleep=no_sleep,
        )

    def close(self) -> None:
        self.archive.close()


async def turn(bridge: Bridge, model: ScriptedModel, question: str, player=STEVE) -> None:  # type: ignore[no-untyped-def]
    outcome = await bridge.engine.start(TurnRequest(player, question), make_snapshot(model))
    assert outcome.status == "completed"


async def test_a_restart_rebuilds_the_session_through_its_last_compaction(
    chosen_target: StorageTarget,
) -> None:
    first = Bridge(chosen_target)
    model = ScriptedModel(
        [answer(f"answer {n}") for n in range(4)] + [answer("they talked about stone")]
    )
    for n in range(4):
        await turn(first, model, f"question {n}", STEVE if n % 2 else ALEX)
    assert await first.compactor.request(make_snapshot(model)) == "compacted"
    live = first.session.state
    assert live.summary == "they talked about stone" and len(live.turns) == 2
    first.close()  # as after a kill: nothing more is written

    second = Bridge(chosen_target)
    restored = second.session.state
    assert restored.session_id == live.session_id
    assert restored.summary == live.summary
    assert [(t.turn_id, t.player, t.items) for t in restored.turns] == [
        (t.turn_id, t.player, t.items) for t in live.turns
    ]
    # The next request carries the summary and the kept turns.
    assert second.session.projection(240) == first.session.projection(240)
    second.close()


async def test_turns_after_the_compaction_and_tool_items_come_back_whole(
    chosen_target: StorageTarget,
) -> None:
    first = Bridge(chosen_target)
    model = ScriptedModel([tool_calls(("c1", "look", "{}")), answer("it is stone")])

    class Tools:
        def side_effect_free(self, name: str) -> bool:
            return True

        async def run(self, call, context):  # type: ignore[no-untyped-def]
            return ToolResult(call_id=call.call_id, output="stone")

    snapshot = make_snapshot(model, runner=Tools())
    outcome = await first.engine.start(TurnRequest(STEVE, "what is this"), snapshot)
    assert outcome.status == "completed"
    first.close()
    second = Bridge(chosen_target)
    [restored] = second.session.state.turns
    kinds = [type(item).__name__ for item in restored.items]
    assert kinds == ["PlayerMessage", "ToolCall", "ToolResult", "AssistantText"]
    assert isinstance(restored.items[1], ToolCall) and isinstance(restored.items[3], AssistantText)
    second.close()


async def test_a_clear_survives_a_restart_even_before_any_turn(
    chosen_target: StorageTarget,
) -> None:
    first = Bridge(chosen_target)
    await turn(first, ScriptedModel([answer("old")]), "old topic")
    new_id = first.session.clear()
    first.close()
    second = Bridge(chosen_target)
    assert second.session.session_id == new_id and second.session.state.turns == ()
    second.close()


async def test_lanes_are_restored_by_their_own_id(chosen_target: StorageTarget) -> None:
    public = Bridge(chosen_target)
    await turn(public, ScriptedModel([answer("public answer")]), "public question")
    public.close()
    private = Bridge(chosen_target, lane="ai-steve")
    assert private.session.state.turns == ()
    await turn(private, ScriptedModel([answer("private answer")]), "private question")
    private.close()
    again = Bridge(chosen_target, lane="ai-steve")
    [only] = again.session.state.turns
    assert "private question" in str(only.items)
    again.close()


async def test_a_compaction_that_cannot_be_recorded_is_not_applied(
    chosen_target: StorageTarget,
) -> None:
    bridge = Bridge(chosen_target)
    model = ScriptedModel([answer(f"a{n}") for n in range(3)] + [answer("summary")])
    for n in range(3):
        await turn(bridge, model, f"q{n}")
    before = bridge.session.state

    def broken(record: CompactionRecord, at: object) -> None:
        raise StoreError("disk full")

    bridge.records.compacted = broken  # type: ignore[method-assign]
    assert await bridge.compactor.request(make_snapshot(model)) == "failed"
    assert bridge.session.state is before
    bridge.close()


def test_a_clear_that_cannot_be_recorded_keeps_the_old_session(
    chosen_target: StorageTarget,
) -> None:
    bridge = Bridge(chosen_target)
    old = bridge.session.session_id

    def broken(lane_id: str, session_id: str, at: object) -> None:
        raise StoreError("disk full")

    bridge.records.session_started = broken  # type: ignore[method-assign]
    with pytest.raises(StoreError):
        bridge.session.clear()
    assert bridge.session.session_id == old
    bridge.close()
