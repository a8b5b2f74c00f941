"""The turn engine's budget check between tool rounds, its usage counting, the guest's output
cap, and the loop breaker, against a scripted model and a real usage ledger (SQLite)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from bridge.app.serving.budget_binding import PlayerBudget
from bridge.control.budgets_config import BudgetsConfig
from bridge.policy.budgets import Budgets
from bridge.providers.events import Completed, Usage
from bridge.providers.items import AssistantText, ToolCall
from bridge.store.target import StorageTarget
from bridge.store.usage import SERVER, Periods, UsageLedger

from .conftest import Harness, make_snapshot
from .fakes import STEVE, RecordingTools, ScriptedModel, Step, answer, tool_calls

DAY = Periods(day="2026-12-03", month="2026-12")
NOON = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)


def used(tokens: int, *items: AssistantText | ToolCall) -> list[Step]:
    return [Completed(items=items, usage=Usage(input_tokens=tokens - 10, output_tokens=10))]


@pytest.fixture
def ledger(chosen_target: StorageTarget) -> Iterator[UsageLedger]:
    """The usage ledger on the run's storage backend, closed when the test ends."""
    with chosen_target.open_usage() as opened:
        yield opened


def budget(ledger: UsageLedger, **player_limits: int) -> PlayerBudget:
    config = BudgetsConfig.model_validate({"enabled": True, "tiers": {"member": player_limits}})
    budgets = Budgets(ledger, clock=lambda: NOON)
    return PlayerBudget(budgets, frozenset({"mineclaw.budget.member"}), config)


async def test_a_round_that_would_pass_the_budget_is_not_sent_and_nothing_is_kept(
    harness: Harness, ledger: UsageLedger
) -> None:
    bound = budget(ledger, day_tokens=1000)
    call = ToolCall(call_id="c1", name="look", arguments="{}")
    model = ScriptedModel([used(990, call), answer("never asked")])
    tools = RecordingTools()
    snapshot = dataclasses.replace(make_snapshot(model, runner=tools), budget=bound)

    outcome = await harness.run(snapshot, "look around")

    assert outcome.status == "dropped"
    assert len(model.requests) == 1  # the second request was never sent
    assert len(tools.calls) == 1  # the round that ran stays run (and audited)
    assert harness.session.state.turns == () and harness.archive.turns == []
    ((uuid, key, values),) = harness.output.failures
    assert (uuid, key) == (STEVE.uuid, "budgets.player_stopped")
    assert values["period"] == "daily" and values["limit"] == "1000" and values["used"] == "990"
    assert values["resets"] == "2026-12-04 00:00 UTC"
    assert ledger.usage(STEVE.uuid, DAY).day.tokens == 990  # spent tokens still count
    assert ledger.usage(SERVER, DAY).day.tokens == 990
    end = harness.audit.events[-1][1]
    assert end["outcome"] == "dropped" and end["tokens"] == 990


async def test_a_budget_short_of_the_worst_case_lets_a_shorter_answer_go(
    harness: Harness, ledger: UsageLedger
) -> None:
    """700 of 1000 spent: a request whose prompt and 4096-token cap could pass the budget is
    sent with its cap cut to the room left, instead of being refused."""
    ledger.add(
        player_uuid=STEVE.uuid,
        player_name="Steve",
        periods=DAY,
        tokens=700,
        estimated=False,
        purpose="turn",
        at=NOON,
    )
    model = ScriptedModel([used(250, AssistantText(text="short"))])
    snapshot = make_snapshot(model, max_output_tokens=4096)
    snapshot = dataclasses.replace(snapshot, budget=budget(ledger, day_tokens=1000))
    assert (await harness.run(snapshot, "hi")).status == "completed"
    cap = model.requests[0].max_output_tokens
    assert cap is not None and 256 <= cap < 300  # 300 left, less the prompt's estimate
    assert ledger.usage(STEVE.uuid, DAY).day.tokens == 950


async def test_a_budget_with_room_for_less_than_a_short_answer_still_refuses(
    harness: Harness, ledger: UsageLedger
) -> None:
    ledger.add(
        player_uuid=STEVE.uuid,
        player_name="Steve",
        periods=DAY,
        tokens=900,
        estimated=False,
        purpose="turn",
        at=NOON,
    )
    model = ScriptedModel([answer("never asked")])
    snapshot = make_snapshot(model, max_output_tokens=4096)
    snapshot = dataclasses.replace(snapshot, budget=budget(ledger, day_tokens=1000))
    assert (await harness.run(snapshot, "hi")).status == "dropped"
    assert model.requests == []
    ((_, key, _),) = harness.output.failures
    assert key == "budgets.player_stopped"


async def test_a_provider_without_usage_is_estimated_and_marked(
    harness: Harness, ledger: UsageLedger
) -> None:
    bound = budget(ledger)
    model = ScriptedModel([answer("x" * 400)])  # no usage reported
    snapshot = dataclasses.replace(make_snapshot(model), budget=bound)
    assert (await harness.run(snapshot, "hi")).status == "completed"
    totals = ledger.usage(STEVE.uuid, DAY).day
    assert totals.tokens > 100 and totals.estimated == totals.tokens


async def test_a_turn_within_budget_completes_and_counts_reported_usage(
    harness: Harness, ledger: UsageLedger
) -> None:
    bound = budget(ledger, day_tokens=100_000)
    call = ToolCall(call_id="c1", name="look", arguments="{}")
    model = ScriptedModel([used(300, call), used(500, AssistantText(text="done"))])
    snapshot = dataclasses.replace(make_snapshot(model, runner=RecordingTools()), budget=bound)
    assert (await harness.run(snapshot)).status == "completed"
    assert ledger.usage(STEVE.uuid, DAY).day.tokens == 800
    assert ledger.usage(STEVE.uuid, DAY).day.estimated == 0


async def test_the_guest_output_cap_reaches_every_request(harness: Harness) -> None:
    model = ScriptedModel([answer("short")])
    await harness.run(make_snapshot(model, max_output_tokens=64))
    assert model.requests[0].max_output_tokens == 64


async def test_the_same_call_again_and_again_stops_the_turn_before_it_runs_again(
    harness: Harness,
) -> None:
    tools = RecordingTools()
    same = [tool_calls((f"c{n}", "look", '{"a": 1, "b": 2}')) for n in range(2)]
    reordered = tool_calls(("c9", "look", '{"b":2,"a":1}'))  # the same arguments
    model = ScriptedModel([*same, reordered, answer("never")])
    outcome = await harness.run(make_snapshot(model, runner=tools, max_repeated_calls=3))
    assert outcome.status == "dropped" and "loop breaker" in (outcome.reason or "")
    assert len(tools.calls) == 2 and len(model.requests) == 3
    assert harness.output.failures == [
        (STEVE.uuid, "loops.repeating", {"count": "3", "tool": "look"})
    ]
    assert harness.session.state.turns == ()


async def test_rounds_that_keep_failing_stop_the_turn(harness: Harness) -> None:
    tools = RecordingTools(refuse=frozenset({"run_command"}))
    rounds = [tool_calls((f"c{n}", "run_command", f'{{"n": {n}}}')) for n in range(3)]
    model = ScriptedModel([*rounds, answer("never")])
    outcome = await harness.run(make_snapshot(model, runner=tools, max_failing_rounds=3))
    assert outcome.status == "dropped"
    assert len(model.requests) == 3
    assert harness.output.failures == [(STEVE.uuid, "loops.failing", {"count": "3", "tool": ""})]


async def test_a_success_between_failures_resets_the_failing_count(harness: Harness) -> None:
    tools = RecordingTools(refuse=frozenset({"run_command"}))
    failing = [tool_calls((f"f{n}", "run_command", f'{{"n": {n}}}')) for n in range(4)]
    model = ScriptedModel(
        [failing[0], failing[1], tool_calls(("ok", "look", "{}")), failing[2], failing[3]]
        + [answer("made it")]
    )
    outcome = await harness.run(make_snapshot(model, runner=tools, max_failing_rounds=3))
    assert outcome.status == "completed" and outcome.reply == "made it"
