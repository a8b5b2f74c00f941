"""Automatic recall through the engine's port: the recalled block goes into every request of
the turn, after the replayed history and before the question, and never into the session or
the archive, so a later turn of another player cannot carry it."""

from __future__ import annotations

import dataclasses

from bridge.providers.items import AssistantText, PlayerMessage
from bridge.turns.ports import TurnContext

from .conftest import Harness, make_snapshot
from .fakes import ALEX, STEVE, ScriptedModel, answer

BLOCK = "[Memories]\n- (Steve's own note) my base is at 120 64 -300"


class RecordingRecall:
    def __init__(self, block: str | None = BLOCK, *, fails: bool = False) -> None:
        self.asked: list[tuple[str, str, str]] = []
        self.block = block
        self.fails = fails

    async def recall(self, context: TurnContext, question: str) -> str | None:
        self.asked.append((context.player.uuid, context.lane_id, question))
        if self.fails:
            raise RuntimeError("the memory store broke")
        return self.block if context.player.uuid == STEVE.uuid else None


async def test_the_recalled_block_is_sent_but_never_kept(harness: Harness) -> None:
    model = ScriptedModel([answer("noted"), answer("hello Alex")])
    recall = RecordingRecall()
    snapshot = dataclasses.replace(make_snapshot(model), recall=recall)

    await harness.run(snapshot, "where is my base?", STEVE)
    await harness.run(snapshot, "hi", ALEX)

    steve_request, alex_request = model.requests
    assert steve_request.items == (
        PlayerMessage(player=None, text=BLOCK),
        PlayerMessage(player="Steve", text="where is my base?"),
    )
    assert recall.asked == [
        (STEVE.uuid, "public", "where is my base?"),
        (ALEX.uuid, "public", "hi"),
    ]
    # Alex's request replays Steve's turn as the session keeps it: without the block.
    assert alex_request.items == (
        PlayerMessage(player="Steve", text="where is my base?"),
        AssistantText(text="noted"),
        PlayerMessage(player="Alex", text="hi"),
    )
    assert "120 64 -300" not in alex_request.model_dump_json()
    for turn in harness.session.state.turns:
        assert all("120 64 -300" not in repr(item) for item in turn.items)
    for archived in harness.archive.turns:
        assert "120 64 -300" not in repr(archived.items)


async def test_a_failing_recall_costs_the_memories_not_the_turn(harness: Harness) -> None:
    model = ScriptedModel([answer("fine")])
    snapshot = dataclasses.replace(make_snapshot(model), recall=RecordingRecall(fails=True))
    outcome = await harness.run(snapshot, "where is my base?", STEVE)
    assert outcome.status == "completed"
    assert model.requests[0].items == (PlayerMessage(player="Steve", text="where is my base?"),)
