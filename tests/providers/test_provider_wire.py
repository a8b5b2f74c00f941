"""The clients against a real local HTTP server: recordings verbatim, then every fault."""

from __future__ import annotations

import asyncio
import json
import socket

import pytest

from bridge.providers.client import ProviderClient
from bridge.providers.errors import (
    ProviderConnectError,
    ProviderResponseError,
    ProviderStatusError,
    ProviderStreamError,
    ProviderTimeoutError,
)
from bridge.providers.events import Completed, Failed, StreamEvent, TextDelta
from bridge.providers.items import ApiType, PlayerMessage, ProviderRequest, ToolSpec
from bridge.providers.settings import ModelSettings, ProviderSettings

from .provider_checks import check_events
from .provider_expectations import STREAMS, expected_for, interaction
from .provider_replay_server import ReplayServer, Reply, sse_chunks
from .provider_support import make_settings

SECRET = "sk-test-secret-key"
MODEL = ModelSettings(wire_model="test-model", max_output_tokens=256)
REQUEST = ProviderRequest(
    session_id="public-session-1",
    instructions="Be brief.",
    items=(PlayerMessage(player="Steve", text="hello"),),
    tools=(ToolSpec(name="look", description="look around", strict=True),),
)
CHAT_STREAM = interaction("pydantic-ai/test_run_stream_sync_streams_real_model", 1)
RESPONSES_STREAM = interaction("llm/test_responses_tool_use_streaming", 1)


async def collect(
    settings: ProviderSettings,
    request: ProviderRequest = REQUEST,
    delays: list[float] | None = None,
) -> list[StreamEvent]:
    async def record(delay: float) -> None:
        if delays is not None:
            delays.append(delay)

    async with ProviderClient(settings, sleep=record) as client:

        async def run() -> list[StreamEvent]:
            return [event async for event in client.stream(request, MODEL)]

        return await asyncio.wait_for(run(), timeout=30)


def ok_reply(api_type: ApiType) -> Reply:
    recorded = CHAT_STREAM if api_type == "openai_chat_completions" else RESPONSES_STREAM
    return Reply(content_type=recorded.content_type, chunks=sse_chunks(recorded.body))


def failed(events: list[StreamEvent]) -> Failed:
    final = events[-1]
    assert isinstance(final, Failed), final
    assert SECRET not in final.reason
    return final


@pytest.mark.parametrize(("name", "index", "api_type"), STREAMS)
async def test_recording_served_verbatim(
    replay_server: ReplayServer, name: str, index: int, api_type: ApiType
) -> None:
    settings = make_settings(api_type, replay_server.recording_url(name, index))
    events = await collect(settings)
    recorded = interaction(name, index)
    check_events(events, expected_for(api_type, recorded.body))
    # A stream failing with a provider error is not retried here: the turn engine decides.
    assert len(replay_server.requests) == 1
    sent = replay_server.requests[0]
    endpoint = "/chat/completions" if api_type == "openai_chat_completions" else "/responses"
    assert sent.method == "POST" and sent.path.endswith(endpoint)
    assert sent.headers["authorization"] == f"Bearer {SECRET}"
    assert sent.headers["user-agent"].startswith("mineclaw-bridge/")
    assert sent.json()["model"] == "test-model"


@pytest.mark.parametrize("api_type", ["openai_chat_completions", "openai_responses"])
async def test_connection_is_reused_across_requests(
    replay_server: ReplayServer, api_type: ApiType
) -> None:
    replay_server.script(ok_reply(api_type), ok_reply(api_type))
    settings = make_settings(api_type, replay_server.base_url)
    async with ProviderClient(settings) as client:
        for _ in range(2):
            events = [e async for e in client.stream(REQUEST, MODEL)]
            assert isinstance(events[-1], Completed)
    assert len(replay_server.requests) == 2
    assert replay_server.connections == 1


async def test_429_with_retry_after_is_retried_after_that_delay(
    replay_server: ReplayServer,
) -> None:
    replay_server.script(
        Reply(
            status=429,
            content_type="application/json",
            headers={"retry-after": "0"},
            chunks=[b'{"error":{"code":"rate_limit_exceeded","message":"slow down"}}'],
        ),
        Reply(
            status=429,
            content_type="application/json",
            headers={"retry-after-ms": "40"},
            chunks=[b'{"error":{"code":"rate_limit_exceeded","message":"slow down"}}'],
        ),
        ok_reply("openai_responses"),
    )
    delays: list[float] = []
    events = await collect(make_settings("openai_responses", replay_server.base_url), delays=delays)
    assert isinstance(events[-1], Completed)
    assert delays == [0.0, 0.04]
    assert len(replay_server.requests) == 3
    bodies = {r.body for r in replay_server.requests}
    assert len(bodies) == 1


async def test_429_asking_past_the_cap_fails_without_retry(replay_server: ReplayServer) -> None:
    replay_server.script(
        Reply(
            status=429,
            content_type="application/json",
            headers={"retry-after": "3600"},
            chunks=[b'{"error":{"code":"rate_limit_exceeded","message":"tomorrow"}}'],
        )
    )
    events = await collect(make_settings("openai_chat_completions", replay_server.base_url))
    final = failed(events)
    assert isinstance(final.error, ProviderStatusError) and final.error.status == 429
    assert final.error.code == "rate_limit_exceeded" and final.retryable
    assert len(replay_server.requests) == 1


@pytest.mark.parametrize("status", [500, 503, 408, 409])
async def test_retryable_status_then_success(replay_server: ReplayServer, status: int) -> None:
    replay_server.script(
        Reply(status=status, content_type="text/html", chunks=[b"<html>" + b"x" * 5000]),
        ok_reply("openai_chat_completions"),
    )
    delays: list[float] = []
    events = await collect(
        make_settings("openai_chat_completions", replay_server.base_url), delays=delays
    )
    assert isinstance(events[-1], Completed)
    assert len(delays) == 1 and 0.001 <= delays[0] <= 0.002  # jittered backoff from 1 ms
    assert len(replay_server.requests) == 2


async def test_retry_budget_is_spent_then_the_attempt_fails(replay_server: ReplayServer) -> None:
    error = b'{"error":{"code":"server_error","message":"' + b"y" * 2000 + b'"}}'
    replay_server.script(
        *[Reply(status=503, content_type="application/json", chunks=[error]) for _ in range(2)]
    )
    events = await collect(
        make_settings("openai_responses", replay_server.base_url, max_attempts=2)
    )
    final = failed(events)
    assert final.retryable and "HTTP 503 server_error" in final.reason
    assert len(final.reason) < 400  # the body is clipped, never passed on whole
    assert len(replay_server.requests) == 2


async def test_client_error_is_not_retried(replay_server: ReplayServer) -> None:
    replay_server.script(
        Reply(
            status=400,
            content_type="application/json",
            chunks=[b'{"error":{"code":"invalid_value","message":"bad tool schema"}}'],
        )
    )
    events = await collect(make_settings("openai_chat_completions", replay_server.base_url))
    final = failed(events)
    assert not final.retryable and final.reason == "HTTP 400 invalid_value: bad tool schema"
    assert len(replay_server.requests) == 1


async def test_reset_mid_stream_fails_the_attempt_without_retry(
    replay_server: ReplayServer,
) -> None:
    reply = ok_reply("openai_chat_completions")
    reply.reset_after_chunks = 4
    replay_server.script(reply, ok_reply("openai_chat_completions"))
    events = await collect(make_settings("openai_chat_completions", replay_server.base_url))
    final = failed(events)
    assert isinstance(final.error, ProviderStreamError) and final.retryable
    assert any(isinstance(e, TextDelta) for e in events)  # bytes had arrived
    assert len(replay_server.requests) == 1


async def test_reset_before_any_byte_is_retried(replay_server: ReplayServer) -> None:
    reply = ok_reply("openai_responses")
    reply.reset_after_chunks = 0
    replay_server.script(reply, ok_reply("openai_responses"))
    events = await collect(make_settings("openai_responses", replay_server.base_url))
    assert isinstance(events[-1], Completed)
    assert len(replay_server.requests) == 2


@pytest.mark.parametrize(
    ("api_type", "markers", "message"),
    [
        # Cut before its finish_reason: without that, no [DONE] means cut off.
        (
            "openai_chat_completions",
            (b"data: [DONE]", b'"finish_reason":"stop"'),
            "ended before [DONE]",
        ),
        ("openai_responses", (b'"response.completed"',), "ended before response.completed"),
    ],
)
async def test_stream_ending_without_its_final_event(
    replay_server: ReplayServer, api_type: ApiType, markers: tuple[bytes, ...], message: str
) -> None:
    reply = ok_reply(api_type)
    reply.chunks = [c for c in reply.chunks if not any(m in c for m in markers)]
    replay_server.script(reply)
    final = failed(await collect(make_settings(api_type, replay_server.base_url)))
    assert isinstance(final.error, ProviderStreamError) and final.retryable
    assert message in final.reason
    assert len(replay_server.requests) == 1


@pytest.mark.parametrize("api_type", ["openai_chat_completions", "openai_responses"])
async def test_data_line_that_is_not_json(replay_server: ReplayServer, api_type: ApiType) -> None:
    reply = ok_reply(api_type)
    reply.chunks.insert(2, b"data: {this is not json\n\n")
    replay_server.script(reply)
    final = failed(await collect(make_settings(api_type, replay_server.base_url)))
    assert isinstance(final.error, ProviderStreamError)
    assert "not" in final.reason and "JSON" in final.reason and "line" in final.reason


async def test_error_event_mid_stream(replay_server: ReplayServer) -> None:
    name = "pydantic-ai/test_tool_use_failed_error_streaming"
    settings = make_settings("openai_chat_completions", replay_server.recording_url(name, 0))
    final = failed(await collect(settings))
    assert isinstance(final.error, ProviderResponseError)
    assert final.error.code == "tool_use_failed" and final.error.status == 400
    assert not final.retryable
    assert len(replay_server.requests) == 1


async def test_responses_error_event(replay_server: ReplayServer) -> None:
    reply = ok_reply("openai_responses")
    reply.chunks.insert(
        3,
        b'event: error\ndata: {"type":"error","code":"server_error","message":"overloaded"}\n\n',
    )
    replay_server.script(reply)
    final = failed(await collect(make_settings("openai_responses", replay_server.base_url)))
    assert final.reason == "server_error: overloaded" and final.retryable


@pytest.mark.parametrize("stall", ["headers", "body"])
async def test_slow_server_past_the_timeout(replay_server: ReplayServer, stall: str) -> None:
    replay_server.script(Reply(stall=stall), Reply(stall=stall))
    settings = make_settings(
        "openai_chat_completions", replay_server.base_url, max_attempts=2, read_s=0.2
    )
    final = failed(await collect(settings))
    assert isinstance(final.error, ProviderTimeoutError) and final.retryable
    assert len(replay_server.requests) == 2


async def test_json_instead_of_a_stream(replay_server: ReplayServer) -> None:
    replay_server.script(
        Reply(content_type="application/json", chunks=[b'{"id":"x","choices":[]}'])
    )
    final = failed(await collect(make_settings("openai_chat_completions", replay_server.base_url)))
    assert "expected an event stream" in final.reason and not final.retryable


async def test_unreachable_provider() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    delays: list[float] = []
    settings = make_settings("openai_responses", f"http://127.0.0.1:{port}/v1", max_attempts=3)
    final = failed(await collect(settings, delays=delays))
    assert isinstance(final.error, ProviderConnectError) and final.retryable
    assert len(delays) == 2
    # A server that is down is not "busy": the player is told it cannot be reached.
    assert final.failure_class == "unreachable"


async def test_opencode_session_is_stable_across_retries_and_tool_rounds(
    replay_server: ReplayServer,
) -> None:
    replay_server.script(
        Reply(status=500, content_type="application/json", chunks=[b"{}"]),
        ok_reply("openai_chat_completions"),
        ok_reply("openai_chat_completions"),
    )
    settings = make_settings(
        "openai_chat_completions",
        replay_server.base_url,
        provider_id="opencode",
        extra_headers={"x-opencode-session": "configured-value", "x-trace": "${session_id}"},
    )
    await collect(settings)
    await collect(settings, REQUEST.model_copy(update={"items": REQUEST.items * 2}))
    sessions = {r.headers["x-opencode-session"] for r in replay_server.requests}
    assert sessions == {"public-session-1"}
    assert {r.headers["x-trace"] for r in replay_server.requests} == {"public-session-1"}
    assert all(
        r.headers["user-agent"].startswith("mineclaw-bridge/") for r in replay_server.requests
    )
    assert len(replay_server.requests) == 3
    body = replay_server.requests[0].json()
    assert json.dumps(body).count("public-session-1") == 0  # no cache key unless configured


@pytest.mark.parametrize("where", ["status", "stream"])
async def test_a_key_echoed_by_the_provider_is_cut_out(
    replay_server: ReplayServer, where: str
) -> None:
    echo = b'{"error":{"code":"invalid_api_key","message":"bad key ' + SECRET.encode()
    echo += b' and header hdr-credential-1"}}'
    if where == "status":
        replay_server.script(Reply(status=401, content_type="application/json", chunks=[echo]))
    else:
        replay_server.script(Reply(chunks=[b"event: error\ndata: " + echo + b"\n\n"]))
    settings = make_settings(
        "openai_chat_completions",
        replay_server.base_url,
        extra_headers={"x-api-secret": "hdr-credential-1"},
    )
    final = failed(await collect(settings))
    assert "invalid_api_key" in final.reason
    assert "hdr-credential-1" not in final.reason and "hdr-credential-1" not in str(final.error)
    assert SECRET not in str(final.error) and "[redacted: " in final.reason


async def test_a_response_past_the_size_cap_fails(replay_server: ReplayServer) -> None:
    name = "pydantic-ai/test_openai_responses_thinking_part_iter"
    settings = make_settings("openai_responses", replay_server.recording_url(name))
    async with ProviderClient(settings, max_response_bytes=50_000) as client:

        async def run() -> list[StreamEvent]:
            return [event async for event in client.stream(REQUEST, MODEL)]

        events = await asyncio.wait_for(run(), timeout=30)
    final = failed(events)
    assert isinstance(final.error, ProviderStreamError)
    assert "longer than 50000 bytes" in final.reason
    assert len(events) > 1  # deltas were passed on before the cap was reached
    assert len(replay_server.requests) == 1
