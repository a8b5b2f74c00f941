"""The compatibility suite: every fixture of ``tests/providers/compat`` read by its protocol's
reader in every split, served by a real local HTTP server to the real client (also with the
body held open after the final event), and run through the real turn engine (issue 17)."""

from __future__ import annotations

import asyncio
import functools
import json

import pytest

from bridge.providers import client as client_module
from bridge.providers.client import ProviderClient
from bridge.providers.events import Completed, Failed, StreamEvent
from bridge.providers.items import ToolSpec
from bridge.providers.settings import ModelSettings, RetryPolicy
from bridge.store.audit_sink import MemoryAudit
from bridge.turns.activity import ServerActivity
from bridge.turns.engine import TurnEngine, TurnRequest
from bridge.turns.failure_lines import FAILURE_KEYS
from bridge.turns.ports import TurnLimits, TurnSnapshot
from bridge.turns.session import PublicSession
from tests.turns.fakes import STEVE, MemoryArchive, RecordingOutput, RecordingTools

from .compat_suite import FIXTURES, Fixture, check_final
from .provider_replay_server import ReplayServer, Reply
from .provider_support import make_settings
from .test_provider_readers import new_reader, read_all, splits
from .test_provider_wire import REQUEST

STREAMED = [f for f in FIXTURES if f.streams]
SERVERS = {f.server for f in FIXTURES}


def ids(fixtures: list[Fixture] | tuple[Fixture, ...]) -> list[str]:
    return [f.name for f in fixtures]


def test_every_server_family_has_fixtures() -> None:
    expected = {
        "Ollama",
        "vLLM",
        "llama.cpp server",
        "LM Studio",
        "TGI",
        "LiteLLM",
        "OpenRouter",
        "DeepSeek",
        "Groq",
    }
    assert expected <= SERVERS
    assert {f.protocol for f in FIXTURES} == {"openai_chat_completions", "openai_responses"}


@pytest.mark.parametrize("fixture", STREAMED, ids=ids(STREAMED))
def test_reader(fixture: Fixture) -> None:
    for split, chunks in splits(fixture.body).items():
        events = read_all(new_reader(fixture.protocol, fixture.interleaved), chunks)
        final = events[-1]
        assert isinstance(final, Completed | Failed), (split, final)
        check_final(fixture, final)


def reply(fixture: Fixture, *, hold_open: bool = False) -> Reply:
    return Reply(
        status=fixture.status,
        content_type=fixture.content_type,
        headers=dict(fixture.headers),
        chunks=fixture.chunks(),
        hold_open=hold_open,
    )


def model_of(fixture: Fixture) -> ModelSettings:
    return ModelSettings(wire_model="m", interleaved_field=fixture.interleaved)


async def stream_once(
    replay_server: ReplayServer, fixture: Fixture, *, until_final: bool = False
) -> list[StreamEvent]:
    settings = make_settings(fixture.protocol, replay_server.base_url, max_attempts=1)
    async with ProviderClient(settings) as client:

        async def run() -> list[StreamEvent]:
            events: list[StreamEvent] = []
            async for event in client.stream(REQUEST, model_of(fixture)):
                events.append(event)
                if until_final and isinstance(event, Completed | Failed):
                    break
            return events

        return await asyncio.wait_for(run(), timeout=30)


@pytest.mark.parametrize("fixture", FIXTURES, ids=ids(FIXTURES))
async def test_over_http(replay_server: ReplayServer, fixture: Fixture) -> None:
    replay_server.script(reply(fixture))
    events = await stream_once(replay_server, fixture)
    final = events[-1]
    assert isinstance(final, Completed | Failed)
    check_final(fixture, final)
    assert len(replay_server.requests) == 1


def ends_by_itself(fixture: Fixture) -> bool:
    """Whether the reader sees the stream's end before the body closes."""
    reader = new_reader(fixture.protocol, fixture.interleaved)
    try:
        reader.feed(fixture.body)
    except Exception:
        return False
    return reader.finished


HELD = [f for f in STREAMED if ends_by_itself(f)]


@pytest.mark.parametrize("fixture", HELD, ids=ids(HELD))
async def test_over_http_with_the_body_held_open(
    replay_server: ReplayServer, fixture: Fixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The final event reaches the caller while the server keeps the body open; the drain's
    own bound is lifted, so waiting for the body would hang the test."""
    monkeypatch.setattr(client_module, "DRAIN_TIMEOUT_S", 3600.0)
    replay_server.script(reply(fixture, hold_open=True))
    events = await stream_once(replay_server, fixture, until_final=True)
    final = events[-1]
    assert isinstance(final, Completed | Failed)
    check_final(fixture, final)


def final_answer(fixture: Fixture, text: str) -> Reply:
    """A plain answer in the fixture's protocol, to finish a turn after tools or a retry."""
    if fixture.protocol == "openai_chat_completions":
        chunks = [
            {"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]},
            {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
        ]
        body = [b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks]
        return Reply(chunks=[*body, b"data: [DONE]\n\n"])
    item = {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": text}],
    }
    events = [
        {"type": "response.output_text.delta", "delta": text},
        {"type": "response.output_item.done", "output_index": 0, "item": item},
        {"type": "response.completed", "response": {"id": "r", "status": "completed"}},
    ]
    return Reply(chunks=[b"data: " + json.dumps(e).encode() + b"\n\n" for e in events])


@pytest.mark.parametrize("fixture", FIXTURES, ids=ids(FIXTURES))
async def test_through_the_turn_engine(replay_server: ReplayServer, fixture: Fixture) -> None:
    expect = fixture.expect
    retried = expect.outcome == "failed" and bool(expect.retryable)
    follow_up = expect.outcome == "completed" and bool(expect.tool_calls)
    replay_server.script(reply(fixture))
    if retried or follow_up:
        replay_server.script(final_answer(fixture, "All done."))
    sleeps: list[float] = []

    async def record(seconds: float) -> None:
        sleeps.append(seconds)

    output, tools, archive = RecordingOutput(), RecordingTools(), MemoryArchive()
    engine = TurnEngine(
        session=PublicSession(),
        archive=archive,
        audit=MemoryAudit(),
        output=output,
        activity=ServerActivity(),
        sleep=record,
    )
    settings = make_settings(fixture.protocol, replay_server.base_url, max_attempts=1)
    names = {name for name, _ in expect.tool_calls}
    async with ProviderClient(settings) as client:
        snapshot = TurnSnapshot(
            control_version="cp-1",
            model_ref=f"compat/{fixture.name}",
            stream=functools.partial(client.stream, model=model_of(fixture)),
            tools=tuple(ToolSpec(name=n, description=n) for n in sorted(names)),
            tool_runner=tools if names else None,
            limits=TurnLimits(model_attempts=2),
            retry=RetryPolicy(max_attempts=2, initial_backoff_ms=0, max_backoff_ms=0),
        )
        task = engine.start(TurnRequest(STEVE, "hello"), snapshot)
        outcome = await asyncio.wait_for(task, timeout=30)

    if expect.outcome == "completed":
        assert outcome.status == "completed", outcome
        expected_reply = "All done." if follow_up else expect.text
        assert outcome.reply == expected_reply
        ran = [(name, json.loads(arguments)) for _, name, arguments in tools.calls]
        assert ran == list(expect.tool_calls)
        assert len(replay_server.requests) == (2 if follow_up else 1)
    elif retried:
        assert outcome.status == "completed" and outcome.reply == "All done."
        assert len(replay_server.requests) == 2
        if expect.pause is not None:
            assert sleeps == [expect.pause]
    else:
        assert outcome.status == "dropped" and len(replay_server.requests) == 1
        assert expect.failure_class is not None
        ((_, key, _),) = output.failures
        assert key == FAILURE_KEYS[expect.failure_class]  # type: ignore[index]
        assert archive.turns == []
