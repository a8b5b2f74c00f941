"""Every request a provider served is billed, whatever happened after: stopped by the player,
failed after its answer began to stream (retried or not), a compaction; each under its purpose,
estimated and marked so where the provider reported nothing. Against a scripted model and a
real usage ledger."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from bridge.app.serving.budget_binding import PlayerBudget
from bridge.control.budgets_config import BudgetsConfig
from bridge.metrics import BridgeMetrics
from bridge.policy.budgets import Budgets
from bridge.providers.events import Completed, Failed, TextDelta, Usage
from bridge.providers.items import AssistantText
from bridge.store.target import StorageTarget
from bridge.store.usage import SERVER, Periods, UsageLedger
from bridge.turns.compaction import Compactor
from bridge.turns.engine import TurnRequest
from bridge.turns.ports import PlayerRef

from .conftest import Harness, make_snapshot
from .fakes import STEVE, Pause, ScriptedModel, answer

DAY = Periods(day="2026-12-03", month="2026-12")
NOON = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)
BROKEN = Failed(reason="connection reset", retryable=True, kind="broken")


@pytest.fixture
def ledger(chosen_target: StorageTarget) -> Iterator[UsageLedger]:
    with chosen_target.open_usage() as opened:
        yield opened


def bound(ledger: UsageLedger, granted: frozenset[str] | None = frozenset()) -> PlayerBudget:
    config = BudgetsConfig.model_validate({"enabled": True, "guest": {"day_tokens": 10**9}})
    return PlayerBudget(Budgets(ledger, clock=lambda: NOON), granted, config)


def purposes(ledger: UsageLedger, holder: str = STEVE.uuid) -> dict[str, tuple[int, int]]:
    return {
        purpose: (used.day.tokens, used.day.estimated)
        for purpose, used in ledger.by_purpose(holder, DAY).items()
    }


def metered(harness: Harness) -> set[str]:
    """The purposes the engine's metrics counted tokens under."""
    return {
        sample.labels["purpose"]
        for family in harness.metrics.tokens.collect()
        for sample in family.samples
        if sample.name.endswith("_total") and sample.value > 0
    }


async def test_a_stopped_turn_is_billed_to_the_asker_and_the_server(
    harness: Harness, ledger: UsageLedger
) -> None:
    pause = Pause()
    model = ScriptedModel([[TextDelta("a long story about " * 10), pause, *answer("never")]])
    snapshot = dataclasses.replace(make_snapshot(model), budget=bound(ledger))
    task = harness.engine.start(TurnRequest(STEVE, "tell me a story"), snapshot)
    await asyncio.wait_for(pause.reached.wait(), timeout=10)
    assert harness.engine.stop()
    assert (await asyncio.wait_for(task, timeout=10)).status == "stopped"
    # The metrics say the same as the ledger, under the same purpose.
    assert metered(harness) == {"turn.stopped"}
    billed = purposes(ledger)
    assert set(billed) == {"turn.stopped"}
    tokens, estimated = billed["turn.stopped"]
    assert tokens == estimated > 190 // 4  # the prompt and what streamed, estimated
    assert ledger.usage(SERVER, DAY).day.tokens == tokens


async def test_a_turn_stopped_after_its_answer_came_is_billed_what_the_provider_reported(
    harness: Harness, ledger: UsageLedger
) -> None:
    """The provider's answer and its usage report are in; the turn is stopped while its last
    action-bar frame goes out (in a network: its bridge lost the server): the provider served
    it all, so it is billed as reported, not as an estimate nor as nothing."""
    reported = Completed(
        items=(AssistantText(text="The answer is 42."),),
        usage=Usage(input_tokens=300, output_tokens=20),
    )
    model = ScriptedModel([[TextDelta("The answer is 42."), reported]])
    snapshot = dataclasses.replace(make_snapshot(model), budget=bound(ledger))
    flushing, frames = Pause(), []
    shown = harness.output.action_bar

    async def last_frame_held(player: PlayerRef, text: str) -> None:
        frames.append(text)
        if len(frames) == 2:  # the frame the throttle held back, sent once the answer came
            flushing.reached.set()
            await flushing.release.wait()
        await shown(player, text)

    harness.output.action_bar = last_frame_held  # type: ignore[method-assign]
    task = harness.engine.start(TurnRequest(STEVE, "what is it?"), snapshot)
    await asyncio.wait_for(flushing.reached.wait(), timeout=10)
    assert harness.engine.stop()
    assert (await asyncio.wait_for(task, timeout=10)).status == "stopped"
    assert purposes(ledger) == {"turn.stopped": (320, 0)}


async def test_attempts_that_broke_after_streaming_are_billed_and_the_answer_too(
    harness: Harness, ledger: UsageLedger
) -> None:
    # Two attempts stream half an answer and break; the third answers with a usage report.
    broken = [TextDelta("The answer is forty"), BROKEN]
    reported = Completed(
        items=(AssistantText(text="The answer is 42."),),
        usage=Usage(input_tokens=300, output_tokens=20),
    )
    model = ScriptedModel([broken, broken, [reported]])
    snapshot = dataclasses.replace(make_snapshot(model), budget=bound(ledger))
    assert (await harness.run(snapshot, "what is it?")).status == "completed"
    billed = purposes(ledger)
    assert billed["turn"] == (320, 0)
    failed_tokens, failed_estimated = billed["turn.failed"]
    assert failed_tokens == failed_estimated > 0  # two served attempts, estimated
    end = harness.audit.events[-1][1]
    assert end["tokens"] == 320 + failed_tokens and end["estimated_tokens"] == failed_tokens
    # By model and tier too (the console's plots and cost): the answer as reported, and the
    # two broken attempts estimated.
    (row,) = ledger.models_since(DAY.day)
    assert (row.model, row.tier) == ("local/model-a", "guest")
    assert row.output_tokens > 20 and row.input_tokens > 300
    assert row.input_tokens + row.output_tokens == 320 + failed_tokens
    assert row.estimated == failed_tokens


async def test_a_turn_that_fails_after_streaming_is_billed_but_one_refused_up_front_is_not(
    harness: Harness, ledger: UsageLedger
) -> None:
    model = ScriptedModel([[TextDelta("partial answer"), BROKEN]] * 3)
    snapshot = dataclasses.replace(make_snapshot(model), budget=bound(ledger))
    assert (await harness.run(snapshot)).status == "dropped"
    tokens, estimated = purposes(ledger)["turn.failed"]
    assert tokens == estimated > 0

    refused = Failed(reason="429 rate limited", retryable=False, kind="rate_limited")
    other = dataclasses.replace(STEVE, uuid="00000000-0000-0000-0000-0000000000aa")
    model = ScriptedModel([[refused]])
    snapshot = dataclasses.replace(make_snapshot(model), budget=bound(ledger))
    assert (await harness.run(snapshot, player=other)).status == "dropped"
    assert purposes(ledger, other.uuid) == {}


async def test_a_compaction_is_billed_to_the_server_alone(
    harness: Harness, ledger: UsageLedger
) -> None:
    model = ScriptedModel([answer(f"answer {n}") for n in range(3)])
    snapshot = dataclasses.replace(make_snapshot(model), budget=bound(ledger))
    for n in range(3):
        await harness.run(snapshot, f"question {n}")
    turns_only = ledger.usage(SERVER, DAY).day.tokens
    summary = Completed(
        items=(AssistantText(text="They talked."),),
        usage=Usage(input_tokens=50_000, output_tokens=800),
    )
    model.scripts.append([summary])
    # The compaction runs with the snapshot of the turn that triggered it (the asker's budget
    # binding): it is still the server that pays; the metrics count it under tier none.
    metrics = BridgeMetrics()
    compactor = Compactor(
        session=harness.session, activity=harness.activity, audit=harness.audit, metrics=metrics
    )
    assert await compactor.request(snapshot) == "compacted"
    assert purposes(ledger, SERVER)["compaction"] == (50_800, 0)
    counted = {
        sample.labels["kind"]: sample.value
        for family in metrics.tokens.collect()
        for sample in family.samples
        if sample.name.endswith("_total")
        and sample.labels["tier"] == "none"
        and sample.labels["purpose"] == "compaction"
    }
    assert counted == {"input": 50_000, "output": 800}
    assert ledger.usage(SERVER, DAY).day.tokens == turns_only + 50_800
    assert "compaction" not in purposes(ledger)
    assert ledger.usage(STEVE.uuid, DAY).day.tokens == turns_only
