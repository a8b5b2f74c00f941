"""What the player, the operators and the audit log learn when the provider fails (issue 17)."""

from __future__ import annotations

import functools
import json

import pytest

from bridge.providers.client import ProviderClient
from bridge.providers.events import Failed
from bridge.providers.failures import FailureClass
from bridge.providers.settings import ModelSettings, RetryPolicy
from bridge.turns.failure_lines import ProviderFailureNotice
from bridge.turns.ports import TurnLimits, TurnSnapshot
from tests.providers.provider_replay_server import ReplayServer, Reply
from tests.providers.provider_support import make_settings

from .conftest import Harness, make_snapshot
from .fakes import STEVE, ScriptedModel, answer

QUOTA_TEXT = (
    "You exceeded your current quota, please check your plan and billing details. For more "
    "information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes"
)


async def test_quota_failure_shows_a_short_line_never_the_provider_text(
    harness: Harness, provider_server: ReplayServer
) -> None:
    body = {
        "error": {"message": QUOTA_TEXT, "type": "insufficient_quota", "code": "insufficient_quota"}
    }
    provider_server.script(
        Reply(status=429, content_type="application/json", chunks=[json.dumps(body).encode()])
    )
    notices: list[ProviderFailureNotice] = []
    harness.engine.provider_failure_listener = notices.append
    settings = make_settings("openai_chat_completions", provider_server.base_url, max_attempts=1)
    async with ProviderClient(settings) as client:
        snapshot = TurnSnapshot(
            control_version="cp-1",
            model_ref="openai/gpt",
            stream=functools.partial(client.stream, model=ModelSettings(wire_model="gpt")),
            limits=TurnLimits(model_attempts=3),
            retry=RetryPolicy(initial_backoff_ms=0, max_backoff_ms=0),
        )
        outcome = await harness.run(snapshot)
    assert outcome.status == "dropped" and len(provider_server.requests) == 1
    ((uuid, key, values),) = harness.output.failures
    assert (uuid, key) == (STEVE.uuid, "errors.provider_quota")
    assert "quota" not in values["reason"] and "platform.openai.com" not in values["reason"]
    # The operators get the provider's own words; the audit log has the whole story.
    (notice,) = notices
    assert notice.failure_class == "quota" and "exceeded your current quota" in notice.error
    assert notice.model_ref == "openai/gpt"
    end = [fields for kind, fields in harness.audit.events if kind == "turn.end"][-1]
    assert "exceeded your current quota" in str(end["reason"]) and end["class"] == "quota"
    failure = [fields for kind, fields in harness.audit.events if kind == "provider.failure"][-1]
    assert failure["class"] == "quota" and "429" in str(failure["reason"])


@pytest.mark.parametrize(
    ("kind", "key"),
    [
        ("busy", "errors.provider_busy"),
        ("unreachable", "errors.provider_unreachable"),
        ("broken", "errors.provider_busy"),
        ("timed_out", "errors.provider_timeout"),
        ("quota", "errors.provider_quota"),
        ("misconfigured", "errors.provider_misconfigured"),
        ("too_long", "errors.provider_failure"),
        ("incomplete", "errors.provider_failure"),
        ("rejected", "errors.provider_failure"),
    ],
)
async def test_each_failure_class_has_its_line(
    harness: Harness, kind: FailureClass, key: str
) -> None:
    secret_text = "upstream said: internal detail 0xdeadbeef"
    model = ScriptedModel([[Failed(reason=secret_text, retryable=False, kind=kind)]])
    outcome = await harness.run(make_snapshot(model))
    assert outcome.status == "dropped" and outcome.reason == secret_text
    ((_, shown_key, values),) = harness.output.failures
    assert shown_key == key and "0xdeadbeef" not in values["reason"]


async def test_a_turn_dropped_for_its_own_reasons_tells_no_operator(harness: Harness) -> None:
    notices: list[ProviderFailureNotice] = []
    harness.engine.provider_failure_listener = notices.append
    model = ScriptedModel([[], [], []])  # three streams without a final event: broken
    await harness.run(make_snapshot(model))
    assert [n.failure_class for n in notices] == ["broken"]
    notices.clear()
    empty = ScriptedModel([answer(" ")])
    await harness.run(make_snapshot(empty))
    assert notices == [] and harness.output.failures[-1][1] == "errors.provider_failure"


async def test_a_failing_listener_does_not_cost_the_player_the_line(harness: Harness) -> None:
    def broken_listener(notice: ProviderFailureNotice) -> None:
        raise RuntimeError("listener bug")

    harness.engine.provider_failure_listener = broken_listener
    model = ScriptedModel([[Failed(reason="x", retryable=False, kind="quota")]])
    outcome = await harness.run(make_snapshot(model))
    assert outcome.status == "dropped"
    assert harness.output.failures[-1][1] == "errors.provider_quota"
    assert not harness.activity.busy
