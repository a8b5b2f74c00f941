"""The provider client against llama-cpp-python's real server (``llama_cpp.server`` with its
function-calling chat format) and a tiny random-weight model: shapes and outcomes, never words.

These are the findings of issue 28 as they happen on the real server: a tool round replayed
with ``content: null`` is refused (HTTP 500), usage is never reported, concurrent streams may
end with only the role chunk, and a server killed mid-answer breaks the stream."""

from __future__ import annotations

import asyncio
import contextlib
import json
from pathlib import Path

from bridge.providers.client import EMPTY_TOOL_STREAM
from bridge.providers.events import Completed, Failed, TextDelta
from bridge.providers.items import AssistantText, PlayerMessage, ToolCall, ToolResult
from bridge.providers.probe import probe
from bridge.providers.settings import ModelSettings
from tests.interaction.processes import free_port
from tests.providers.provider_support import make_settings

from .model_servers import (
    LLAMA_CPP_PYTHON_READY,
    ModelServer,
    llama_cpp_python,
    llama_cpp_python_command,
    running,
)
from .wire_support import ONLINE, STREAM_TIMEOUT_S, client, events_of, final, request, shown

MODEL = ModelSettings(wire_model="tiny", max_output_tokens=64)
FORCED = ModelSettings(wire_model="tiny", max_output_tokens=64, tool_choice="online_players")


async def test_a_text_answer_completes_with_usage_estimated(lcp_server: ModelServer) -> None:
    async with client(lcp_server.base_url, "llama-cpp-python") as the_client:
        events = await events_of(the_client, request(), MODEL)
    answer = final(events)
    assert isinstance(answer, Completed), answer
    texts = [item.text for item in answer.items if isinstance(item, AssistantText)]
    assert len(texts) == 1 and texts[0].strip()
    assert shown(events) == texts[0]
    assert answer.finish_reason == "stop"
    assert answer.usage is not None and answer.usage.estimated
    assert answer.usage.input_tokens > 0 and answer.usage.output_tokens > 0


async def tool_round(server: ModelServer, compat: str) -> Completed | Failed:
    """A forced call, its result, and the request that replays them."""
    async with client(server.base_url, compat) as the_client:
        asked = request(tools=(ONLINE,))
        first = final(await events_of(the_client, asked, FORCED))
        assert isinstance(first, Completed), first
        calls = [item for item in first.items if isinstance(item, ToolCall)]
        assert [call.name for call in calls] == ["online_players"]
        assert json.loads(calls[0].arguments) == {}  # grammar-forced: valid with random weights
        result = ToolResult(call_id=calls[0].call_id, output='{"players": ["Steve"]}')
        follow_up = request(*asked.items, *first.items, result, tools=(ONLINE,))
        return final(await events_of(the_client, follow_up, FORCED))


async def test_a_tool_round_replays_content_as_the_server_needs(lcp_server: ModelServer) -> None:
    answer = await tool_round(lcp_server, "llama-cpp-python")
    assert isinstance(answer, Completed), answer
    assert [type(item) for item in answer.items] == [AssistantText]


async def test_auto_learns_the_replay_shape_from_the_refusal(lcp_server: ModelServer) -> None:
    """First contact without ``compat``: the 500 to ``content: null`` switches to ``""``."""
    answer = await tool_round(lcp_server, "auto")
    assert isinstance(answer, Completed), answer


async def test_the_openai_shape_of_the_same_round_is_refused(lcp_server: ModelServer) -> None:
    """What issue 28 saw: ``content: null`` on the replayed call gets HTTP 500."""
    refused = await tool_round(lcp_server, "openai")
    assert isinstance(refused, Failed), refused
    assert "HTTP 500" in refused.reason


async def test_concurrent_streams_answer_or_fail_retryably_never_empty(
    lcp_server: ModelServer,
) -> None:
    async def one() -> Completed | Failed:
        async with client(lcp_server.base_url, "llama-cpp-python") as the_client:
            return final(await events_of(the_client, request(), MODEL))

    outcomes = await asyncio.gather(*(one() for _ in range(4)))
    for outcome in outcomes:
        if isinstance(outcome, Completed):
            assert any(isinstance(item, AssistantText) and item.text for item in outcome.items)
        else:
            assert outcome.retryable, outcome
    assert any(isinstance(outcome, Completed) for outcome in outcomes)


async def test_a_server_killed_mid_answer_breaks_the_stream(endless_model: Path) -> None:
    python = llama_cpp_python()
    assert python is not None
    port = free_port()
    command = llama_cpp_python_command(python, endless_model, port)
    async with running("llama-cpp-python", command, port, LLAMA_CPP_PYTHON_READY) as server:
        endless = ModelSettings(wire_model="tiny", max_output_tokens=4000)
        async with client(server.base_url, "llama-cpp-python") as the_client:
            stream = the_client.stream(request(), endless)
            async with contextlib.aclosing(stream):
                async with asyncio.timeout(STREAM_TIMEOUT_S):
                    async for event in stream:
                        if isinstance(event, TextDelta):
                            break
                    await server.kill()
                    rest = [event async for event in stream]
    outcome = rest[-1]
    assert isinstance(outcome, Failed) and outcome.retryable, rest
    assert outcome.failure_class in ("broken", "busy"), outcome


async def test_a_prompt_past_the_context_ends_the_stream_empty(lcp_server: ModelServer) -> None:
    """Streaming, llama-cpp-python raises its "exceed context window" inside the stream and
    ends the body without a word: a broken stream to the client (so retried, never compacted;
    docs/providers.md). llama-server says it with a status (test_llama_server_wire)."""
    long = request(PlayerMessage(player="Steve", text="a" * 12_000))
    async with client(lcp_server.base_url, "llama-cpp-python") as the_client:
        refused = final(await events_of(the_client, long, MODEL))
    assert isinstance(refused, Failed), refused
    assert refused.failure_class == "broken" and refused.retryable, refused


def test_no_player_message_is_needed_to_shape_a_request() -> None:
    """The helper's default request is one player's message (the tests above rely on it)."""
    items = request().items
    assert isinstance(items[0], PlayerMessage)


async def test_a_tool_the_model_chose_under_auto_is_an_empty_stream_named_as_such(
    lcp_server: ModelServer,
) -> None:
    """The real server raises "Automatic streaming tool choice is not supported" after its 200
    headers when the (tiny, deterministic) model picks a tool: the failure says so and is not
    retried; under ``compat: auto`` the retried failure names the likely cause."""
    chooses = ModelSettings(wire_model="tiny", max_output_tokens=64, tool_choice="auto")
    async with client(lcp_server.base_url, "llama-cpp-python") as the_client:
        known = final(await events_of(the_client, request(tools=(ONLINE,)), chooses))
    assert isinstance(known, Failed) and known.reason == EMPTY_TOOL_STREAM, known
    assert not known.retryable and known.failure_class == "misconfigured"
    async with client(lcp_server.base_url, "auto") as the_client:
        unknown = final(await events_of(the_client, request(tools=(ONLINE,)), chooses))
    assert isinstance(unknown, Failed) and unknown.retryable
    assert "llama-cpp-python answers so when its model picks a tool" in unknown.reason


async def test_the_status_probe_finds_the_real_server_reachable(lcp_server: ModelServer) -> None:
    settings = make_settings("openai_chat_completions", lcp_server.base_url)
    assert await probe(settings) == "reachable"
