"""Servers' quirks against the real client over a real local HTTP server (issue 17)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest

from bridge.providers import client as client_module
from bridge.providers.client import ProviderClient
from bridge.providers.events import Completed, StreamEvent, TextDelta
from bridge.providers.items import ApiType

from .provider_replay_server import ReplayServer, Reply
from .provider_support import make_settings
from .test_provider_wire import MODEL, REQUEST, collect, failed, ok_reply

CHAT = "openai_chat_completions"


@pytest.mark.parametrize("api_type", [CHAT, "openai_responses"])
async def test_final_event_comes_at_once_while_the_body_stays_open(
    replay_server: ReplayServer, api_type: ApiType, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server sends [DONE] (or response.completed) and then neither more bytes nor the
    end of the body. The turn must not wait on it: with the drain's own bound lifted, waiting
    for the body would never end and the wait_for below would fail."""
    monkeypatch.setattr(client_module, "DRAIN_TIMEOUT_S", 3600.0)
    reply = ok_reply(api_type)
    reply.hold_open = True
    replay_server.script(reply)
    async with ProviderClient(make_settings(api_type, replay_server.base_url)) as client:
        events: list[StreamEvent] = []

        async def until_final() -> None:
            async for event in client.stream(REQUEST, MODEL):
                events.append(event)
                if isinstance(event, Completed):
                    return

        await asyncio.wait_for(until_final(), timeout=30)
    assert isinstance(events[-1], Completed)


async def test_connection_is_still_reused_after_an_early_final_event(
    replay_server: ReplayServer,
) -> None:
    replay_server.script(ok_reply(CHAT), ok_reply(CHAT), ok_reply(CHAT))
    async with ProviderClient(make_settings(CHAT, replay_server.base_url)) as client:
        for _ in range(3):
            events = [e async for e in client.stream(REQUEST, MODEL)]
            assert isinstance(events[-1], Completed)
    assert replay_server.connections == 1


async def test_a_kept_alive_connection_closed_unanswered_is_sent_again_on_a_new_one(
    replay_server: ReplayServer,
) -> None:
    """llama-server now and then closes a kept-alive connection as the client reuses it: the
    request never reached a handler, so it goes once more on a new connection at once, even
    where the policy allows one attempt only, and with no backoff."""
    replay_server.script(ok_reply(CHAT), Reply(close_unanswered=True), ok_reply(CHAT))
    delays: list[float] = []
    settings = make_settings(CHAT, replay_server.base_url, max_attempts=1)
    async with ProviderClient(settings, sleep=_recorded(delays)) as client:
        for _ in range(2):
            events = [e async for e in client.stream(REQUEST, MODEL)]
            assert isinstance(events[-1], Completed), events[-1]
    assert len(replay_server.requests) == 3 and replay_server.connections == 2
    assert delays == [0.0]


async def test_a_server_that_never_answers_is_reconnected_to_once_only(
    replay_server: ReplayServer,
) -> None:
    replay_server.script(*(Reply(close_unanswered=True) for _ in range(5)))
    settings = make_settings(CHAT, replay_server.base_url, max_attempts=1)
    final = failed(await collect(settings))
    assert "RemoteProtocolError" in final.reason and final.retryable
    assert len(replay_server.requests) == 2


def _recorded(delays: list[float]) -> Callable[[float], Awaitable[None]]:
    async def sleep(delay: float) -> None:
        delays.append(delay)

    return sleep


async def test_event_stream_labelled_text_plain_is_read(replay_server: ReplayServer) -> None:
    reply = ok_reply(CHAT)
    reply.content_type = "text/plain; charset=utf-8"
    replay_server.script(reply)
    events = await collect(make_settings(CHAT, replay_server.base_url))
    assert isinstance(events[-1], Completed)
    assert "".join(e.text for e in events if isinstance(e, TextDelta))


async def test_text_plain_error_page_is_still_an_error(replay_server: ReplayServer) -> None:
    replay_server.script(
        Reply(content_type="text/plain", chunks=[b"  \n", b"upstream connect error"])
    )
    final = failed(await collect(make_settings(CHAT, replay_server.base_url)))
    assert "expected an event stream" in final.reason and not final.retryable


async def test_text_plain_json_error_names_the_provider_error(replay_server: ReplayServer) -> None:
    replay_server.script(
        Reply(
            content_type="text/plain",
            chunks=[b'{"error": {"code": "model_not_found", ', b'"message": "no such model"}}'],
        )
    )
    final = failed(await collect(make_settings(CHAT, replay_server.base_url)))
    assert "no such model" in final.reason and final.failure_class == "misconfigured"


async def test_insufficient_quota_429_is_not_retried(replay_server: ReplayServer) -> None:
    replay_server.script(
        Reply(
            status=429,
            content_type="application/json",
            chunks=[
                b'{"error":{"message":"You exceeded your current quota, please check your plan '
                b'and billing details.","type":"insufficient_quota","code":"insufficient_quota"}}'
            ],
        ),
        ok_reply(CHAT),
    )
    delays: list[float] = []
    final = failed(await collect(make_settings(CHAT, replay_server.base_url), delays=delays))
    assert not final.retryable and final.failure_class == "quota"
    assert len(replay_server.requests) == 1 and delays == []


async def test_litellm_renamed_retry_after_is_honoured(replay_server: ReplayServer) -> None:
    replay_server.script(
        Reply(
            status=429,
            content_type="application/json",
            headers={"llm_provider-retry-after": "0.3"},
            chunks=[b'{"error":{"code":"429","message":"rate limited upstream"}}'],
        ),
        ok_reply(CHAT),
    )
    delays: list[float] = []
    events = await collect(make_settings(CHAT, replay_server.base_url), delays=delays)
    assert isinstance(events[-1], Completed) and delays == [0.3]
