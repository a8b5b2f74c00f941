"""The provider client against llama.cpp's own ``llama-server`` (``--jinja``, the tiny model's
Hermes/Qwen-style template with tools): real ``tool_calls`` from a real server, usage as the
server reports it, and a closed stream that stops the generation. Shapes and outcomes only."""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bridge.providers.events import Completed, Failed, TextDelta
from bridge.providers.items import AssistantText, PlayerMessage, ToolCall, ToolResult
from bridge.providers.settings import ModelSettings
from tests.interaction.processes import free_port

from .model_servers import (
    LLAMA_SERVER_READY,
    ModelServer,
    llama_server,
    llama_server_command,
    running,
)
from .wire_support import ONLINE, SNAPSHOT, client, events_of, final, request, shown

MODEL = ModelSettings(wire_model="tiny", max_output_tokens=64)
# Room for grammar-forced calls: the random weights choose how many and how they are spaced.
REQUIRED = ModelSettings(wire_model="tiny", max_output_tokens=1024, tool_choice="required")


@contextlib.asynccontextmanager
async def llama_server_on(model: Path, *extra: str) -> AsyncIterator[ModelServer]:
    binary = llama_server()
    assert binary is not None
    port = free_port()
    command = [*llama_server_command(binary, model, port), *extra]
    async with running("llama-server", command, port, LLAMA_SERVER_READY) as server:
        yield server


@pytest.fixture
async def ls_server(tiny_model: Path) -> AsyncIterator[ModelServer]:
    async with llama_server_on(tiny_model) as server:
        yield server


async def test_a_text_answer_completes_with_reported_usage(ls_server: ModelServer) -> None:
    async with client(ls_server.base_url, "auto") as the_client:
        events = await events_of(the_client, request(), MODEL)
        assert the_client.compat.name == "llama-cpp"  # its Server header says so
    answer = final(events)
    assert isinstance(answer, Completed), answer
    texts = [item.text for item in answer.items if isinstance(item, AssistantText)]
    assert len(texts) == 1 and texts[0].strip() and shown(events) == texts[0]
    assert answer.usage is not None and not answer.usage.estimated
    assert answer.usage.input_tokens > 0 and answer.usage.output_tokens > 0


async def test_required_gives_real_tool_calls_and_their_replay_is_answered(
    ls_server: ModelServer,
) -> None:
    async with client(ls_server.base_url, "llama-cpp") as the_client:
        asked = request(tools=(ONLINE, SNAPSHOT))
        asked = asked.model_copy(update={"parallel_tool_calls": True})
        first = final(await events_of(the_client, asked, REQUIRED))
        assert isinstance(first, Completed), first
        calls = [item for item in first.items if isinstance(item, ToolCall)]
        assert calls, first.items
        assert {call.name for call in calls} <= {"online_players", "player_snapshot"}
        assert all(json.loads(call.arguments) == {} for call in calls)
        assert len({call.call_id for call in calls}) == len(calls)
        results = [ToolResult(call_id=call.call_id, output='{"ok": true}') for call in calls]
        follow_up = request(*asked.items, *first.items, *results, tools=(ONLINE, SNAPSHOT))
        answer = final(await events_of(the_client, follow_up, MODEL))
    assert isinstance(answer, Completed), answer
    assert any(isinstance(item, AssistantText) and item.text for item in answer.items)


async def test_a_prompt_past_the_context_is_too_long_never_busy(ls_server: ModelServer) -> None:
    """The class a turn answers by compacting once."""
    long = request(PlayerMessage(player="Steve", text="a" * 12_000))
    async with client(ls_server.base_url, "llama-cpp", attempts=3) as the_client:
        refused = final(await events_of(the_client, long, MODEL))
    assert isinstance(refused, Failed), refused
    assert refused.failure_class == "too_long" and not refused.retryable, refused


async def test_closing_the_stream_stops_the_generation(endless_model: Path) -> None:
    """The bridge cancels a generation by closing its stream (a stopped turn, a timeout);
    llama-server notices and frees the slot long before the answer's cap."""
    async with llama_server_on(endless_model, "--parallel", "1") as server:
        endless = ModelSettings(wire_model="tiny", max_output_tokens=6000)
        async with client(server.base_url, "llama-cpp") as the_client:
            stream = the_client.stream(request(), endless)
            async with contextlib.aclosing(stream):
                async for event in stream:
                    if isinstance(event, TextDelta):
                        break
            since = len(server.lines)
            index = await server.wait_line(
                r"stop processing: n_tokens = \d+", since=since, timeout=300
            )
        used = int(re.search(r"n_tokens = (\d+)", server.lines[index]).group(1))  # type: ignore[union-attr]
        assert used < 3000, server.output()
