"""Request builders of both protocols, every body checked against the official schema."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bridge.providers.chat_completions.request import build_body as chat_body
from bridge.providers.identity import IdentitySettings
from bridge.providers.items import (
    AssistantText,
    Item,
    PlayerMessage,
    ProviderRequest,
    Reasoning,
    ToolCall,
    ToolResult,
    ToolSpec,
)
from bridge.providers.responses.request import build_body as responses_body
from bridge.providers.settings import ModelSettings

from .provider_replay_server import load_recording, recordings_dir
from .provider_support import BodyValidator

WEATHER = ToolSpec(
    name="get_weather",
    description="Weather at the player",
    parameters={
        "type": "object",
        "properties": {"detail": {"type": "string"}},
        "required": ["detail"],
        "additionalProperties": False,
    },
    strict=True,
)
LOOSE = ToolSpec(name="look_at_block", description="", strict=False)
# Provider-native tools, one valid for each protocol's schema; both must pass through verbatim.
WEB_SEARCH = {"type": "web_search", "search_context_size": "low"}
CUSTOM_GRAMMAR = {"type": "custom", "custom": {"name": "sql", "description": "free text"}}

RESPONSES_REASONING = Reasoning(
    protocol="openai_responses",
    text="thinking about weather",
    opaque={
        "type": "reasoning",
        "id": "rs_1",
        "status": "completed",
        "summary": [{"type": "summary_text", "text": "thinking about weather"}],
        "encrypted_content": "gAAA-opaque",
    },
)
CHAT_REASONING = Reasoning(
    protocol="openai_chat_completions",
    text="hmm, weather",
    opaque={"field": "reasoning_content"},
)

CONVERSATION: tuple[Item, ...] = (
    PlayerMessage(player="Steve", text="what's the weather?"),
    RESPONSES_REASONING,
    CHAT_REASONING,
    ToolCall(call_id="call_1", name="get_weather", arguments='{"detail":"short"}'),
    ToolResult(call_id="call_1", output="sunny"),
    AssistantText(text="It is sunny."),
    PlayerMessage(player="Alex", text="thanks"),
)


def request(
    items: tuple[Item, ...] = CONVERSATION, *, native: dict[str, Any] = WEB_SEARCH, **kwargs: Any
) -> ProviderRequest:
    return ProviderRequest(
        session_id="session-42",
        instructions="You live in a Minecraft server.",
        items=items,
        tools=(WEATHER, LOOSE),
        native_tools=(native,),
        **kwargs,
    )


MODEL = ModelSettings(wire_model="gpt-test", max_output_tokens=512)
IDENTITY = IdentitySettings()


def test_chat_body_shape(validate_body: BodyValidator) -> None:
    body = chat_body(request(native=CUSTOM_GRAMMAR, parallel_tool_calls=False), MODEL, IDENTITY)
    validate_body("openai_chat_completions", body)
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["max_completion_tokens"] == 512
    assert body["tool_choice"] == "auto" and body["parallel_tool_calls"] is False
    assert body["tools"][0] == {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Weather at the player",
            "parameters": WEATHER.parameters,
            "strict": True,
        },
    }
    assert body["tools"][1]["function"]["strict"] is False
    assert body["tools"][2] == CUSTOM_GRAMMAR
    roles = [m["role"] for m in body["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "assistant", "user"]
    call_message = body["messages"][2]
    assert call_message["content"] is None
    assert call_message["tool_calls"] == [
        {
            "id": "call_1",
            "type": "function",
            "function": {"name": "get_weather", "arguments": '{"detail":"short"}'},
        }
    ]
    assert "reasoning_content" not in call_message
    assert body["messages"][3] == {"role": "tool", "tool_call_id": "call_1", "content": "sunny"}
    assert "prompt_cache_key" not in body


def test_chat_interleaved_reasoning_is_replayed_only_with_the_field(
    validate_body: BodyValidator,
) -> None:
    interleaved = ModelSettings(wire_model="deepseek", interleaved_field="reasoning_content")
    body = chat_body(request(native=CUSTOM_GRAMMAR), interleaved, IDENTITY)
    validate_body("openai_chat_completions", body)
    assert body["messages"][2]["reasoning_content"] == "hmm, weather"
    # Reasoning from the Responses protocol never leaks into this one.
    assert "thinking about weather" not in json.dumps(body)
    plain = chat_body(request(), MODEL, IDENTITY)
    assert "hmm, weather" not in json.dumps(plain)


def test_chat_reasoning_from_another_field_is_not_replayed() -> None:
    groq_reasoning = Reasoning(protocol="openai_chat_completions", text="groq thoughts")
    items = (
        PlayerMessage(player="Steve", text="hi"),
        groq_reasoning,
        AssistantText(text="hello"),
    )
    interleaved = ModelSettings(wire_model="m", interleaved_field="reasoning_content")
    body = chat_body(request(items), interleaved, IDENTITY)
    assert "groq thoughts" not in json.dumps(body)


def test_responses_body_shape(validate_body: BodyValidator) -> None:
    body = responses_body(request(tool_choice="required"), MODEL, IDENTITY)
    validate_body("openai_responses", body)
    assert body["store"] is False and body["stream"] is True
    assert body["include"] == ["reasoning.encrypted_content"]
    assert body["max_output_tokens"] == 512
    assert body["instructions"] == "You live in a Minecraft server."
    assert "previous_response_id" not in body and "conversation" not in body
    assert body["tools"][0] == {
        "type": "function",
        "name": "get_weather",
        "description": "Weather at the player",
        "parameters": WEATHER.parameters,
        "strict": True,
    }
    assert body["tools"][1]["strict"] is False
    assert body["tools"][2] == WEB_SEARCH
    assert body["tool_choice"] == "required"
    assert body["input"] == [
        {
            "role": "user",
            "content": "<player>Steve</player>\n<message>what's the weather?</message>",
        },
        {
            "type": "reasoning",
            "id": "rs_1",
            "summary": [{"type": "summary_text", "text": "thinking about weather"}],
            "encrypted_content": "gAAA-opaque",
        },
        {
            "type": "function_call",
            "call_id": "call_1",
            "name": "get_weather",
            "arguments": '{"detail":"short"}',
        },
        {"type": "function_call_output", "call_id": "call_1", "output": "sunny"},
        {"role": "assistant", "content": "It is sunny."},
        {"role": "user", "content": "<player>Alex</player>\n<message>thanks</message>"},
    ]


def test_responses_reasoning_dropped_when_what_it_preceded_is_dropped(
    validate_body: BodyValidator,
) -> None:
    # The call never got an output (the turn was cut): neither it nor its reasoning goes back.
    items: tuple[Item, ...] = (
        PlayerMessage(player="Steve", text="go"),
        RESPONSES_REASONING,
        ToolCall(call_id="call_lost", name="get_weather", arguments="{}"),
        PlayerMessage(player="Steve", text="again"),
        ToolResult(call_id="orphan", output="no call for this"),
        RESPONSES_REASONING,
    )
    body = responses_body(request(items), MODEL, IDENTITY)
    validate_body("openai_responses", body)
    kinds = [entry.get("type", entry.get("role")) for entry in body["input"]]
    assert kinds == ["user", "user"]


def test_responses_reasoning_without_encrypted_content_is_not_replayed() -> None:
    bare = Reasoning(protocol="openai_responses", text="t", opaque={"type": "reasoning", "id": "x"})
    items = (PlayerMessage(player="S", text="a"), bare, AssistantText(text="b"))
    body = responses_body(request(items), MODEL, IDENTITY)
    assert [e.get("type", e.get("role")) for e in body["input"]] == ["user", "assistant"]


def test_chat_drops_unanswered_tool_calls(validate_body: BodyValidator) -> None:
    items: tuple[Item, ...] = (
        PlayerMessage(player="Steve", text="go"),
        ToolCall(call_id="call_lost", name="get_weather", arguments="{}"),
        PlayerMessage(player="Steve", text="again"),
    )
    body = chat_body(request(items, native=CUSTOM_GRAMMAR), MODEL, IDENTITY)
    validate_body("openai_chat_completions", body)
    assert [m["role"] for m in body["messages"]] == ["system", "user", "user"]


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_extra_body_cannot_override_protocol_keys(api: str, validate_body: BodyValidator) -> None:
    model = ModelSettings(
        wire_model="m",
        prompt_cache_key=True,
        extra_body={
            "store": True,
            "stream": False,
            "previous_response_id": "resp_x",
            "model": "other",
            "temperature": 0.25,
        },
    )
    if api == "chat":
        body = chat_body(request(native=CUSTOM_GRAMMAR), model, IDENTITY)
        validate_body("openai_chat_completions", body)
    else:
        body = responses_body(request(), model, IDENTITY)
        validate_body("openai_responses", body)
        assert body["store"] is False and "previous_response_id" not in body
    assert body["stream"] is True and body["model"] == "m"
    assert body["temperature"] == 0.25
    assert body["prompt_cache_key"] == "session-42"


def test_no_tools_means_no_tool_choice(validate_body: BodyValidator) -> None:
    bare = ProviderRequest(session_id="s", items=(PlayerMessage(player=None, text="hi"),))
    for build, api in (
        (chat_body, "openai_chat_completions"),
        (responses_body, "openai_responses"),
    ):
        body = build(bare, MODEL, IDENTITY)
        validate_body(api, body)  # type: ignore[arg-type]
        assert "tools" not in body and "tool_choice" not in body


def test_chat_replay_matches_the_recorded_second_request(validate_body: BodyValidator) -> None:
    """The recording's second request replays the first answer; ours must say the same."""
    first, second = load_recording(
        recordings_dir() / "pydantic-ai/test_run_stream_sync_streams_real_model.yaml"
    )
    recorded = second.request_body["messages"]
    call = recorded[1]["tool_calls"][0]
    items = (
        PlayerMessage(player=None, text=recorded[0]["content"]),
        ToolCall(
            call_id=call["id"],
            name=call["function"]["name"],
            arguments=call["function"]["arguments"],
        ),
        ToolResult(call_id=recorded[2]["tool_call_id"], output=recorded[2]["content"]),
    )
    body = chat_body(ProviderRequest(session_id="s", items=items), MODEL, IDENTITY)
    validate_body("openai_chat_completions", body)
    assert body["messages"] == recorded


def test_responses_replay_matches_the_recorded_second_request(
    validate_body: BodyValidator,
) -> None:
    first, second = load_recording(recordings_dir() / "llm/test_responses_tool_use_streaming.yaml")
    recorded = second.request_body["input"]
    items = (
        PlayerMessage(player=None, text=recorded[0]["content"]),
        ToolCall(
            call_id=recorded[1]["call_id"],
            name=recorded[1]["name"],
            arguments=recorded[1]["arguments"],
        ),
        ToolResult(call_id=recorded[2]["call_id"], output=recorded[2]["output"]),
    )
    body = responses_body(ProviderRequest(session_id="s", items=items), MODEL, IDENTITY)
    validate_body("openai_responses", body)
    assert body["input"] == recorded
    # The recorded client left ``strict`` out of its tool, which the schema requires: the
    # validator notices, and this is why the builder always writes it.
    with pytest.raises(AssertionError, match="tools/0"):
        validate_body("openai_responses", second.request_body)
