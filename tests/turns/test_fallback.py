"""A model's fallbacks: the same turn goes on with the next provider (issue 17)."""

from __future__ import annotations

import dataclasses

import pytest

from bridge.providers.events import Failed
from bridge.providers.failures import FailureClass
from bridge.providers.settings import RetryPolicy
from bridge.turns.ports import ModelRoute, TurnSnapshot

from .conftest import Harness, make_snapshot
from .fakes import RecordingTools, ScriptedModel, answer, failure, tool_calls


def with_fallbacks(snapshot: TurnSnapshot, *models: tuple[str, ScriptedModel]) -> TurnSnapshot:
    routes = tuple(
        ModelRoute(model_ref=ref, stream=model.stream, policy=RetryPolicy(max_attempts=2))
        for ref, model in models
    )
    return dataclasses.replace(snapshot, fallbacks=routes)


def fails(kind: FailureClass) -> list[Failed]:
    return [Failed(reason=f"upstream says {kind}", retryable=False, kind=kind)]


async def test_spent_attempts_go_on_with_the_fallback_and_it_is_recorded(
    harness: Harness,
) -> None:
    primary = ScriptedModel([failure(), failure(), failure()])
    backup = ScriptedModel([answer("from the backup")])
    snapshot = with_fallbacks(make_snapshot(primary), ("backup/m", backup))
    outcome = await harness.run(snapshot)
    assert outcome.reply == "from the backup"
    assert len(primary.requests) == 3 and len(backup.requests) == 1
    assert backup.requests[0] == primary.requests[0]  # the same turn, the same request
    (archived,) = harness.archive.turns
    assert archived.model_ref == "backup/m"
    fallback = [f for kind, f in harness.audit.events if kind == "provider.fallback"]
    assert fallback == [
        {"turn_id": "t1", "from": "local/model-a", "to": "backup/m", "class": "broken"}
    ]
    end = [f for kind, f in harness.audit.events if kind == "turn.end"][-1]
    assert end["model"] == "backup/m" and end["outcome"] == "completed"
    failures = [f for kind, f in harness.audit.events if kind == "provider.failure"]
    assert [f["model"] for f in failures] == ["local/model-a"] * 3


@pytest.mark.parametrize("kind", ["quota", "misconfigured", "busy", "timed_out"])
async def test_failures_another_provider_may_not_share_fall_back(
    harness: Harness, kind: FailureClass
) -> None:
    primary = ScriptedModel([fails(kind)])
    backup = ScriptedModel([answer("ok")])
    outcome = await harness.run(with_fallbacks(make_snapshot(primary), ("backup/m", backup)))
    assert outcome.reply == "ok" and len(primary.requests) == 1


@pytest.mark.parametrize("kind", ["too_long", "incomplete", "rejected"])
async def test_failures_that_would_repeat_elsewhere_do_not_fall_back(
    harness: Harness, kind: FailureClass
) -> None:
    primary = ScriptedModel([fails(kind)])
    backup = ScriptedModel([])
    outcome = await harness.run(with_fallbacks(make_snapshot(primary), ("backup/m", backup)))
    assert outcome.status == "dropped" and backup.requests == []


async def test_the_turn_stays_with_the_fallback_that_answered(harness: Harness) -> None:
    primary = ScriptedModel([fails("quota")])
    backup = ScriptedModel([tool_calls(("c1", "look", "{}")), answer("you see stone")])
    tools = RecordingTools()
    snapshot = with_fallbacks(make_snapshot(primary, runner=tools), ("backup/m", backup))
    outcome = await harness.run(snapshot)
    assert outcome.reply == "you see stone"
    assert len(primary.requests) == 1 and len(backup.requests) == 2


async def test_every_route_spent_drops_the_turn_with_the_last_failure(harness: Harness) -> None:
    primary = ScriptedModel([fails("quota")])
    second = ScriptedModel([fails("busy"), fails("busy")])
    third = ScriptedModel([fails("misconfigured")])
    snapshot = with_fallbacks(make_snapshot(primary), ("b/m", second), ("c/m", third))
    outcome = await harness.run(snapshot)
    assert outcome.status == "dropped" and outcome.reason == "upstream says misconfigured"
    assert harness.output.failures[-1][1] == "errors.provider_misconfigured"
    tos = [f["to"] for kind, f in harness.audit.events if kind == "provider.fallback"]
    assert tos == ["b/m", "c/m"]
    end = [f for kind, f in harness.audit.events if kind == "turn.end"][-1]
    assert end["model"] == "c/m" and end["class"] == "misconfigured"
