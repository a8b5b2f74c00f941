"""A sans-I/O reader of a streamed Chat Completions response: bytes in, stream events out.

Tool calls arrive in fragments keyed by ``index``: the id and name once, the arguments in
pieces. Reasoning arrives as ``delta.reasoning_content`` (DeepSeek and others) or
``delta.reasoning`` (Groq); it is always shown, and kept for replay only when the model has an
interleaved field. Usage comes in a last chunk with empty ``choices``; ``[DONE]`` ends the
stream. An error object can arrive mid-stream, with or without an ``event: error`` line.
"""

from __future__ import annotations

from typing import Any

from bridge.providers.errors import ProviderResponseError, ProviderStreamError, clip
from bridge.providers.events import (
    Completed,
    Failed,
    ReasoningDelta,
    StreamEvent,
    TextDelta,
    ToolCallArgumentsDelta,
    ToolCallBegun,
    ToolCallDone,
    Usage,
)
from bridge.providers.items import AssistantText, Reasoning, ToolCall
from bridge.providers.jsonfast import parse_json
from bridge.providers.sse import SSEDecoder

PROTOCOL = "openai_chat_completions"
_INCOMPLETE_REASONS = frozenset({"length", "content_filter"})
_RETRYABLE_ERROR_CODES = frozenset({"server_error", "rate_limit_exceeded", "overloaded"})


class _ToolCallParts:
    __slots__ = ("call_id", "name", "arguments")

    def __init__(self, call_id: str, name: str) -> None:
        self.call_id = call_id
        self.name = name
        self.arguments: list[str] = []


def error_from_body(body: Any) -> ProviderResponseError:
    """The error a provider reported as ``{"error": {...}}`` (or a bare string)."""
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict):
        return ProviderResponseError(clip(str(error or "unknown error")), retryable=True)
    code = error.get("code") or error.get("type")
    status = error.get("status_code")
    status = status if isinstance(status, int) else None
    retryable = (status is not None and status >= 500) or code in _RETRYABLE_ERROR_CODES
    message = error.get("message")
    return ProviderResponseError(
        clip(message if isinstance(message, str) else "provider error"),
        code=str(code) if code is not None else None,
        status=status,
        retryable=retryable,
    )


def usage_from(raw: dict[str, Any]) -> Usage:
    prompt_details = raw.get("prompt_tokens_details") or {}
    completion_details = raw.get("completion_tokens_details") or {}
    return Usage(
        input_tokens=int(raw.get("prompt_tokens") or 0),
        output_tokens=int(raw.get("completion_tokens") or 0),
        reasoning_tokens=int(completion_details.get("reasoning_tokens") or 0),
        cached_input_tokens=int(prompt_details.get("cached_tokens") or 0),
    )


class ChatCompletionsReader:
    """Feed it the response body in any chunks; it returns events, ending with one terminal."""

    def __init__(self, *, interleaved_field: str | None = None) -> None:
        self._sse = SSEDecoder()
        self._interleaved_field = interleaved_field
        self._reasoning_field: str | None = None
        self._text: list[str] = []
        self._reasoning: list[str] = []
        self._calls: dict[int, _ToolCallParts] = {}
        self._calls_done = False
        self._finish_reason: str | None = None
        self._usage: Usage | None = None
        self._response_id: str | None = None
        self.finished = False

    def feed(self, chunk: bytes) -> list[StreamEvent]:
        out: list[StreamEvent] = []
        if self.finished:
            return out
        for event in self._sse.feed(chunk):
            self._handle(event.event, event.data, out)
            if self.finished:
                break
        return out

    def close(self) -> list[StreamEvent]:
        """The body ended; without ``[DONE]`` the response is incomplete."""
        out: list[StreamEvent] = []
        if self.finished:
            return out
        for event in self._sse.close():
            self._handle(event.event, event.data, out)
            if self.finished:
                return out
        raise ProviderStreamError("stream ended before [DONE]")

    def _handle(self, name: str, data: bytes, out: list[StreamEvent]) -> None:
        if data == b"[DONE]":
            self._complete(out)
            return
        try:
            chunk = parse_json(data)
        except ValueError as exc:
            raise ProviderStreamError(
                f"data line is not JSON (near line {self._sse.lines_read})"
            ) from exc
        if not isinstance(chunk, dict):
            raise ProviderStreamError(
                f"data is not a JSON object (near line {self._sse.lines_read})"
            )
        if name == "error" or "error" in chunk:
            error = error_from_body(chunk)
            out.append(Failed(reason=str(error), retryable=error.retryable, error=error))
            self.finished = True
            return
        if self._response_id is None:
            self._response_id = chunk.get("id")
        usage = chunk.get("usage")
        if usage:
            self._usage = usage_from(usage)
        choices = chunk.get("choices")
        if choices:
            self._choice(choices[0], out)

    def _choice(self, choice: dict[str, Any], out: list[StreamEvent]) -> None:
        delta = choice.get("delta")
        if delta:
            text = delta.get("content")
            if text:
                self._text.append(text)
                out.append(TextDelta(text))
            reasoning = delta.get("reasoning_content")
            if reasoning:
                self._reasoning_field = "reasoning_content"
            else:
                reasoning = delta.get("reasoning")
                if reasoning and self._reasoning_field is None:
                    self._reasoning_field = "reasoning"
            if reasoning:
                self._reasoning.append(reasoning)
                out.append(ReasoningDelta(reasoning))
            fragments = delta.get("tool_calls")
            if fragments:
                for fragment in fragments:
                    self._tool_fragment(fragment, out)
        finish = choice.get("finish_reason")
        if finish:
            self._finish_reason = finish
            self._finish_tool_calls(out)

    def _tool_fragment(self, fragment: dict[str, Any], out: list[StreamEvent]) -> None:
        function = fragment.get("function") or {}
        index = fragment.get("index")
        if not isinstance(index, int):
            index = self._index_without_one(fragment.get("id"))
        parts = self._calls.get(index)
        if parts is None:
            call_id = fragment.get("id")
            name = function.get("name")
            if not call_id or not name:
                raise ProviderStreamError(f"tool call {index} began without an id and a name")
            parts = self._calls[index] = _ToolCallParts(call_id, name)
            out.append(ToolCallBegun(call_id, name))
        arguments = function.get("arguments")
        if arguments:
            parts.arguments.append(arguments)
            out.append(ToolCallArgumentsDelta(parts.call_id, arguments))

    def _index_without_one(self, call_id: Any) -> int:
        """Some OpenAI-compatible servers leave ``index`` out: a new id starts a new call, a
        fragment without an id continues the latest one."""
        if call_id:
            for index, parts in self._calls.items():
                if parts.call_id == call_id:
                    return index
            return len(self._calls)
        return max(self._calls, default=0)

    def _finish_tool_calls(self, out: list[StreamEvent]) -> None:
        if self._calls_done:
            return
        self._calls_done = True
        for index in sorted(self._calls):
            out.append(ToolCallDone(self._tool_call(self._calls[index])))

    @staticmethod
    def _tool_call(parts: _ToolCallParts) -> ToolCall:
        return ToolCall(call_id=parts.call_id, name=parts.name, arguments="".join(parts.arguments))

    def _replay_marker(self) -> dict[str, str] | None:
        """Which delta field the reasoning came in, when that is the interleaved field: the
        request builder replays it only then."""
        field = self._reasoning_field
        if field is not None and field == self._interleaved_field:
            return {"field": field}
        return None

    def _complete(self, out: list[StreamEvent]) -> None:
        self.finished = True
        if self._finish_reason in _INCOMPLETE_REASONS:
            out.append(
                Failed(reason=f"response incomplete: {self._finish_reason}", retryable=False)
            )
            return
        self._finish_tool_calls(out)
        items: list[AssistantText | Reasoning | ToolCall] = []
        if self._reasoning:
            items.append(
                Reasoning(
                    protocol=PROTOCOL,
                    text="".join(self._reasoning),
                    opaque=self._replay_marker(),
                )
            )
        if self._text:
            items.append(AssistantText(text="".join(self._text)))
        items.extend(self._tool_call(self._calls[i]) for i in sorted(self._calls))
        out.append(
            Completed(
                items=tuple(items),
                usage=self._usage,
                finish_reason=self._finish_reason,
                response_id=self._response_id,
            )
        )
