"""Per-server compatibility (issue 28): what is replayed and sent per ``compat`` family, tool
calls written as text never shown, usage estimated where none is reported, a history that
cannot be encoded as it is, and what ``auto`` detects. Every request goes to a real local
HTTP server and is read back as the server received it."""

from __future__ import annotations

import asyncio
import json
from typing import Any, get_args

import pytest
from pydantic import SecretStr

from bridge.control.providers import CompatName as ConfigCompatName
from bridge.control.providers import ModelConfig
from bridge.providers.client import ProviderClient
from bridge.providers.compat import COMPAT, COMPAT_NAMES, compat_for_url
from bridge.providers.events import Completed, Failed, StreamEvent, TextDelta
from bridge.providers.items import (
    AssistantText,
    PlayerMessage,
    ProviderRequest,
    ToolCall,
    ToolResult,
    ToolSpec,
)
from bridge.providers.settings import ModelSettings, ProviderSettings

from .compat_suite import COMPAT_DIR
from .provider_replay_server import ReplayServer, Reply
from .provider_support import make_settings

TOOL = ToolSpec(name="block_inspect", description="look at a block")
CALL = ToolCall(call_id="c1", name="block_inspect", arguments='{"x":1}')
TOOL_ROUND = (
    PlayerMessage(player="Steve", text="what is below me?"),
    CALL,
    ToolResult(call_id="c1", output="stone"),
)


def answer(*texts: str, usage: bool = True) -> Reply:
    """A streamed answer, one chunk per text (``ok`` without any)."""
    chunks: list[dict[str, Any]] = [
        {"choices": [{"index": 0, "delta": {"role": "assistant"}, "finish_reason": None}]},
        *(
            {"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]}
            for text in texts or ("ok",)
        ),
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
    ]
    if usage:
        chunks.append({"choices": [], "usage": {"prompt_tokens": 7, "completion_tokens": 2}})
    body = [b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks]
    return Reply(chunks=[*body, b"data: [DONE]\n\n"])


def fixture_reply(name: str) -> Reply:
    raw = (COMPAT_DIR / f"{name}.yaml").read_text(encoding="utf-8")
    body = raw.split("body: |+\n", 1)[1]
    lines = "".join(line[2:] if line.startswith("  ") else line for line in body.splitlines(True))
    return Reply(chunks=[part + b"\n\n" for part in lines.encode().split(b"\n\n") if part.strip()])


async def send(
    server: ReplayServer,
    request: ProviderRequest,
    model: ModelSettings,
    *,
    compat: str = "auto",
    base_url: str | None = None,
) -> list[StreamEvent]:
    settings = make_settings(
        "openai_chat_completions", base_url or server.base_url, max_attempts=1, compat=compat
    )
    async with ProviderClient(settings) as client:

        async def run() -> list[StreamEvent]:
            return [event async for event in client.stream(request, model)]

        return await asyncio.wait_for(run(), timeout=30)


def sent_assistant(server: ReplayServer) -> dict[str, Any]:
    messages = server.requests[-1].json()["messages"]
    return next(m for m in messages if m["role"] == "assistant")


@pytest.mark.parametrize(
    ("compat", "content"),
    [("llama-cpp-python", ""), ("ollama", ""), ("openai", None), ("auto", None)],
)
async def test_tool_replay_content_follows_the_server_family(
    replay_server: ReplayServer, compat: str, content: str | None
) -> None:
    replay_server.script(answer())
    request = ProviderRequest(session_id="s", items=TOOL_ROUND, tools=(TOOL,))
    await send(replay_server, request, ModelSettings(wire_model="m"), compat=compat)
    message = sent_assistant(replay_server)
    assert "content" in message and message["content"] == content
    assert message["tool_calls"][0]["function"]["name"] == "block_inspect"


async def test_fields_the_server_put_on_a_call_are_sent_back(replay_server: ReplayServer) -> None:
    """Gemini's thought signature rides on the tool call; the follow-up carries it unchanged."""
    replay_server.script(fixture_reply("gemini-thought-signature-extra-content"), answer())
    model = ModelSettings(wire_model="gemini-3-flash")
    first = ProviderRequest(
        session_id="s", items=(PlayerMessage(player="Steve", text="look"),), tools=(TOOL,)
    )
    events = await send(replay_server, first, model, compat="gemini")
    final = events[-1]
    assert isinstance(final, Completed)
    calls = [item for item in final.items if isinstance(item, ToolCall)]
    follow_up = ProviderRequest(
        session_id="s",
        items=(*first.items, *calls, ToolResult(call_id=calls[0].call_id, output="stone")),
        tools=(TOOL,),
    )
    await send(replay_server, follow_up, model, compat="gemini")
    call = sent_assistant(replay_server)["tool_calls"][0]
    assert call["extra_content"] == {"google": {"thought_signature": "CvYBAY89a1+sig/2=="}}
    assert call["id"] == "function-call-7712" and call["type"] == "function"


@pytest.mark.parametrize(
    ("setting", "items", "expected"),
    [
        ("auto", TOOL_ROUND[:1], "auto"),
        ("required", TOOL_ROUND[:1], "required"),
        ("required", TOOL_ROUND, "auto"),  # after tool results the model may answer in words
        ("omit", TOOL_ROUND[:1], None),
        (
            "block_inspect",
            TOOL_ROUND[:1],
            {"type": "function", "function": {"name": "block_inspect"}},
        ),
        ("block_inspect", TOOL_ROUND, "none"),  # the forced tool ran: now the answer
        ("not_offered", TOOL_ROUND[:1], "auto"),
    ],
)
async def test_the_owner_sets_tool_choice_per_model(
    replay_server: ReplayServer, setting: Any, items: Any, expected: Any
) -> None:
    replay_server.script(answer())
    request = ProviderRequest(session_id="s", items=items, tools=(TOOL,))
    await send(replay_server, request, ModelSettings(wire_model="m", tool_choice=setting))
    body = replay_server.requests[-1].json()
    assert body.get("tool_choice") == expected
    assert body["tools"][0]["function"]["name"] == "block_inspect"


async def test_the_turns_none_wins_over_the_owners_required(replay_server: ReplayServer) -> None:
    replay_server.script(answer())
    request = ProviderRequest(
        session_id="s", items=TOOL_ROUND[:1], tools=(TOOL,), tool_choice="none"
    )
    await send(replay_server, request, ModelSettings(wire_model="m", tool_choice="required"))
    assert replay_server.requests[-1].json()["tool_choice"] == "none"


def test_tool_choice_is_a_model_setting_and_extra_body_still_refuses_it() -> None:
    limits = {"context_window": 4096, "max_output_tokens": 256}
    model = ModelConfig.model_validate({"limits": limits, "request": {"tool_choice": "omit"}})
    assert model.request.tool_choice == "omit"
    with pytest.raises(ValueError, match="tool_choice"):
        ModelConfig.model_validate({"limits": limits, "request": {"tool_choice": "two words"}})
    with pytest.raises(ValueError, match="managed fields: tool_choice"):
        ModelConfig.model_validate(
            {"limits": limits, "request": {"extra_body": {"tool_choice": "required"}}}
        )


@pytest.mark.parametrize(
    "fixture", ["llamacpp-python-functions-text", "hermes-tool-call-tags-as-text"]
)
async def test_a_tool_call_written_as_text_is_never_shown(
    replay_server: ReplayServer, fixture: str
) -> None:
    replay_server.script(fixture_reply(fixture))
    request = ProviderRequest(session_id="s", items=TOOL_ROUND[:1], tools=(TOOL,))
    events = await send(replay_server, request, ModelSettings(wire_model="m"))
    shown = "".join(event.text for event in events if isinstance(event, TextDelta))
    assert shown == ""
    final = events[-1]
    assert isinstance(final, Completed)
    assert not [item for item in final.items if isinstance(item, AssistantText)]
    assert [item.name for item in final.items if isinstance(item, ToolCall)][0] == "block_inspect"


async def test_prose_that_only_starts_like_a_marker_is_shown_whole(
    replay_server: ReplayServer,
) -> None:
    """Held back while it could still be ``functions.``, released as soon as it cannot."""
    replay_server.script(answer("func", "tions", " are what I do"))
    events = await send(
        replay_server,
        ProviderRequest(session_id="s", items=TOOL_ROUND[:1]),
        ModelSettings(wire_model="m"),
    )
    shown = "".join(event.text for event in events if isinstance(event, TextDelta))
    assert shown == "functions are what I do"
    final = events[-1]
    assert isinstance(final, Completed)
    assert final.items == (AssistantText(text="functions are what I do"),)


async def test_the_openai_family_shows_text_as_written(replay_server: ReplayServer) -> None:
    replay_server.script(answer("functions.are: fun"))
    events = await send(
        replay_server,
        ProviderRequest(session_id="s", items=TOOL_ROUND[:1]),
        ModelSettings(wire_model="m"),
        compat="openai",
    )
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "functions.are: fun"


async def test_usage_is_estimated_and_marked_when_the_server_reports_none(
    replay_server: ReplayServer,
) -> None:
    replay_server.script(answer("twelve chars", usage=False), answer())
    request = ProviderRequest(session_id="s", items=TOOL_ROUND[:1])
    model = ModelSettings(wire_model="m")
    estimated = (await send(replay_server, request, model, compat="llama-cpp-python"))[-1]
    assert isinstance(estimated, Completed) and estimated.usage is not None
    assert estimated.usage.estimated
    sent = len(replay_server.requests[-1].body)
    assert estimated.usage.input_tokens == -(-sent // 4)
    assert estimated.usage.output_tokens == 3
    assert "stream_options" not in replay_server.requests[-1].json()
    reported = (await send(replay_server, request, model))[-1]
    assert isinstance(reported, Completed) and reported.usage is not None
    assert not reported.usage.estimated and reported.usage.input_tokens == 7
    assert replay_server.requests[-1].json()["stream_options"] == {"include_usage": True}


async def test_a_lone_surrogate_in_the_history_is_sent_as_a_replacement(
    replay_server: ReplayServer,
) -> None:
    replay_server.script(answer())
    request = ProviderRequest(
        session_id="s", items=(PlayerMessage(player="Steve", text="half \ud83d of a smile"),)
    )
    events = await send(replay_server, request, ModelSettings(wire_model="m"))
    assert isinstance(events[-1], Completed)
    user = replay_server.requests[-1].json()["messages"][-1]
    assert "half \ufffd of a smile" in json.dumps(user, ensure_ascii=False)


async def test_auto_follows_the_server_header(replay_server: ReplayServer) -> None:
    reply = answer()
    reply.headers["server"] = "llama.cpp"
    replay_server.script(reply)
    settings = make_settings("openai_chat_completions", replay_server.base_url, max_attempts=1)
    async with ProviderClient(settings) as client:
        assert client.compat.name == "auto"
        request = ProviderRequest(session_id="s", items=TOOL_ROUND[:1])
        events = [e async for e in client.stream(request, ModelSettings(wire_model="m"))]
        assert isinstance(events[-1], Completed)
        assert client.compat.name == "llama-cpp"


def test_auto_knows_families_by_their_url() -> None:
    assert compat_for_url("https://generativelanguage.googleapis.com/v1beta/openai") == "gemini"
    assert compat_for_url("http://127.0.0.1:11434/v1") == "ollama"
    assert compat_for_url("http://127.0.0.1:8080/v1") is None


def test_the_control_plane_names_the_same_families() -> None:
    assert set(get_args(ConfigCompatName)) == set(COMPAT_NAMES) == set(COMPAT)


async def test_role_then_done_is_retried_by_the_client_never_read_as_an_answer(
    replay_server: ReplayServer,
) -> None:
    replay_server.script(fixture_reply("llamacpp-python-role-then-done"))
    events = await send(
        replay_server,
        ProviderRequest(session_id="s", items=TOOL_ROUND[:1]),
        ModelSettings(wire_model="m"),
    )
    final = events[-1]
    assert isinstance(final, Failed) and final.retryable and final.failure_class == "broken"


async def test_a_provider_without_a_key_sends_no_authorization(replay_server: ReplayServer) -> None:
    """A local server needs no key; "Bearer " alone is an invalid header the HTTP client
    refuses, which failed every turn as a broken connection (found on the real server)."""
    replay_server.script(answer())
    settings = ProviderSettings(
        provider_id="local",
        api_type="openai_chat_completions",
        base_url=replay_server.base_url,
        api_key=SecretStr(""),
    )
    async with ProviderClient(settings) as client:
        request = ProviderRequest(session_id="s", items=TOOL_ROUND[:1])
        events = [e async for e in client.stream(request, ModelSettings(wire_model="m"))]
    assert isinstance(events[-1], Completed), events[-1]
    assert "authorization" not in replay_server.requests[-1].headers


async def test_auto_sends_empty_content_after_a_refusal_of_null(
    replay_server: ReplayServer,
) -> None:
    """llama-cpp-python names itself nowhere; its HTTP 500 to ``content: null`` on a replayed
    call is what tells ``auto``: the same request goes again with ``""`` (not an attempt), and
    later requests keep that shape."""
    refusal = Reply(
        status=500,
        content_type="application/json",
        chunks=[b'{"error": {"message": "validation error", "type": "internal_server_error"}}'],
    )
    replay_server.script(refusal, answer(), answer())
    request = ProviderRequest(session_id="s", items=TOOL_ROUND, tools=(TOOL,))
    settings = make_settings("openai_chat_completions", replay_server.base_url, max_attempts=1)
    async with ProviderClient(settings) as client:
        for _ in range(2):
            events = [e async for e in client.stream(request, ModelSettings(wire_model="m"))]
            assert isinstance(events[-1], Completed), events[-1]
    contents = [
        next(m for m in r.json()["messages"] if m["role"] == "assistant")["content"]
        for r in replay_server.requests
    ]
    assert contents == [None, "", ""]


async def test_a_refusal_without_a_null_replay_is_not_sent_again(
    replay_server: ReplayServer,
) -> None:
    refusal = Reply(status=500, content_type="application/json", chunks=[b'{"error": "x"}'])
    replay_server.script(refusal)
    events = await send(
        replay_server,
        ProviderRequest(session_id="s", items=TOOL_ROUND[:1]),
        ModelSettings(wire_model="m"),
    )
    assert isinstance(events[-1], Failed) and len(replay_server.requests) == 1
