"""Several tool calls of one model reply: all run in that round, reads side by side, calls with
side effects alone and in order, results in call order."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from bridge.providers.items import ToolCall, ToolResult
from bridge.turns.ports import TurnContext

from .conftest import Harness, make_snapshot
from .fakes import ScriptedModel, answer, tool_calls


@dataclass
class TimelineTools:
    """Reads wait at a barrier of ``readers`` parties: run one after another, they would wait
    forever (the test's bound fails them). Every start and end goes on the timeline."""

    readers: int = 2
    timeline: list[str] = field(default_factory=list)
    rounds: list[tuple[str, int]] = field(default_factory=list)
    barrier: asyncio.Barrier | None = None

    def side_effect_free(self, name: str) -> bool:
        return name == "look"

    async def run(self, call: ToolCall, context: TurnContext) -> ToolResult:
        self.rounds.append((call.call_id, context.round))
        self.timeline.append(f"start {call.call_id}")
        if call.name == "look":
            if self.barrier is None:
                self.barrier = asyncio.Barrier(self.readers)
            await self.barrier.wait()
        else:
            await asyncio.sleep(0)  # a write yields too: nothing may start meanwhile
        self.timeline.append(f"end {call.call_id}")
        return ToolResult(call_id=call.call_id, output=f"{call.name} {call.call_id}")


async def test_two_commands_of_one_reply_both_run_in_order(harness: Harness) -> None:
    tools = TimelineTools()
    model = ScriptedModel(
        [
            tool_calls(
                ("day", "run_command", '{"command":"time set day"}'),
                ("sun", "run_command", '{"command":"weather clear"}'),
            ),
            answer("Day and clear."),
        ]
    )
    outcome = await harness.run(make_snapshot(model, runner=tools))
    assert outcome.reply == "Day and clear."
    assert tools.timeline == ["start day", "end day", "start sun", "end sun"]
    results = [item for item in model.requests[1].items if isinstance(item, ToolResult)]
    assert [r.output for r in results] == ["run_command day", "run_command sun"]


async def test_reads_of_one_reply_run_side_by_side_and_keep_call_order(harness: Harness) -> None:
    tools = TimelineTools(readers=2)
    model = ScriptedModel([tool_calls(("a", "look", "{}"), ("b", "look", "{}")), answer("Seen.")])
    outcome = await harness.run(make_snapshot(model, runner=tools))
    assert outcome.reply == "Seen."
    assert tools.timeline[:2] == ["start a", "start b"]  # b started before a ended
    results = [item for item in model.requests[1].items if isinstance(item, ToolResult)]
    assert [r.call_id for r in results] == ["a", "b"]
    assert harness.audit.kinds().count("tool.result") == 2


async def test_a_command_waits_for_the_reads_before_it_and_holds_back_the_ones_after(
    harness: Harness,
) -> None:
    tools = TimelineTools(readers=2)
    model = ScriptedModel(
        [
            tool_calls(
                ("r1", "look", "{}"),
                ("r2", "look", "{}"),
                ("w", "run_command", "{}"),
                ("r3", "look", "{}"),
                ("r4", "look", "{}"),
            ),
            answer("ok"),
        ]
    )

    # A fresh barrier for the second pair of reads.
    original = tools.run

    async def run(call: ToolCall, context: TurnContext) -> ToolResult:
        if call.call_id == "r3":
            tools.barrier = asyncio.Barrier(2)
        return await original(call, context)

    tools.run = run  # type: ignore[method-assign]
    outcome = await harness.run(make_snapshot(model, runner=tools))
    assert outcome.reply == "ok"
    timeline = tools.timeline
    write_start, write_end = timeline.index("start w"), timeline.index("end w")
    assert write_end == write_start + 1
    assert {"end r1", "end r2"} <= set(timeline[:write_start])
    assert {"start r3", "start r4"} <= set(timeline[write_end:])
    results = [item for item in model.requests[1].items if isinstance(item, ToolResult)]
    assert [r.call_id for r in results] == ["r1", "r2", "w", "r3", "r4"]


async def test_each_reply_is_its_own_round(harness: Harness) -> None:
    tools = TimelineTools(readers=1)
    model = ScriptedModel(
        [
            tool_calls(("a", "run_command", "{}"), ("b", "run_command", "{}")),
            tool_calls(("c", "run_command", "{}")),
            answer("done"),
        ]
    )
    await harness.run(make_snapshot(model, runner=tools))
    assert tools.rounds == [("a", 1), ("b", 1), ("c", 2)]


async def test_a_read_that_crashes_among_others_drops_the_turn_without_hanging(
    harness: Harness,
) -> None:
    @dataclass
    class Crashing(TimelineTools):
        async def run(self, call: ToolCall, context: TurnContext) -> ToolResult:
            if call.call_id == "bad":
                raise RuntimeError("tool bug")
            await asyncio.Event().wait()  # would wait forever unless cancelled
            raise AssertionError("not reached")

    model = ScriptedModel([tool_calls(("ok", "look", "{}"), ("bad", "look", "{}"))])
    outcome = await harness.run(make_snapshot(model, runner=Crashing()))
    assert outcome.status == "dropped" and outcome.reason == "internal error"
    assert not harness.activity.busy
