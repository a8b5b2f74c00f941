"""Headers (key, templates, opencode) and retry delays, without a network."""

from __future__ import annotations

import asyncio
import email.utils
import json
import random
from collections.abc import AsyncIterator

import httpx
import pytest

from bridge.providers.client import ProviderClient
from bridge.providers.events import Completed, Failed, StreamEvent
from bridge.providers.headers import DEFAULT_USER_AGENT, HeaderBuilder
from bridge.providers.items import PlayerMessage, ProviderRequest
from bridge.providers.retry import (
    RetryAfterTooLong,
    backoff_s,
    delay_before_retry,
    server_delay_s,
)
from bridge.providers.settings import ModelSettings, RetryPolicy

from .provider_support import BodyValidator, make_settings

SECRET = "sk-test-secret-key"


def test_bearer_user_agent_and_templates() -> None:
    settings = make_settings(
        "openai_chat_completions",
        "http://x",
        extra_headers={"X-Session": "s=${session_id}", "X-Client": "via ${user_agent}"},
    )
    headers = HeaderBuilder(settings).build("sess-1")
    assert headers["authorization"] == f"Bearer {SECRET}"
    assert headers["user-agent"] == DEFAULT_USER_AGENT
    assert DEFAULT_USER_AGENT.startswith("mineclaw-bridge/")
    assert headers["x-session"] == "s=sess-1"
    assert headers["x-client"] == f"via {DEFAULT_USER_AGENT}"
    assert "x-opencode-session" not in headers


def test_extra_headers_cannot_replace_the_key() -> None:
    settings = make_settings(
        "openai_responses", "http://x", extra_headers={"Authorization": "Bearer stolen"}
    )
    assert HeaderBuilder(settings).build("s")["authorization"] == f"Bearer {SECRET}"


def test_opencode_session_header_overrides_configuration() -> None:
    settings = make_settings(
        "openai_chat_completions",
        "http://x",
        provider_id="opencode-zen",
        user_agent="MyServer/2",
        extra_headers={"x-opencode-session": "configured", "x-other": "${session_id}"},
    )
    builder = HeaderBuilder(settings)
    first, second = builder.build("public-7"), builder.build("public-8")
    assert first["x-opencode-session"] == "public-7" and first["user-agent"] == "MyServer/2"
    assert second["x-opencode-session"] == "public-8" and second["x-other"] == "public-8"


async def test_a_line_break_in_a_header_is_refused_without_showing_the_value() -> None:
    settings = make_settings("openai_responses", "http://x", extra_headers={"x-s": "${session_id}"})
    request = ProviderRequest(
        session_id="evil\r\nx-injected: 1", items=(PlayerMessage(player=None, text="x"),)
    )

    async def never(_: httpx.Request) -> httpx.Response:
        raise AssertionError("no request may be sent")

    async with ProviderClient(settings, transport=httpx.MockTransport(never)) as client:
        stream = client.stream(request, ModelSettings(wire_model="m"))
        events = await asyncio.wait_for(_collect(stream), timeout=10)
    assert len(events) == 1 and isinstance(events[0], Failed)
    assert "'x-s'" in events[0].reason and "injected" not in events[0].reason
    assert not events[0].retryable


async def _collect(stream: AsyncIterator[StreamEvent]) -> list[StreamEvent]:
    return [event async for event in stream]


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"retry-after-ms": "250"}, 0.25),
        ({"retry-after": "3"}, 3.0),
        ({"retry-after-ms": "100", "retry-after": "9"}, 0.1),
        ({"retry-after-ms": "nan", "retry-after": "2"}, 2.0),
        ({"retry-after-ms": "-5"}, None),
        ({"retry-after": "soon"}, None),
        ({}, None),
    ],
)
def test_server_delay(headers: dict[str, str], seconds: float | None) -> None:
    assert server_delay_s(headers) == seconds


def test_server_delay_as_http_date() -> None:
    now = 1_700_000_000.0
    date = email.utils.formatdate(now + 4, usegmt=True)
    assert server_delay_s({"retry-after": date}, now=lambda: now) == pytest.approx(4.0)


def test_backoff_grows_with_jitter_and_stops_at_the_cap() -> None:
    policy = RetryPolicy(initial_backoff_ms=100, max_backoff_ms=1000)
    rng = random.Random(7)
    delays = [backoff_s(policy, attempt, rng=rng) for attempt in range(1, 8)]
    ceilings = [0.2, 0.4, 0.8, 1.0, 1.0, 1.0, 1.0]
    for delay, ceiling in zip(delays, ceilings, strict=True):
        # Never below the configured initial pause, never past the configured cap.
        assert 0.1 <= delay <= ceiling


def test_retry_after_past_the_cap_ends_the_request() -> None:
    policy = RetryPolicy(max_retry_after_ms=1000)
    assert delay_before_retry(policy, 1, {"retry-after": "1"}) == 1.0
    with pytest.raises(RetryAfterTooLong):
        delay_before_retry(policy, 1, {"retry-after": "2"})


async def test_mock_transport_retries_then_completes(validate_body: BodyValidator) -> None:
    """httpx.MockTransport stands in for the server: two 503s, then a stream."""
    seen: list[httpx.Request] = []
    delays: list[float] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if len(seen) < 3:
            return httpx.Response(503, headers={"retry-after-ms": "7"}, json={"error": {}})
        return httpx.Response(
            200,
            headers={"content-type": "text/event-stream"},
            content=b'data: {"choices":[{"delta":{"content":"ok"},"finish_reason":"stop"}]}\n\n'
            b"data: [DONE]\n\n",
        )

    async def record(delay: float) -> None:
        delays.append(delay)

    settings = make_settings("openai_chat_completions", "http://provider.test/v1")
    request = ProviderRequest(session_id="s", items=(PlayerMessage(player="Steve", text="hi"),))
    async with ProviderClient(
        settings, transport=httpx.MockTransport(handler), sleep=record
    ) as client:
        events = [e async for e in client.stream(request, ModelSettings(wire_model="m"))]
    assert isinstance(events[-1], Completed)
    assert delays == [0.007, 0.007]
    assert [str(r.url) for r in seen] == ["http://provider.test/v1/chat/completions"] * 3
    assert len({r.content for r in seen}) == 1  # every attempt sends the same body
    validate_body("openai_chat_completions", json.loads(seen[0].content))
