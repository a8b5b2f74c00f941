"""What a recording holds, read straight from its SSE text with plain json.

The client's assembled result is compared with these, so the expectations come from the
recordings themselves and not from the code under test.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from bridge.providers.items import ApiType

from .provider_replay_server import Interaction, load_recording, recordings_dir

STREAMS: tuple[tuple[str, int, ApiType], ...] = (
    ("pydantic-ai/test_run_stream_sync_streams_real_model", 0, "openai_chat_completions"),
    ("pydantic-ai/test_run_stream_sync_streams_real_model", 1, "openai_chat_completions"),
    ("pydantic-ai/test_deepseek_model_thinking_stream", 0, "openai_chat_completions"),
    ("pydantic-ai/test_tool_use_failed_error_streaming", 0, "openai_chat_completions"),
    ("pydantic-ai/test_tool_use_failed_error_streaming", 1, "openai_chat_completions"),
    ("pydantic-ai/test_tool_use_failed_error_streaming", 2, "openai_chat_completions"),
    ("pydantic-ai/test_openai_responses_streaming_usage", 0, "openai_responses"),
    ("pydantic-ai/test_openai_responses_thinking_part_iter", 0, "openai_responses"),
    ("pydantic-ai/test_deepseek_responses_text_stream", 0, "openai_responses"),
    ("llm/test_responses_tool_use_streaming", 0, "openai_responses"),
    ("llm/test_responses_tool_use_streaming", 1, "openai_responses"),
)


def interaction(name: str, index: int) -> Interaction:
    return load_recording(recordings_dir() / f"{name}.yaml")[index]


def data_payloads(body: bytes) -> list[tuple[str, Any]]:
    """(event name, parsed data) for every event of a recorded body; [DONE] as the string."""
    out: list[tuple[str, Any]] = []
    for block in body.decode("utf-8").split("\n\n"):
        name, data = "", []
        for line in block.split("\n"):
            if line.startswith("event:"):
                name = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].strip())
        if data:
            text = "\n".join(data)
            out.append((name, text if text == "[DONE]" else json.loads(text)))
    return out


@dataclass
class Expected:
    text: str = ""
    reasoning: str = ""
    tool_calls: list[tuple[str, str, str]] = field(default_factory=list)  # id, name, arguments
    usage: dict[str, int] | None = None
    error_code: str | None = None
    encrypted: list[str] = field(default_factory=list)
    text_deltas: str = ""
    reasoning_deltas: str = ""


def expected_chat(body: bytes) -> Expected:
    expected = Expected()
    calls: dict[int, list[str]] = {}
    for name, payload in data_payloads(body):
        if payload == "[DONE]":
            continue
        if name == "error" or "error" in payload:
            expected.error_code = payload["error"]["code"]
            break
        if payload.get("usage"):
            usage = payload["usage"]
            expected.usage = {
                "input_tokens": usage["prompt_tokens"],
                "output_tokens": usage["completion_tokens"],
            }
        for choice in payload.get("choices") or []:
            delta = choice.get("delta") or {}
            expected.text += delta.get("content") or ""
            expected.reasoning += delta.get("reasoning_content") or delta.get("reasoning") or ""
            for fragment in delta.get("tool_calls") or []:
                slot = calls.setdefault(fragment["index"], ["", "", ""])
                slot[0] = slot[0] or fragment.get("id", "")
                slot[1] = slot[1] or fragment.get("function", {}).get("name", "")
                slot[2] += fragment.get("function", {}).get("arguments") or ""
    expected.tool_calls = [tuple(calls[i]) for i in sorted(calls)]  # type: ignore[misc]
    expected.text_deltas, expected.reasoning_deltas = expected.text, expected.reasoning
    return expected


def expected_responses(body: bytes) -> Expected:
    expected = Expected()
    for _, payload in data_payloads(body):
        kind = payload["type"]
        if kind == "response.output_text.delta":
            expected.text_deltas += payload["delta"]
        elif kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
            expected.reasoning_deltas += payload["delta"]
        elif kind == "response.output_item.done" and payload["item"]["type"] == "reasoning":
            if payload["item"].get("encrypted_content"):
                expected.encrypted.append(payload["item"]["encrypted_content"])
        elif kind == "response.completed":
            response = payload["response"]
            expected.usage = {
                "input_tokens": response["usage"]["input_tokens"],
                "output_tokens": response["usage"]["output_tokens"],
            }
            for item in response["output"]:
                if item["type"] == "message":
                    expected.text += "".join(p["text"] for p in item["content"])
                elif item["type"] == "function_call":
                    expected.tool_calls.append((item["call_id"], item["name"], item["arguments"]))
                elif item["type"] == "reasoning":
                    summary = [p["text"] for p in item.get("summary") or []]
                    content = [p["text"] for p in item.get("content") or []]
                    expected.reasoning += "\n\n".join(summary) if summary else "".join(content)
    return expected


def expected_for(api_type: ApiType, body: bytes) -> Expected:
    return (
        expected_chat(body) if api_type == "openai_chat_completions" else expected_responses(body)
    )
