"""What the wire tests of every real server share: a client, a request, and reading a stream."""

from __future__ import annotations

import asyncio
from typing import Any

from pydantic import SecretStr

from bridge.providers.client import ProviderClient
from bridge.providers.events import Completed, Failed, StreamEvent, TextDelta
from bridge.providers.items import Item, PlayerMessage, ProviderRequest, ToolSpec
from bridge.providers.settings import ModelSettings, ProviderSettings, RetryPolicy, Timeouts

STREAM_TIMEOUT_S = 300.0
# The tools the tests offer: no string parameters, so a grammar-forced call is short.
ONLINE = ToolSpec(
    name="online_players",
    description="who is online",
    parameters={"type": "object", "properties": {}, "additionalProperties": False},
)
SNAPSHOT = ToolSpec(
    name="player_snapshot",
    description="where the asking player is",
    parameters={"type": "object", "properties": {}, "additionalProperties": False},
)


def client(base_url: str, compat: Any, *, attempts: int = 1) -> ProviderClient:
    return ProviderClient(
        ProviderSettings(
            provider_id="local",
            api_type="openai_chat_completions",
            base_url=base_url,
            api_key=SecretStr("none"),
            timeouts=Timeouts(connect_s=30.0, read_s=STREAM_TIMEOUT_S),
            retry=RetryPolicy(max_attempts=attempts, initial_backoff_ms=1, max_backoff_ms=2),
            compat=compat,
        )
    )


def request(*items: Item, tools: tuple[ToolSpec, ...] = ()) -> ProviderRequest:
    return ProviderRequest(
        session_id="real",
        instructions="You are a helper on a Minecraft server.",
        items=items or (PlayerMessage(player="Steve", text="hello"),),
        tools=tools,
    )


async def events_of(
    the_client: ProviderClient, the_request: ProviderRequest, model: ModelSettings
) -> list[StreamEvent]:
    async def run() -> list[StreamEvent]:
        return [event async for event in the_client.stream(the_request, model)]

    return await asyncio.wait_for(run(), STREAM_TIMEOUT_S)


def final(events: list[StreamEvent]) -> Completed | Failed:
    last = events[-1]
    assert isinstance(last, Completed | Failed), events
    return last


def shown(events: list[StreamEvent]) -> str:
    return "".join(event.text for event in events if isinstance(event, TextDelta))
