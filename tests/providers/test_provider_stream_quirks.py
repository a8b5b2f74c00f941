"""Stream shapes of OpenAI-compatible servers other than OpenAI's own, read sans I/O.

Each test is one finding of issue 17; the compatibility suite (``tests/providers/compat``)
replays whole streams of each server family over HTTP and through the turn engine.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from bridge.control.providers import InterleavedConfig
from bridge.providers.chat_completions.reader import ChatCompletionsReader
from bridge.providers.errors import ProviderStreamError
from bridge.providers.events import (
    Completed,
    Failed,
    StreamEvent,
    ToolCallArgumentsDelta,
    ToolCallBegun,
)
from bridge.providers.items import ApiType, Reasoning, ToolCall
from bridge.providers.responses.reader import ResponsesReader
from bridge.providers.sse import SSEDecoder

from .test_provider_readers import new_reader, read_all, splits


def chat(*chunks: dict[str, Any], done: bool = True) -> bytes:
    body = b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks)
    return body + (b"data: [DONE]\n\n" if done else b"")


def item_done(item: dict[str, Any]) -> bytes:
    event = {"type": "response.output_item.done", "output_index": 0, "item": item}
    return b"data: " + json.dumps(event).encode() + b"\n\n"


def delta(**fields: Any) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": fields, "finish_reason": None}]}


def finish(reason: str = "tool_calls") -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": {}, "finish_reason": reason}]}


USAGE = {"choices": [], "usage": {"prompt_tokens": 7, "completion_tokens": 3}}


def final_of(api_type: ApiType, body: bytes, **options: Any) -> Completed | Failed:
    """The terminal event, identical for every split of the body."""
    finals = []
    for split, chunks in splits(body).items():
        events = read_all(new_reader(api_type, **options), chunks)
        final = events[-1]
        assert isinstance(final, Completed | Failed), (split, final)
        finals.append(final)
    assert all(f == finals[0] for f in finals)
    return finals[0]


def calls_of(final: Completed | Failed) -> list[tuple[str, str, str]]:
    assert isinstance(final, Completed), final
    return [(i.call_id, i.name, i.arguments) for i in final.items if isinstance(i, ToolCall)]


# ---- tool arguments sent as a JSON object (llama.cpp, TGI, Ollama through LiteLLM)


def test_chat_object_arguments_are_serialised() -> None:
    body = chat(
        delta(
            tool_calls=[
                {
                    "index": 0,
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "weather", "arguments": {"city": "Paris", "n": 1}},
                }
            ]
        ),
        finish(),
    )
    (call,) = calls_of(final_of("openai_chat_completions", body))
    assert call[:2] == ("c1", "weather")
    assert json.loads(call[2]) == {"city": "Paris", "n": 1}


def test_responses_object_arguments_are_serialised_not_emptied() -> None:
    item = {
        "type": "function_call",
        "id": "fc_1",
        "call_id": "call_1",
        "name": "weather",
        "arguments": {"city": "Paris"},
        "status": "completed",
    }
    body = (
        item_done(item)
        + b'data: {"type":"response.completed","response":{"id":"r1","status":"completed"}}\n\n'
    )
    (call,) = calls_of(final_of("openai_responses", body))
    assert json.loads(call[2]) == {"city": "Paris"}


# ---- a first fragment without a name (vLLM, LM Studio, llama.cpp, DeepInfra)


@pytest.mark.parametrize("nameless", [{}, {"name": None}, {"name": ""}])
def test_nameless_first_fragment_waits_for_its_name(nameless: dict[str, Any]) -> None:
    body = chat(
        delta(tool_calls=[{"index": 0, "id": "c1", "function": {**nameless, "arguments": ""}}]),
        delta(tool_calls=[{"index": 0, "function": {"name": "look"}}]),
        delta(tool_calls=[{"index": 0, "function": {"arguments": '{"r":'}}]),
        delta(tool_calls=[{"index": 0, "function": {"arguments": "2}"}}]),
        finish(),
    )
    assert calls_of(final_of("openai_chat_completions", body)) == [("c1", "look", '{"r":2}')]


def test_arguments_before_the_name_are_announced_once_the_name_arrives() -> None:
    body = chat(
        delta(tool_calls=[{"index": 0, "id": "c1", "function": {"arguments": '{"a"'}}]),
        delta(tool_calls=[{"index": 0, "function": {"name": "look", "arguments": ":1}"}}]),
        finish(),
    )
    events = read_all(ChatCompletionsReader(), [body])
    begun = [e for e in events if isinstance(e, ToolCallBegun)]
    pieces = [e.delta for e in events if isinstance(e, ToolCallArgumentsDelta)]
    assert begun == [ToolCallBegun("c1", "look")] and "".join(pieces) == '{"a":1}'


def test_a_call_that_never_gets_a_name_is_a_stream_error() -> None:
    body = chat(delta(tool_calls=[{"index": 0, "id": "c1", "function": {"arguments": "{}"}}]))
    with pytest.raises(ProviderStreamError, match="never received its name"):
        read_all(ChatCompletionsReader(), [body])


# ---- parallel calls all at index 0 (Ollama, SGLang, LiteLLM)


def test_new_id_at_an_occupied_index_starts_a_new_call() -> None:
    def call(call_id: str, city: str) -> dict[str, Any]:
        function = {"name": "weather", "arguments": json.dumps({"city": city})}
        return {"index": 0, "id": call_id, "type": "function", "function": function}

    body = chat(
        delta(tool_calls=[call("a", "Paris")]), delta(tool_calls=[call("b", "Tokyo")]), finish()
    )
    assert calls_of(final_of("openai_chat_completions", body)) == [
        ("a", "weather", '{"city": "Paris"}'),
        ("b", "weather", '{"city": "Tokyo"}'),
    ]


def test_fresh_ids_without_names_keep_extending_the_call() -> None:
    """Kimi sends a new id with every argument fragment and the name only once."""
    body = chat(
        delta(tool_calls=[{"index": 0, "id": "k0", "function": {"name": "look", "arguments": ""}}]),
        delta(tool_calls=[{"index": 0, "id": "k1", "function": {"arguments": '{"x"'}}]),
        delta(tool_calls=[{"index": 0, "id": "k2", "function": {"arguments": ":1}"}}]),
        finish(),
    )
    assert calls_of(final_of("openai_chat_completions", body)) == [("k0", "look", '{"x":1}')]


def test_repeated_id_and_name_fragments_keep_merging() -> None:
    fragment = {"index": 0, "id": "c1", "type": "function"}
    body = chat(
        delta(tool_calls=[{**fragment, "function": {"name": "look", "arguments": '{"x"'}}]),
        delta(tool_calls=[{**fragment, "function": {"name": "look", "arguments": ":1}"}}]),
        finish(),
    )
    assert calls_of(final_of("openai_chat_completions", body)) == [("c1", "look", '{"x":1}')]


# ---- how a stream ends


def test_finish_reason_and_usage_without_done_complete_at_end_of_body() -> None:
    body = chat(delta(content="Hi"), finish("stop"), USAGE, done=False)
    final = final_of("openai_chat_completions", body)
    assert isinstance(final, Completed) and final.usage is not None
    assert final.usage.input_tokens == 7 and final.finish_reason == "stop"


def test_done_with_trailing_whitespace_ends_the_stream() -> None:
    body = chat(delta(content="Hi"), finish("stop"), done=False) + b"data: [DONE] \t\n\n"
    reader = ChatCompletionsReader()
    events = reader.feed(body)
    assert reader.finished and isinstance(events[-1], Completed)


def test_cr_only_line_endings_dispatch_without_waiting_for_more_bytes() -> None:
    decoder = SSEDecoder()
    events = decoder.feed(b'data: {"a":1}\r\r')
    assert [(e.event, e.data) for e in events] == [("", b'{"a":1}')]
    # The LF of a CRLF split across chunks is not a second blank line.
    assert decoder.feed(b"\ndata: 2\r\n\r\n")[0].data == b"2"


def test_cr_only_stream_completes_as_soon_as_done_arrives() -> None:
    body = chat(delta(content="Hi"), finish("stop")).replace(b"\n", b"\r")
    reader = ChatCompletionsReader()
    events = reader.feed(body)
    assert reader.finished and isinstance(events[-1], Completed)


def test_finish_reason_error_without_an_error_object_is_a_failure() -> None:
    final = final_of("openai_chat_completions", chat(delta(content="par"), finish("error")))
    assert isinstance(final, Failed) and final.retryable and final.failure_class == "busy"


def test_incomplete_responses_item_with_cut_arguments_is_a_failure() -> None:
    item = {
        "type": "function_call",
        "id": "fc_1",
        "call_id": "call_1",
        "name": "weather",
        "arguments": '{"city": "Par',
        "status": "incomplete",
    }
    body = (
        item_done(item)
        + b'data: {"type":"response.completed","response":{"status":"completed"}}\n\n'
    )
    final = final_of("openai_responses", body)
    assert isinstance(final, Failed) and not final.retryable
    assert final.failure_class == "incomplete" and "cut off" in final.reason


# ---- mid-stream errors relayed by gateways


@pytest.mark.parametrize(
    "error",
    [
        {"message": "upstream failed", "type": None, "param": None, "code": "500"},  # LiteLLM
        {"code": 502, "message": "Provider returned error"},  # OpenRouter
        {"code": 500.0, "message": "upstream failed"},
        {"code": " Server_Error ", "message": "boom"},
    ],
)
def test_relayed_mid_stream_server_errors_are_retryable(error: dict[str, Any]) -> None:
    body = chat(delta(content="Hi"), {"error": error, "choices": []}, done=False)
    final = final_of("openai_chat_completions", body)
    assert isinstance(final, Failed) and final.retryable and final.failure_class == "busy"


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        ({"code": "insufficient_quota", "message": "You exceeded your current quota"}, "quota"),
        ({"code": 401, "message": "bad key"}, "misconfigured"),
        ({"code": "context_length_exceeded", "message": "too long"}, "too_long"),
    ],
)
def test_mid_stream_errors_that_will_not_heal_are_not_retryable(
    error: dict[str, Any], kind: str
) -> None:
    final = final_of("openai_chat_completions", chat({"error": error}, done=False))
    assert isinstance(final, Failed) and not final.retryable and final.failure_class == kind


def test_responses_error_event_with_a_numeric_code_is_retryable() -> None:
    body = b'data: {"type":"error","code":503,"message":"overloaded"}\n\n'
    final = final_of("openai_responses", body)
    assert isinstance(final, Failed) and final.retryable


# ---- interleaved reasoning in vLLM's field


def test_reasoning_is_an_accepted_interleaved_field_and_is_marked_for_replay() -> None:
    assert InterleavedConfig.model_validate({"field": "reasoning"}).field == "reasoning"
    body = chat(delta(reasoning="think"), delta(content="Hi"), finish("stop"))
    final = final_of("openai_chat_completions", body, interleaved="reasoning")
    assert isinstance(final, Completed)
    (reasoning,) = [i for i in final.items if isinstance(i, Reasoning)]
    assert reasoning.text == "think" and reasoning.opaque == {"field": "reasoning"}


# ---- every unexpected shape is a stream error, never a TypeError


@pytest.mark.parametrize(
    "chunk",
    [
        delta(content=5),
        delta(content=["part"]),
        delta(tool_calls="not a list"),
        delta(tool_calls=[["not", "an", "object"]]),
        delta(tool_calls=[{"index": 0, "id": "c", "function": "look"}]),
        delta(tool_calls=[{"index": 0, "id": "c", "function": {"name": "x", "arguments": 7}}]),
        delta(tool_calls=[{"index": 0, "id": 7, "function": {"name": "x"}}]),
        {"choices": {"delta": {}}},
        {"choices": ["x"]},
        {"choices": [], "usage": "lots"},
        {"choices": [], "usage": {"prompt_tokens": "many"}},
        {"choices": [{"delta": {}, "finish_reason": 3}]},
    ],
)
def test_chat_shapes_that_make_no_sense_are_stream_errors(chunk: dict[str, Any]) -> None:
    with pytest.raises(ProviderStreamError):
        read_all(ChatCompletionsReader(), [chat(chunk, finish("stop"))])


@pytest.mark.parametrize(
    "event",
    [
        {"type": "response.output_text.delta", "delta": 5},
        {"type": "response.output_text.delta"},
        {"type": "response.output_item.done", "item": {"type": "function_call", "call_id": 1}},
        {"type": "response.output_item.done", "item": {"type": "message", "content": 3}},
        {"type": "response.completed", "response": {"output": 5}},
        {"type": "response.completed", "response": {"usage": {"input_tokens": "x"}}},
        {"type": 5},
    ],
)
def test_responses_shapes_that_make_no_sense_are_stream_errors(event: dict[str, Any]) -> None:
    body = b"data: " + json.dumps(event).encode() + b"\n\n"
    events: list[StreamEvent] = []
    with pytest.raises(ProviderStreamError):
        events = read_all(ResponsesReader(), [body])
    assert events == []
