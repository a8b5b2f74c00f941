"""Both SSE readers, sans I/O: every recording fed in several splits, then hostile input."""

from __future__ import annotations

import json

import pytest

from bridge.providers.chat_completions.reader import ChatCompletionsReader
from bridge.providers.errors import ProviderStreamError
from bridge.providers.events import Completed, Failed, StreamEvent
from bridge.providers.items import ApiType, Reasoning
from bridge.providers.protocols import StreamReader
from bridge.providers.responses.reader import ResponsesReader

from .provider_checks import check_events
from .provider_expectations import STREAMS, expected_for, interaction
from .provider_replay_server import sse_chunks


def new_reader(api_type: ApiType, interleaved: str | None = None) -> StreamReader:
    if api_type == "openai_chat_completions":
        return ChatCompletionsReader(interleaved_field=interleaved)
    return ResponsesReader()


def read_all(reader: StreamReader, chunks: list[bytes]) -> list[StreamEvent]:
    events: list[StreamEvent] = []
    for chunk in chunks:
        events += reader.feed(chunk)
        if reader.finished:
            return events
    return events + reader.close()


def splits(body: bytes) -> dict[str, list[bytes]]:
    return {
        "whole": [body],
        "per-event": sse_chunks(body),
        "7-bytes": [body[i : i + 7] for i in range(0, len(body), 7)],
        "ragged": _ragged(body),
    }


def _ragged(body: bytes) -> list[bytes]:
    out, position, size = [], 0, 1
    while position < len(body):
        out.append(body[position : position + size])
        position += size
        size = size * 3 % 1021 + 1
    return out


@pytest.mark.parametrize(("name", "index", "api_type"), STREAMS)
def test_recording_assembles_to_what_it_holds(name: str, index: int, api_type: ApiType) -> None:
    recorded = interaction(name, index)
    expected = expected_for(api_type, recorded.body)
    for split, chunks in splits(recorded.body).items():
        events = read_all(new_reader(api_type), chunks)
        try:
            check_events(events, expected)
        except AssertionError as exc:
            raise AssertionError(f"split {split}: {exc}") from exc


def test_responses_reasoning_taken_from_done_not_added() -> None:
    body = interaction("pydantic-ai/test_openai_responses_streaming_usage", 0).body
    added = [
        json.loads(line[5:])["item"]["encrypted_content"]
        for line in body.decode().split("\n")
        if line.startswith("data:")
        and '"response.output_item.added"' in line
        and '"reasoning"' in line
    ]
    events = read_all(ResponsesReader(), [body])
    final = events[-1]
    assert isinstance(final, Completed)
    reasoning = [i for i in final.items if isinstance(i, Reasoning)]
    assert reasoning and reasoning[0].opaque is not None
    assert added and reasoning[0].opaque["encrypted_content"] != added[0]


def test_chat_interleaved_reasoning_is_marked_for_replay() -> None:
    body = interaction("pydantic-ai/test_deepseek_model_thinking_stream", 0).body
    with_field = read_all(ChatCompletionsReader(interleaved_field="reasoning_content"), [body])
    without = read_all(ChatCompletionsReader(), [body])
    for events, opaque in ((with_field, {"field": "reasoning_content"}), (without, None)):
        final = events[-1]
        assert isinstance(final, Completed)
        reasoning = [i for i in final.items if isinstance(i, Reasoning)]
        assert len(reasoning) == 1 and reasoning[0].opaque == opaque


def test_groq_reasoning_field_is_shown_but_not_marked_for_replay() -> None:
    body = interaction("pydantic-ai/test_tool_use_failed_error_streaming", 1).body
    events = read_all(ChatCompletionsReader(interleaved_field="reasoning_content"), [body])
    final = events[-1]
    assert isinstance(final, Completed)
    reasoning = [i for i in final.items if isinstance(i, Reasoning)]
    assert reasoning[0].text and reasoning[0].opaque is None


CHAT_OK = (
    b'data: {"id":"c1","choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}\n\n'
)


@pytest.mark.parametrize(
    ("api_type", "body", "message"),
    [
        ("openai_chat_completions", CHAT_OK + b"data: {not json\n\n", "not JSON"),
        ("openai_chat_completions", CHAT_OK + b"data: [1, 2]\n\n", "not a JSON object"),
        ("openai_chat_completions", CHAT_OK, "ended before \\[DONE\\]"),
        (
            "openai_chat_completions",
            b'data: {"choices":[{"delta":{"tool_calls":[{"index":0,"function":'
            b'{"arguments":"{}"}}]}}]}\n\ndata: [DONE]\n\n',
            "never received its name",
        ),
        (
            "openai_responses",
            b'data: {"type":"response.created","response":{}}\n\n',
            "ended before",
        ),
        ("openai_responses", b"data: <html>\n\n", "not a JSON event"),
        ("openai_responses", b'data: {"no_type": 1}\n\n', "not a JSON event"),
        ("openai_responses", b'data: {"type":"response.output_item.done"}\n\n', "without an item"),
        ("openai_responses", b"data: \xff\xfe\n\n", "not a JSON event"),
    ],
)
def test_malformed_streams_raise_a_clear_stream_error(
    api_type: ApiType, body: bytes, message: str
) -> None:
    with pytest.raises(ProviderStreamError, match=message):
        read_all(new_reader(api_type), [body])


def test_chat_length_finish_is_an_incomplete_failure() -> None:
    body = (
        b'data: {"choices":[{"delta":{"content":"cut"},"finish_reason":"length"}]}\n\n'
        b"data: [DONE]\n\n"
    )
    final = read_all(ChatCompletionsReader(), [body])[-1]
    assert isinstance(final, Failed) and not final.retryable and "length" in final.reason


@pytest.mark.parametrize(
    ("body", "retryable", "text"),
    [
        (
            b'data: {"type":"response.failed","response":{"error":'
            b'{"code":"server_error","message":"boom"}}}\n\n',
            True,
            "server_error: boom",
        ),
        (
            b'data: {"type":"response.incomplete","response":{"incomplete_details":'
            b'{"reason":"max_output_tokens"}}}\n\n',
            False,
            "incomplete: max_output_tokens",
        ),
        (
            b'event: error\ndata: {"type":"error","code":"invalid_prompt","message":"no"}\n\n',
            False,
            "invalid_prompt: no",
        ),
    ],
)
def test_responses_terminal_failures(body: bytes, retryable: bool, text: str) -> None:
    events = read_all(ResponsesReader(), [body + b'data: {"type":"response.completed"}\n\n'])
    assert len(events) == 1
    final = events[0]
    assert isinstance(final, Failed) and final.retryable is retryable and text in final.reason


def test_nothing_is_read_after_the_terminal_event() -> None:
    reader = ChatCompletionsReader()
    events = reader.feed(CHAT_OK + b"data: [DONE]\n\n" + b"data: garbage\n\n")
    assert isinstance(events[-1], Completed)
    assert reader.feed(b"data: more garbage\n\n") == [] and reader.close() == []


def test_chat_tool_calls_without_index_are_told_apart_by_id() -> None:
    def chunk(fragment: dict[str, object]) -> bytes:
        delta = {"choices": [{"delta": {"tool_calls": [fragment]}}]}
        return b"data: " + json.dumps(delta).encode() + b"\n\n"

    body = b"".join(
        [
            chunk({"id": "a", "function": {"name": "look", "arguments": '{"x":'}}),
            chunk({"function": {"arguments": "1}"}}),
            chunk({"id": "b", "function": {"name": "list", "arguments": "{}"}}),
            chunk({"id": "b", "function": {"arguments": ""}}),
            b'data: {"choices":[{"delta":{},"finish_reason":"tool_calls"}]}\n\n',
            b"data: [DONE]\n\n",
        ]
    )
    final = read_all(ChatCompletionsReader(), [body])[-1]
    assert isinstance(final, Completed)
    calls = [(c.call_id, c.name, c.arguments) for c in final.items if hasattr(c, "call_id")]
    assert calls == [("a", "look", '{"x":1}'), ("b", "list", "{}")]
