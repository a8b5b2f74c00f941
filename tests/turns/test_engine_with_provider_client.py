"""The engine driving the real provider client (Chat Completions SSE over httpx.MockTransport).

This checks the seam the lead wires: a `ModelStream` is the client's ``stream`` bound to one
model, and the turn's attempts sit on top of the client's own pre-stream retries.
"""

from __future__ import annotations

import functools
import json

import httpx
from pydantic import SecretStr

from bridge.providers.client import ProviderClient
from bridge.providers.items import ToolCall, ToolResult
from bridge.providers.settings import ModelSettings, ProviderSettings, RetryPolicy
from bridge.turns.ports import TurnLimits, TurnSnapshot

from .conftest import LOOK, Harness
from .fakes import STEVE, RecordingTools


def sse(*payloads: object) -> bytes:
    lines = [f"data: {json.dumps(p)}\n\n" for p in payloads]
    return ("".join(lines) + "data: [DONE]\n\n").encode()


TOOL_CALL = sse(
    {
        "choices": [
            {
                "delta": {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": "call_1",
                            "type": "function",
                            "function": {"name": "look", "arguments": "{}"},
                        }
                    ]
                },
                "finish_reason": None,
            }
        ]
    },
    {"choices": [{"delta": {}, "finish_reason": "tool_calls"}]},
)
ANSWER = sse(
    {"choices": [{"delta": {"content": "You look at "}, "finish_reason": None}]},
    {"choices": [{"delta": {"content": "stone."}, "finish_reason": "stop"}]},
)


def client(handler: httpx.MockTransport) -> ProviderClient:
    settings = ProviderSettings(
        provider_id="local",
        api_type="openai_chat_completions",
        base_url="http://provider.test/v1",
        api_key=SecretStr("sk-test-key"),
        # One HTTP attempt per stream: the turn's three attempts are the only retries here.
        retry=RetryPolicy(max_attempts=1),
    )
    return ProviderClient(settings, transport=handler)


def snapshot(provider: ProviderClient, tools: RecordingTools | None = None) -> TurnSnapshot:
    return TurnSnapshot(
        control_version="cp-1",
        model_ref="local/m",
        stream=functools.partial(provider.stream, model=ModelSettings(wire_model="m")),
        instructions="You are Mineclaw.",
        tools=(LOOK,) if tools else (),
        tool_runner=tools,
        limits=TurnLimits(),
    )


async def test_tool_round_and_answer_through_the_real_client(harness: Harness) -> None:
    bodies: list[dict[str, object]] = []
    responses = [TOOL_CALL, ANSWER]

    def handler(request: httpx.Request) -> httpx.Response:
        bodies.append(json.loads(request.content))
        content = responses.pop(0)
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=content)

    tools = RecordingTools()
    async with client(httpx.MockTransport(handler)) as provider:
        outcome = await harness.run(snapshot(provider, tools), "what am I looking at")
    assert outcome.reply == "You look at stone."
    assert [name for _, name, _ in tools.calls] == ["look"]
    items = harness.session.state.turns[0].items
    assert items[1] == ToolCall(call_id="call_1", name="look", arguments="{}")
    assert items[2] == ToolResult(call_id="call_1", output="ran look {}")
    roles = [m["role"] for m in bodies[1]["messages"]]  # type: ignore[index]
    assert roles == ["system", "user", "assistant", "tool"]
    assert "tools" in bodies[0] and "sk-test-key" not in json.dumps(bodies)


async def test_three_server_errors_drop_the_turn(harness: Harness) -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(503, json={"error": {"code": "overloaded", "message": "busy"}})

    async with client(httpx.MockTransport(handler)) as provider:
        outcome = await harness.run(snapshot(provider))
    assert outcome.status == "dropped" and "503" in (outcome.reason or "")
    assert len(seen) == 3
    assert harness.session.state.turns == () and harness.archive.turns == []
    # The player gets the busy line in the bridge's words, never the provider's "busy".
    assert harness.output.failures == [
        (STEVE.uuid, "errors.provider_busy", {"reason": "the model provider is busy"})
    ]
