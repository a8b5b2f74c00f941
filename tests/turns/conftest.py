"""A turn engine wired to scripted fakes, with helpers to build snapshots and run turns."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import pytest

from bridge.metrics import BridgeMetrics
from bridge.providers.items import ToolSpec
from bridge.store.audit_sink import MemoryAudit
from bridge.turns.activity import ServerActivity
from bridge.turns.compaction import Compactor
from bridge.turns.engine import TurnEngine, TurnOutcome, TurnRequest
from bridge.turns.ports import PlayerRef, ToolRunner, TurnLimits, TurnSnapshot
from bridge.turns.session import PublicSession
from tests.providers.provider_replay_server import ReplayServer

from .fakes import STEVE, ManualClock, MemoryArchive, RecordingOutput, ScriptedModel

LOOK = ToolSpec(name="look", description="what the player looks at")
RUN = ToolSpec(name="run_command", description="run a command")


class TickingClock(ManualClock):
    """Moves forward by `step` every time it is read, like time passing between deltas."""

    def __init__(self, step: float) -> None:
        super().__init__()
        self.step = step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


@dataclass
class Harness:
    session: PublicSession
    archive: MemoryArchive
    audit: MemoryAudit
    output: RecordingOutput
    activity: ServerActivity
    engine: TurnEngine
    compactor: Compactor
    clock: TickingClock
    sleeps: list[float] = field(default_factory=list)
    metrics: BridgeMetrics = field(default_factory=BridgeMetrics)

    async def run(
        self, snapshot: TurnSnapshot, question: str = "hello", player: PlayerRef = STEVE
    ) -> TurnOutcome:
        task = self.engine.start(TurnRequest(player, question), snapshot)
        return await asyncio.wait_for(task, timeout=10)


def make_snapshot(
    model: ScriptedModel,
    *,
    runner: ToolRunner | None = None,
    tools: tuple[ToolSpec, ...] = (LOOK, RUN),
    model_ref: str = "local/model-a",
    control_version: str = "cp-1",
    instructions: str | None = "You are Mineclaw.",
    trigger: int | None = None,
    **limits: int,
) -> TurnSnapshot:
    return TurnSnapshot(
        control_version=control_version,
        model_ref=model_ref,
        stream=model.stream,
        instructions=instructions,
        tools=tools if runner is not None else (),
        tool_runner=runner,
        limits=TurnLimits(**limits),
        compaction_trigger_tokens=trigger,
    )


@pytest.fixture
async def provider_server() -> AsyncIterator[ReplayServer]:
    """A real local HTTP server playing scripted provider replies (tests/providers)."""
    replay = ReplayServer()
    await replay.start()
    yield replay
    await replay.stop()


@pytest.fixture
def harness() -> Harness:
    sleeps: list[float] = []

    async def record_sleep(seconds: float) -> None:
        sleeps.append(seconds)
        await asyncio.sleep(0)

    counter = iter(range(1, 10_000))
    session = PublicSession(id_factory=lambda: f"s{next(counter)}")
    audit = MemoryAudit()
    activity = ServerActivity()
    clock = TickingClock(step=0.03)
    compactor = Compactor(session=session, activity=activity, audit=audit, sleep=record_sleep)
    turn_numbers = iter(range(1, 10_000))
    metrics = BridgeMetrics()
    archive = MemoryArchive()
    output = RecordingOutput()
    engine = TurnEngine(
        session=session,
        archive=archive,
        audit=audit,
        output=output,
        activity=activity,
        after_turn=[compactor.after_turn],
        monotonic=clock,
        sleep=record_sleep,
        turn_ids=lambda: f"t{next(turn_numbers)}",
        metrics=metrics,
    )
    return Harness(
        session, archive, audit, output, activity, engine, compactor, clock, sleeps, metrics
    )
